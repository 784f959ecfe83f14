"""The teacher cache: keyed by teacher and sentence list, written in shards, resumed without re-encoding."""

from __future__ import annotations

import numpy as np
import pytest

from psp_st.distillation.teacher_cache import cache_path, teacher_vectors

SENTENCES = [f"sentence number {i}" for i in range(10)]


def test_vectors_match_the_teacher_row_by_row(tmp_path, stub_teacher):
    teacher = stub_teacher()
    dataset = teacher_vectors(SENTENCES, "stub", tmp_path, teacher=teacher, shard_size=4, show_progress_bar=False)
    assert dataset["sentence"] == SENTENCES
    expected = np.stack([teacher.vector(text) for text in SENTENCES])
    np.testing.assert_allclose(np.asarray(dataset.with_format("numpy")["embedding"]), expected, rtol=1e-6)
    assert [len(call) for call in teacher.calls] == [4, 4, 2]  # one encode call per shard


def test_interrupted_pass_resumes_at_the_first_missing_shard(tmp_path, stub_teacher):
    interrupted = stub_teacher(fail_after=1)  # encodes one shard, then "Ctrl-C"
    with pytest.raises(KeyboardInterrupt):
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=interrupted, shard_size=4, show_progress_bar=False)
    folder = cache_path(tmp_path, "stub", "sentences", SENTENCES)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("shard-")) == ["shard-00000"]
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]  # no half-written shard left behind

    resumed = stub_teacher()
    dataset = teacher_vectors(SENTENCES, "stub", tmp_path, teacher=resumed, shard_size=4, show_progress_bar=False)
    assert resumed.calls == [SENTENCES[4:8], SENTENCES[8:]]  # the first shard is not encoded again
    assert dataset["sentence"] == SENTENCES


def test_finished_entry_never_loads_the_teacher(tmp_path, stub_teacher):
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), shard_size=4, show_progress_bar=False)

    def load(name):
        raise AssertionError("the teacher was loaded for a complete cache entry")

    dataset = teacher_vectors(SENTENCES, "stub", tmp_path, load=load, shard_size=4, show_progress_bar=False)
    assert len(dataset) == len(SENTENCES)


def test_key_depends_on_teacher_and_sentences(tmp_path):
    base = cache_path(tmp_path, "teacher-a", "corpus", SENTENCES)
    assert cache_path(tmp_path, "teacher-a", "corpus", list(SENTENCES)) == base
    assert cache_path(tmp_path, "teacher-b", "corpus", SENTENCES) != base
    assert cache_path(tmp_path, "teacher-a", "corpus", SENTENCES[:-1]) != base
    assert cache_path(tmp_path, "teacher-a", "corpus", SENTENCES[::-1]) != base


def test_other_sample_is_encoded_separately(tmp_path, stub_teacher):
    teacher = stub_teacher()
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=teacher, shard_size=4, show_progress_bar=False)
    teacher_vectors(SENTENCES[:3], "stub", tmp_path, teacher=teacher, shard_size=4, show_progress_bar=False)
    assert teacher.calls[-1] == SENTENCES[:3]


def test_changed_shard_size_is_a_clear_error(tmp_path, stub_teacher):
    teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), shard_size=4, show_progress_bar=False)
    with pytest.raises(ValueError, match="shard_size"):
        teacher_vectors(SENTENCES, "stub", tmp_path, teacher=stub_teacher(), shard_size=5, show_progress_bar=False)
