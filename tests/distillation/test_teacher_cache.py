"""The teacher cache: keyed by teacher and sentence text, written in shards, never encoding a sentence twice."""

from __future__ import annotations

import json

import numpy as np
import pytest

from psp_st.distillation.sentences import candidates, sample
from psp_st.distillation.teacher_cache import FORMAT_VERSION, META_FILE, cache_folder, teacher_vectors

SENTENCES = [f"sentence number {i}" for i in range(10)]


def shard_names(tmp_path, teacher="stub"):
    return sorted(p.name for p in cache_folder(tmp_path, teacher).iterdir() if p.name.startswith("shard-"))


def test_vectors_match_the_teacher_row_by_row(tmp_path, stub_teacher):
    teacher = stub_teacher()
    dataset = teacher_vectors(SENTENCES, "stub", tmp_path, teacher=teacher, shard_size=4, show_progress_bar=False)
    assert dataset["sentence"] == SENTENCES
    expected = np.stack([teacher.vector(text) for text in SENTENCES])
    np.testing.assert_allclose(np.asarray(dataset.with_format("numpy")["embedding"]), expected, rtol=1e-6)
    assert [len(call) for call in teacher.calls] == [4, 4, 2]  # one encode call per shard


def test_interrupted_pass_keeps_finished_shards(tmp_path, stub_teacher):
    interrupted = stub_teacher(fail_after=1)  # encodes one shard, then "Ctrl-C"
    with pytest.raises(KeyboardInterrupt):
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=interrupted, shard_size=4, show_progress_bar=False)
    assert len(shard_names(tmp_path)) == 1
    assert not [name for name in shard_names(tmp_path) if name.endswith(".tmp")]  # no half-written shard

    resumed = stub_teacher()
    dataset = teacher_vectors(SENTENCES, "stub", tmp_path, teacher=resumed, shard_size=4, show_progress_bar=False)
    assert resumed.calls == [
        SENTENCES[:1],
        SENTENCES[4:8],
        SENTENCES[8:],
    ]  # first shard not encoded again ([:1]: C13-1)
    assert dataset["sentence"] == SENTENCES


def test_cached_sentences_never_load_the_teacher(tmp_path, stub_teacher, monkeypatch):
    from psp_st.modules import teacher_init as teacher_module

    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), shard_size=4, show_progress_bar=False)

    def load(name):
        raise AssertionError("the teacher was loaded although every sentence is cached")

    monkeypatch.setattr(teacher_module, "load_teacher", load)
    subset = SENTENCES[7:2:-1]  # another order and size: still served from the cache
    dataset = teacher_vectors(subset, "stub", tmp_path, show_progress_bar=False)
    assert dataset["sentence"] == subset


def test_a_larger_sample_encodes_only_the_new_sentences(tmp_path, stub_teacher):
    teacher = stub_teacher()
    teacher_vectors(SENTENCES[:6], "stub", tmp_path, teacher=teacher, show_progress_bar=False)
    dataset = teacher_vectors(SENTENCES + SENTENCES[:2], "stub", tmp_path, teacher=teacher, show_progress_bar=False)
    assert teacher.calls == [SENTENCES[:6], SENTENCES[:1], SENTENCES[6:]]  # [:1]: C13-1's check of the teacher
    assert dataset["sentence"] == SENTENCES + SENTENCES[:2]
    expected = np.stack([teacher.vector(text) for text in SENTENCES + SENTENCES[:2]])
    np.testing.assert_allclose(np.asarray(dataset.with_format("numpy")["embedding"]), expected, rtol=1e-6)


def test_teachers_have_separate_caches(tmp_path, stub_teacher):
    teacher_vectors(SENTENCES, "teacher-a", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    other = stub_teacher(dim=4)
    dataset = teacher_vectors(SENTENCES, "teacher-b", tmp_path, teacher=other, show_progress_bar=False)
    assert other.calls == [SENTENCES]
    assert np.asarray(dataset.with_format("numpy")["embedding"]).shape == (10, 4)


def test_other_layout_version_is_a_clear_error(tmp_path, stub_teacher):
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    meta = cache_folder(tmp_path, "stub") / META_FILE
    meta.write_text(json.dumps({"format_version": FORMAT_VERSION + 1}))
    with pytest.raises(ValueError, match="format_version"):
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)


def test_a_cache_of_a_newer_psp_st_says_to_upgrade_not_to_delete_it(tmp_path, stub_teacher):
    """W4 (audit 7): deleting a newer psp-st's cache (shared with that install) was the only advice."""
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    (cache_folder(tmp_path, "stub") / META_FILE).write_text(json.dumps({"format_version": FORMAT_VERSION + 1}))
    with pytest.raises(ValueError, match="written by a newer psp-st: upgrade psp-st") as error:
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    assert "delete the folder" not in str(error.value)


