"""Morfessor Baseline segmentation: training, morph vocabulary, text-format saving (no pickle)."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("morfessor")

from psp_st.tokenization.morfessor import MorfessorSegmenter, MorfessorTokenizer  # noqa: E402

FINNISH = [
    "talossa on kissa",
    "taloissa on kissoja",
    "kissat istuvat talossa",
    "koirat juoksevat talolle",
    "koira juoksee taloon",
    "taloon tulee kissoja ja koiria",
    "kissalla on talo",
    "koiralla on talot",
] * 3


@pytest.fixture(scope="module")
def finnish_tokenizer() -> MorfessorTokenizer:
    return MorfessorTokenizer.train(FINNISH, count_modifier="types")


def test_segmentation_reduces_the_vocabulary(finnish_tokenizer):
    words = {word for text in FINNISH for word in text.split()}
    assert finnish_tokenizer.vocab_size - 1 < len(words)
    for word in words:  # morphs always spell the word
        assert "".join(finnish_tokenizer.segmenter.segment(word)) == word


def test_unseen_words_are_segmented_with_viterbi(finnish_tokenizer):
    morphs = finnish_tokenizer.tokenize(["Koiratalossa!"])[0]
    assert "".join(morphs) == "koiratalossa!" and len(morphs) >= 2


def test_saved_as_morfessor_text_and_reloaded_identically(finnish_tokenizer, tmp_path):
    import morfessor

    finnish_tokenizer.save(tmp_path)
    text = (tmp_path / "morfessor_segmentation.txt").read_text(encoding="utf-8")
    assert " + " in text  # Morfessor's own construction separator
    io = morfessor.MorfessorIO(encoding="utf-8")  # the morfessor tools read it back
    assert len(list(io.read_segmentation_file(str(tmp_path / "morfessor_segmentation.txt")))) > 5
    loaded = MorfessorTokenizer.load(tmp_path)
    probe = FINNISH + ["koiratalossa kissoineen", "täysin uusi lause"]
    assert loaded.encode(probe) == finnish_tokenizer.encode(probe)
    assert loaded.vocab.tokens == finnish_tokenizer.vocab.tokens


def test_missing_or_broken_segmentation_file(finnish_tokenizer, tmp_path):
    finnish_tokenizer.save(tmp_path)
    (tmp_path / "morfessor_segmentation.txt").write_text("# header\n3 talo + ssa\nnot-a-count xx\n")
    with pytest.raises(ValueError):
        MorfessorTokenizer.load(tmp_path)
    (tmp_path / "morfessor_segmentation.txt").unlink()
    with pytest.raises(FileNotFoundError, match="morfessor_segmentation"):
        MorfessorTokenizer.load(tmp_path)


def test_segmentation_must_spell_the_word():
    with pytest.raises(ValueError, match="bad Morfessor segmentation"):
        MorfessorSegmenter([(1, "talossa", ("talo", "sa"))])


def test_max_words_limits_training_and_long_words_are_chunked():
    segmenter = MorfessorSegmenter.train(Counter({"talossa": 5, "kissa": 3, "koira": 1}), max_words=2)
    assert {word for _, word, _ in segmenter.segmentations} == {"talossa", "kissa"}
    long_word = "a" * 200
    assert "".join(segmenter.segment(long_word)) == long_word


def test_a_segmentation_file_cut_at_a_line_is_refused(finnish_tokenizer, tmp_path):  # Z8-1
    finnish_tokenizer.save(tmp_path)
    path = tmp_path / "morfessor_segmentation.txt"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"morfessor_segmentation\.txt holds \d+ segmentations, vocab\.json \d+"):
        MorfessorTokenizer.load(tmp_path)


def test_a_word_with_a_separator_control_character_still_saves_loadably(tmp_path):  # Z8-6
    texts = ["talossa on kissa \x1f", "kissa\x1c talossa"] * 3  # "\x1c".."\x1f" are punctuation tokens to the words
    tokenizer = MorfessorTokenizer.train(texts, count_modifier="types")
    tokenizer.save(tmp_path)
    assert MorfessorTokenizer.load(tmp_path).encode(texts) == tokenizer.encode(texts)


def test_training_leaves_the_callers_random_stream_alone():  # E14-2
    import random

    random.seed(123)
    expected = random.random()
    random.seed(123)
    MorfessorSegmenter.train(Counter({"talossa": 5, "kissa": 3, "koira": 1}))
    assert random.random() == expected


def test_training_is_the_same_whatever_the_callers_random_state():  # E14-2: still seeded inside
    import random

    words = Counter(" ".join(FINNISH).split())
    random.seed(1)
    first = MorfessorSegmenter.train(words, count_modifier="types").segmentations
    random.seed(2)
    assert MorfessorSegmenter.train(words, count_modifier="types").segmentations == first
