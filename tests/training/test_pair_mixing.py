"""Per-source caps, weights and filters of the recipe's training pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psp_st.training.pairs import load_training_pairs, sample_rows


@pytest.fixture
def two_sources(tmp_path):
    big = pd.DataFrame(
        {"sentence1": [f"big left {i}" for i in range(100)], "sentence2": [f"big right {i}" for i in range(100)]}
    )
    small = pd.DataFrame(
        {"sentence1": [f"small left {i}" for i in range(10)], "sentence2": [f"small right {i}" for i in range(10)]}
    )
    big.to_parquet(tmp_path / "big.parquet")
    small.to_parquet(tmp_path / "small.parquet")
    return str(tmp_path / "big.parquet"), str(tmp_path / "small.parquet")


def test_cap_and_weight_counts_per_source(two_sources):
    big, small = two_sources
    counts: dict[str, int] = {}
    dataset = load_training_pairs(
        [{"path": big, "max_pairs": 30}, {"path": small, "weight": 2.5}], seed=1, counts=counts
    )
    assert counts == {big: 30, small: 25}
    assert len(dataset) == 55
    texts = dataset["sentence1"]
    assert sum(t.startswith("big") for t in texts) == 30
    small_rows = [t for t in texts if t.startswith("small")]
    assert sorted(set(small_rows)) == sorted(f"small left {i}" for i in range(10))  # every row at least twice
    assert all(small_rows.count(t) in (2, 3) for t in set(small_rows))


def test_subsampling_weight_and_plain_path(two_sources):
    big, small = two_sources
    counts: dict[str, int] = {}
    load_training_pairs([{"path": big, "weight": 0.25}, small], counts=counts)
    assert counts == {big: 25, small: 10}


def test_deterministic_in_the_seed(two_sources):
    big, _ = two_sources
    first = load_training_pairs([{"path": big, "max_pairs": 20}], seed=7)["sentence1"]
    again = load_training_pairs([{"path": big, "max_pairs": 20}], seed=7)["sentence1"]
    other = load_training_pairs([{"path": big, "max_pairs": 20}], seed=8)["sentence1"]
    assert first == again
    assert first != other


def test_sample_rows_by_hand():
    rows = sample_rows(4, weight=2.0, max_pairs=None, seed=0)
    np.testing.assert_array_equal(rows, [0, 0, 1, 1, 2, 2, 3, 3])
    assert len(sample_rows(10, weight=None, max_pairs=3, seed=0)) == 3
    np.testing.assert_array_equal(sample_rows(5, weight=None, max_pairs=None, seed=0), np.arange(5))


def test_filters_use_the_data_filters(tmp_path):
    frame = pd.DataFrame(
        {
            "sentence1": ["a man is playing a guitar on stage", "two dogs run"],
            "sentence2": ["a man is playing a guitar on stage tonight", "a pair of dogs is running"],
        }
    )
    frame.to_parquet(tmp_path / "f.parquet")
    counts: dict[str, int] = {}
    dataset = load_training_pairs([str(tmp_path / "f.parquet")], filters={"max_trigram_overlap": 0.7}, counts=counts)
    assert dataset["sentence1"] == ["two dogs run"]  # the near-copy is dropped
    both = load_training_pairs([{"path": str(tmp_path / "f.parquet"), "filters": {"min_length": 5}}])
    assert both["sentence1"] == ["a man is playing a guitar on stage"]


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"path": "x.parquet", "max_pairs": 0}, "max_pairs"),
        ({"path": "x.parquet", "weight": -1}, "weight"),
        ({"path": "x.parquet", "sample": 3}, "unknown"),
        ({"max_pairs": 3}, "needs 'path'"),
        ({"path": "x.parquet", "filters": {"min_words": 3}}, "unknown filter"),
    ],
)
def test_bad_entries_are_clear_errors(entry, message):
    with pytest.raises(ValueError, match=message):
        load_training_pairs([entry])
