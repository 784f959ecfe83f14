"""Each filter on hand-made pairs, as a Dataset step and (where it matters) as a streaming step."""

from __future__ import annotations

import math

import pytest

from psp_st.data import (
    ExactDedup,
    LengthFilter,
    Lowercase,
    ScoreRangeFilter,
    TrigramOverlapFilter,
    mean_length,
    trigram_overlap,
)
from psp_st.data.filters import text_key


def test_trigram_overlap_is_share_of_shorter_sides_trigrams():
    # shorter side "the cat sat on" has trigrams {the cat sat, cat sat on}; only "the cat sat" is in the other
    assert trigram_overlap("The cat sat on", "the cat sat down on the mat") == pytest.approx(0.5)
    assert trigram_overlap("a b c d", "a b c d") == 1.0
    assert trigram_overlap("a b c d", "w x y z") == 0.0


def test_trigram_overlap_ignores_case_and_punctuation():
    assert trigram_overlap("The dog runs fast.", "the dog runs fast !") == 1.0


def test_text_key_keeps_combining_marks_inside_words():
    # "the boy plays" / "the girl plays" differ only in vowel signs; an NFD accent is part of its word
    assert text_key("लड़का खेलता है") != text_key("लड़की खेलती है")
    assert text_key("nai\u0308ve cafe\u0301") == "nai\u0308ve cafe\u0301"


def test_trigram_overlap_short_sides_use_shorter_ngrams():
    # 2 words: bigrams; the shorter side's one bigram "good night" is in the other side (a whole-sequence
    # "trigram", as the teacher miner's removed copy counted it, would have given 0 and kept the near-copy)
    assert trigram_overlap("good night", "good night everyone") == 1.0
    assert trigram_overlap("hello", "goodbye my friend") == 0.0
    assert trigram_overlap("", "anything at all") == 0.0


def test_trigram_filter_drops_near_copies_keeps_rewrites(pairs_dataset):
    pairs = pairs_dataset(
        {
            "sentence1": ["a man is playing a guitar on stage", "a man is playing a guitar on stage"],
            "sentence2": ["a man is playing a guitar on the stage", "someone performs music with a guitar"],
        }
    )
    kept = TrigramOverlapFilter(max_overlap=0.7).apply(pairs)
    assert kept["sentence2"][:] == ["someone performs music with a guitar"]


def test_trigram_filter_threshold_is_inclusive(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["The cat sat on"], "sentence2": ["the cat sat down on the mat"]})  # 0.5
    assert len(TrigramOverlapFilter(max_overlap=0.5).apply(pairs)) == 1
    assert len(TrigramOverlapFilter(max_overlap=0.49).apply(pairs)) == 0


def test_length_filter_uses_mean_whitespace_length_inclusive(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a b", "a b c d", "a b c d e f g h"], "sentence2": ["c d", "e f", "i j"]})
    assert [mean_length(a, b) for a, b in zip(pairs["sentence1"], pairs["sentence2"], strict=True)] == [2, 3, 5]
    kept = LengthFilter(min_length=3, max_length=5).apply(pairs)
    assert kept["sentence1"][:] == ["a b c d", "a b c d e f g h"]


def test_score_filter_keeps_range_and_drops_missing_or_nan(pairs_dataset):
    pairs = pairs_dataset(
        {"sentence1": list("abcde"), "sentence2": list("vwxyz"), "score": [0.2, 0.5, 0.9, None, math.nan]}
    )
    kept = ScoreRangeFilter(min_score=0.5, max_score=0.9).apply(pairs)
    assert kept["sentence1"][:] == ["b", "c"]


def test_score_filter_without_score_column_names_it(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a"], "sentence2": ["b"]})
    with pytest.raises(ValueError, match=r"needs column\(s\) \['score'\]"):
        ScoreRangeFilter(min_score=0.5).apply(pairs)


def test_lowercase_lowers_both_sides_only(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["Hello World"], "sentence2": ["ÉTÉ Paris"], "group_id": ["ID-1"]})
    lowered = Lowercase().apply(pairs)
    assert lowered[0] == {"sentence1": "hello world", "sentence2": "été paris", "group_id": "ID-1"}


def test_dedup_keeps_first_occurrence_in_order(pairs_dataset):
    pairs = pairs_dataset(
        {
            "sentence1": ["a", "b", "a", "a", "b"],
            "sentence2": ["x", "y", "x", "z", "y"],
            "group_id": ["1", "2", "3", "4", "5"],
        }
    )
    kept = ExactDedup().apply(pairs)
    assert kept["group_id"][:] == ["1", "2", "4"]


def test_symmetric_dedup_treats_swapped_pair_as_duplicate(pairs_dataset):
    pairs = pairs_dataset({"sentence1": ["a", "x"], "sentence2": ["x", "a"]})
    assert len(ExactDedup().apply(pairs)) == 2
    assert len(ExactDedup(symmetric=True).apply(pairs)) == 1


def test_streaming_dedup_restarts_on_every_pass(pairs_dataset):
    stream = pairs_dataset({"sentence1": ["a", "a", "b"], "sentence2": ["x", "x", "y"]}).to_iterable_dataset()
    unique = ExactDedup().apply(stream)
    assert [row["sentence1"] for row in unique] == ["a", "b"]
    assert [row["sentence1"] for row in unique] == ["a", "b"]  # second epoch is not emptied by the first


def test_language_filter_keeps_expected_languages(pairs_dataset):
    from psp_st.data.language import LanguageFilter

    pairs = pairs_dataset(
        {
            "sentence1": ["Der Hund läuft schnell über die große Wiese.", "The weather is nice today, let us go out."],
            "sentence2": [
                "The dog runs quickly across the big meadow.",
                "Das Wetter ist heute schön, lass uns rausgehen.",
            ],
        }
    )
    kept = LanguageFilter(sentence1="de", sentence2="en").apply(pairs)
    assert kept["sentence2"][:] == ["The dog runs quickly across the big meadow."]


def test_language_filter_rejects_unknown_codes():
    from psp_st.data.language import LanguageFilter

    with pytest.raises(ValueError, match="unknown language code"):
        LanguageFilter(sentence1="xx-not-a-language")


@pytest.mark.parametrize(
    "make",
    [
        lambda: LengthFilter(min_length=math.nan),
        lambda: LengthFilter(max_length=math.nan),
        lambda: ScoreRangeFilter(min_score=math.nan),
        lambda: ScoreRangeFilter(max_score=math.nan),
    ],
)
def test_a_nan_bound_is_refused_not_a_filter_that_keeps_nothing(make):
    with pytest.raises(ValueError, match="must be numbers, got"):
        make()


def test_identical_filter_drops_a_pair_with_a_side_without_words():
    from psp_st.data.filters import IdenticalFilter

    batch = {"sentence1": ["!!!", "a dog runs"], "sentence2": ["a dog runs", "a cat sleeps"]}
    assert IdenticalFilter().keep(batch) == [False, True]


def test_exclude_texts_filter_drops_a_pair_by_its_second_side_too():
    from psp_st.data.filters import ExcludeTextsFilter

    batch = {"sentence1": ["a cat sleeps", "a cat sleeps"], "sentence2": ["A dog runs!", "a bird sings"]}
    assert ExcludeTextsFilter(frozenset({text_key("a dog runs")})).keep(batch) == [False, True]
