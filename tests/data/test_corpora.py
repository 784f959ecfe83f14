"""The Opusparcus layout: ranked training files (top N) and annotated dev/test files."""

from __future__ import annotations

import bz2
import shutil

import pytest

from psp_st.data import load_opusparcus


def test_opusparcus_train_reads_the_ranked_layout(fixture_path, cache_dir):
    pairs = load_opusparcus(fixture_path("en-train.txt"), cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "score"]
    assert pairs[0] == {"sentence1": "Get up , Sam .", "sentence2": "On your feet , Sam .", "score": 97.2}


def test_opusparcus_top_n_is_the_head_of_the_ranking(fixture_path, cache_dir):
    pairs = load_opusparcus(fixture_path("en-train.txt"), top_n=2, cache_dir=cache_dir)
    assert pairs["sentence1"][:] == ["Get up , Sam .", "I am sorry ."]


@pytest.mark.filterwarnings("error::FutureWarning")  # N6-2: datasets' sort warned on pyarrow >= 25
def test_opusparcus_top_n_sorts_unranked_input(fixture_path, tmp_path, cache_dir):
    lines = fixture_path("en-train.txt").read_text().splitlines()
    shuffled = tmp_path / "en-train.txt"
    shuffled.write_text("\n".join([lines[3], lines[0], lines[4], lines[1], lines[2]]) + "\n")
    pairs = load_opusparcus(shuffled, top_n=2, cache_dir=cache_dir)
    assert pairs["score"][:] == [97.2, 80.5]


def test_opusparcus_compressed_train_streams_top_n(fixture_path, tmp_path):
    target = tmp_path / "en-train.txt.bz2"
    target.write_bytes(bz2.compress(fixture_path("en-train.txt").read_bytes()))
    pairs = load_opusparcus(target, top_n=3, streaming=True)
    assert [row["score"] for row in pairs] == [97.2, 80.5, 51.0]


def test_opusparcus_dev_keeps_annotation(fixture_path, cache_dir):
    every = load_opusparcus(fixture_path("en-dev.txt"), cache_dir=cache_dir)
    assert every["score"][:] == [4.0, 1.0, 3.5, 1.5, 3.0]


def test_opusparcus_dev_scores_outside_1_to_4_raise(fixture_path, cache_dir):
    with pytest.raises(ValueError, match=r"annotation scores must be in \[1.0, 4.0\]; row 1"):
        load_opusparcus(fixture_path("en-train.txt"), split="dev", cache_dir=cache_dir)


def test_opusparcus_split_not_in_the_name_says_how_to_name_it(fixture_path, tmp_path):
    shutil.copy(fixture_path("en-dev.txt"), tmp_path / "pairs.tsv")
    with pytest.raises(ValueError, match="it must contain 'train', 'dev' or 'test'"):
        load_opusparcus(tmp_path / "pairs.tsv")


def test_opusparcus_top_n_on_dev_is_refused(fixture_path):
    with pytest.raises(ValueError, match="top_n"):
        load_opusparcus(fixture_path("en-dev.txt"), top_n=2)