def test_a_metadata_file_that_is_not_a_json_object_is_named(tmp_path, stub_teacher):  # S13-6
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    (cache_folder(tmp_path, "stub") / META_FILE).write_text("[]")
    with pytest.raises(ValueError, match=rf"{META_FILE} is not a JSON object; delete the folder"):
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)


def test_damaged_shard_is_named(tmp_path, stub_teacher):
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    shard = cache_folder(tmp_path, "stub") / shard_names(tmp_path)[0]
    for file in shard.glob("*.json"):
        file.write_text("{not json")
    with pytest.raises(ValueError, match=shard.name):
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)


def test_non_string_sentence_is_a_type_error(tmp_path, stub_teacher):
    with pytest.raises(TypeError, match="sentence 1"):
        teacher_vectors(["a", 3], "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)


def test_sample_is_nested_across_limits():
    texts = [f"t{i}" for i in range(100)]
    small, large = sample(texts, 10, seed=3), sample(texts, 40, seed=3)
    assert set(small) <= set(large)
    assert small == sorted(small, key=texts.index)  # original order kept
    assert sample(texts, None, seed=3) == texts


def test_candidates_dedup_length_bound_and_exclusion_by_text_key():
    from psp_st.data.filters import text_key

    texts = ["A dog runs.", "Two cats sleep.", "two cats sleep", "one two three four five", "!!!"]
    # the dog is evaluation text (up to case and punctuation), the second cats line repeats the first, the count
    # to five has 5 words > 4, "!!!" has no word
    assert candidates(texts, exclude={text_key("a dog runs")}, max_words=4) == ["Two cats sleep."]


def test_cache_of_another_teacher_with_the_same_folder_name_is_refused(tmp_path, stub_teacher):
    teacher_vectors(["a dog"], "runs/a/final", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    with pytest.raises(ValueError, match=r"holds the vectors of teacher 'runs/a/final', not 'runs/b/final'"):
        teacher_vectors(["a dog"], "runs/b/final", tmp_path, teacher=stub_teacher(), show_progress_bar=False)


def test_a_single_sentence_string_is_refused(tmp_path, stub_teacher):
    """AP16: "a dog" was embedded as five one-character sentences (and cached so)."""
    with pytest.raises(TypeError, match="got a single str: wrap it in a list"):
        teacher_vectors("a dog", "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)


def test_a_warm_lookup_reads_the_cached_sentences_in_one_arrow_read(tmp_path, stub_teacher, monkeypatch):  # F7-2
    """Iterating datasets' lazy ``Column`` costs a Python call per cached row: ~2 s per lookup at 160k sentences."""
    from datasets.arrow_dataset import Column

    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), shard_size=4, show_progress_bar=False)

    def refuse(self):
        raise AssertionError("the cache iterated a datasets Column row by row")

    monkeypatch.setattr(Column, "__iter__", refuse)
    dataset = teacher_vectors(SENTENCES[:3], "stub", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    assert dataset["sentence"][:] == SENTENCES[:3]


def test_new_sentences_of_another_model_under_the_same_name_are_refused(tmp_path, stub_teacher):  # C13-1
    """A teacher folder replaced in place: the cache mixed two models' vectors (of two sizes: a crash later)."""
    teacher_vectors(SENTENCES[:6], "runs/teacher", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    with pytest.raises(ValueError, match=r"no longer gives .*8 dimensions cached, 16 now.*delete the folder"):
        teacher_vectors(SENTENCES, "runs/teacher", tmp_path, teacher=stub_teacher(dim=16), show_progress_bar=False)


def test_new_sentences_of_another_model_of_the_same_size_are_refused(tmp_path, stub_teacher):  # C13-1
    retrained = stub_teacher()
    retrained.vector = lambda text: -stub_teacher().vector(text)  # type: ignore[method-assign]
    teacher_vectors(SENTENCES[:6], "runs/teacher", tmp_path, teacher=stub_teacher(), show_progress_bar=False)
    with pytest.raises(ValueError, match=r"no longer gives .*values differ by up to"):
        teacher_vectors(SENTENCES, "runs/teacher", tmp_path, teacher=retrained, show_progress_bar=False)


def test_candidates_keep_a_sentence_of_exactly_max_words():
    assert candidates(["one two three four"], exclude=set(), max_words=4) == ["one two three four"]


def test_a_later_source_never_repeats_a_sentence_an_earlier_one_chose(tmp_path):
    import pandas as pd

    from psp_st.distillation.sentences import distillation_sentences

    for name, texts in (("one", ["a dog runs", "a cat sleeps"]), ("two", ["a cat sleeps", "a bird sings"])):
        pd.DataFrame({"sentence": texts}).to_parquet(tmp_path / f"{name}.parquet")
    sources = [str(tmp_path / "one.parquet"), str(tmp_path / "two.parquet")]
    (_, first, _), (_, second, _) = distillation_sentences(sources)
    assert first == ["a dog runs", "a cat sleeps"] and second == ["a bird sings"]
