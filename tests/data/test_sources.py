"""A recipe's training pairs: per-source columns, exclusion, filters, weights and caps, and the one group-id rule."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from psp_st.data import load_training_pairs, pair_groups, sample_rows


@pytest.fixture
def two_sources(write_parquet):
    big = write_parquet(
        "big.parquet",
        {"sentence1": [f"big left {i}" for i in range(100)], "sentence2": [f"big right {i}" for i in range(100)]},
    )
    small = write_parquet(
        "small.parquet",
        {"sentence1": [f"small left {i}" for i in range(10)], "sentence2": [f"small right {i}" for i in range(10)]},
    )
    return str(big), str(small)


def test_group_ids_link_same_file_group_and_shared_sentences(write_parquet, tmp_path, cache_dir):
    write_parquet(
        "tp/a.parquet", {"sentence1": ["p", "q", "r"], "sentence2": ["p2", "q2", "r2"], "group_id": ["7", "7", "8"]}
    )
    write_parquet("tp/b.parquet", {"sentence1": ["s", "X"], "sentence2": ["s2", "t2"], "group_id": ["7", None]})
    write_parquet("tp/c.parquet", {"sentence1": ["x ", "y"], "sentence2": ["x1", "y1"]})
    pairs = load_training_pairs(str(tmp_path / "tp"), cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "group_id"]
    assert pairs.features["group_id"].dtype == "int64"
    # a: 7, 7, 8 | b: 7 is another file's group, None has none | c: "x " shares (lower-cased, stripped) "X" of b
    assert pairs["group_id"][:] == [0, 0, 1, 2, 3, 3, 4]


def test_shared_sentence_groups_can_be_turned_off(write_parquet, cache_dir):
    path = write_parquet("w.parquet", {"sentence1": ["same", "same"], "sentence2": ["a", "b"]})
    assert load_training_pairs(path, cache_dir=cache_dir)["group_id"][:] == [0, 0]
    assert load_training_pairs(path, shared_sentence_groups=False, cache_dir=cache_dir)["group_id"][:] == [0, 1]


def test_pair_groups_by_hand():
    # pairs 0 and 2 share sentence1 "a" (case and spaces ignored), 1 and 3 share key 5, 3 and 4 share sentence2
    # "z"; pair 5's sentence1 "w" is pair 4's sentence2 (other side: no link)
    groups = pair_groups(
        ["a", "c", "A ", "d", "e", "w"], ["b", "x", "y", "z", "Z", "v"], np.array([-1, 5, -1, 5, -1, -1])
    )
    assert groups.tolist() == [0, 1, 0, 1, 1, 2]


def test_cap_and_weight_counts_per_source(two_sources, cache_dir):
    big, small = two_sources
    counts: dict[str, int] = {}
    pairs = load_training_pairs(
        [{"path": big, "max_pairs": 30}, {"path": small, "weight": 2.5}], seed=1, counts=counts, cache_dir=cache_dir
    )
    assert counts == {big: 30, small: 25}
    texts = pairs["sentence1"]
    assert sum(text.startswith("big") for text in texts) == 30
    small_rows = [text for text in texts if text.startswith("small")]
    assert sorted(set(small_rows)) == sorted(f"small left {i}" for i in range(10))  # every row at least twice
    assert all(small_rows.count(text) in (2, 3) for text in set(small_rows))


def test_global_cap_counts_what_is_left_per_source(two_sources, cache_dir):
    big, small = two_sources
    counts: dict[str, int] = {}
    pairs = load_training_pairs([big, small], max_pairs=11, counts=counts, cache_dir=cache_dir)
    assert len(pairs) == 11 and sum(counts.values()) == 11
    assert counts[small] == sum(text.startswith("small") for text in pairs["sentence1"])


def test_a_file_matched_by_two_sources_is_warned_about(two_sources, tmp_path, cache_dir, caplog):
    big, _ = two_sources
    with caplog.at_level(logging.WARNING):
        pairs = load_training_pairs([big, str(tmp_path / "bi*.parquet")], cache_dir=cache_dir)
    assert len(pairs) == 200  # trained twice, as written
    assert f"{big} is matched by data.sources[0] and data.sources[1]" in caplog.text and "weight" in caplog.text


def test_deterministic_in_the_seed(two_sources, cache_dir):
    big, _ = two_sources

    def load(seed):
        return load_training_pairs([{"path": big, "max_pairs": 20}], seed=seed, cache_dir=cache_dir)["sentence1"]

    assert load(7) == load(7) != load(8)


def test_sample_rows_by_hand():
    np.testing.assert_array_equal(sample_rows(4, weight=2.0, max_pairs=None, seed=0), [0, 0, 1, 1, 2, 2, 3, 3])
    assert len(sample_rows(10, weight=None, max_pairs=3, seed=0)) == 3
    np.testing.assert_array_equal(sample_rows(5, weight=None, max_pairs=None, seed=0), np.arange(5))


def test_filters_are_the_data_filters_and_entries_override(write_parquet, cache_dir):
    path = write_parquet(
        "f.parquet",
        {
            "sentence1": ["a man is playing a guitar on stage", "two dogs run"],
            "sentence2": ["a man is playing a guitar on stage tonight", "a pair of dogs is running"],
        },
    )
    kept = load_training_pairs(path, filters={"trigram_overlap": 0.7}, cache_dir=cache_dir)
    assert kept["sentence1"] == ["two dogs run"]  # the near-copy is dropped
    longer = load_training_pairs([{"path": str(path), "filters": {"length": {"min": 5}}}], cache_dir=cache_dir)
    assert longer["sentence1"] == ["a man is playing a guitar on stage"]


def test_bitext_columns_lang_and_exclusion(write_parquet, cache_dir):
    bitext = write_parquet(
        "de-en.parquet",
        {
            "source": ["Guten Morgen", "Danke", "Hallo"],
            "target": ["Good morning", "Thanks", "Hello"],
            "lang": ["de", "de", "de"],
            "corpus": ["news", "flores200-devtest", "news"],
        },
    )
    english = write_parquet("en.parquet", {"sentence1": ["a b"], "sentence2": ["c d"]})
    entry = {"path": str(bitext), "columns": {"sentence1": "source", "sentence2": "target"}}
    pairs = load_training_pairs([{**entry, "exclude": {"corpus": "flores200-devtest"}}, english], cache_dir=cache_dir)
    assert pairs.column_names == ["sentence1", "sentence2", "lang", "group_id"]
    assert pairs["sentence1"][:] == ["Guten Morgen", "Hallo", "a b"]
    assert pairs["lang"][:] == ["de", "de", None]


def test_a_source_weighted_to_no_pair_beside_bitext_is_left_out_not_a_crash(write_parquet, cache_dir):
    """M9-2: a weight rounding to 0 pairs beside a source with ``lang`` crashed inside datasets (add_column on an
    empty selection of a ``large_string`` file, as pandas writes them and the shared data is)."""
    import pyarrow as pa

    texts = [pa.array([f"{side} {i}" for i in range(10)], pa.large_string()) for side in ("left", "right")]
    english = str(write_parquet("en.parquet", {"sentence1": texts[0], "sentence2": texts[1]}))
    bitext = str(write_parquet("sv-en.parquet", {"sentence1": ["Hej"], "sentence2": ["Hi"], "lang": ["sv"]}))
    counts: dict[str, int] = {}
    pairs = load_training_pairs([bitext, {"path": english, "weight": 0.01}], counts=counts, cache_dir=cache_dir)
    assert pairs["lang"][:] == ["sv"] and counts == {bitext: 1, english: 0}


def test_a_source_left_with_no_pair_is_warned_about(two_sources, cache_dir, caplog):
    """M9-3: a source whose filters or weight left no pair was trained without, logged at info level only."""
    big, small = two_sources
    with caplog.at_level(logging.WARNING):
        load_training_pairs([big, {"path": small, "filters": {"length": {"min": 50}}}], cache_dir=cache_dir)
    assert f"data.sources[1] ({small}) gives no training pair after its filters and weight" in caplog.text


def test_missing_and_empty_sides_are_dropped_and_counted(write_parquet, cache_dir, caplog):
    path = write_parquet("bad.parquet", {"sentence1": ["a", None, "  ", "d"], "sentence2": ["w", "x", "y", "z"]})
    assert load_training_pairs(path, cache_dir=cache_dir)["sentence1"] == ["a", "d"]
    assert "dropped 2 training pair(s)" in caplog.text


def test_empty_side_and_null_group_in_jsonl_are_treated_as_in_parquet(tmp_path, cache_dir, caplog):
    path = tmp_path / "p.jsonl"
    lines = [
        '{"sentence1": "a", "sentence2": "b", "group_id": null}',
        '{"sentence1": " ", "sentence2": "c", "group_id": 7}',
    ]
    path.write_text("\n".join([*lines, '{"sentence1": "d", "sentence2": "e", "group_id": 7}']) + "\n")
    assert load_training_pairs(path, cache_dir=cache_dir)["sentence1"] == ["a", "d"]
    assert "dropped 1 training pair(s)" in caplog.text


def test_missing_column_names_the_file(write_parquet, cache_dir):
    path = write_parquet("bad.parquet", {"sentence1": ["a"], "text": ["b"]})
    with pytest.raises(ValueError, match=r"bad\.parquet: column 'sentence2'.*available columns"):
        load_training_pairs(path, cache_dir=cache_dir)


def test_relative_paths_resolve_in_the_data_folder(write_parquet, tmp_path, cache_dir):
    write_parquet("data/training_pairs/x.parquet", {"sentence1": ["a"], "sentence2": ["b"]})
    pairs = load_training_pairs(["training_pairs/*.parquet"], data_dir=tmp_path / "data", cache_dir=cache_dir)
    assert pairs["sentence1"] == ["a"]


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"path": "x.parquet", "max_pairs": 0}, r"data\.sources\[0\]\.max_pairs must be > 0"),
        ({"path": "x.parquet", "weight": -1}, r"data\.sources\[0\]\.weight must be > 0"),
        (
            {"path": "x.parquet", "wieght": 3},
            r"data\.sources\[0\]\.wieght is not a known key \(did you mean weight\?\)",
        ),
        ({"max_pairs": 3}, r"path is required"),
        (
            {"path": "x.parquet", "filters": {"lenght": [3, 5]}},
            r"filters\.lenght is not a known key \(did you mean length",
        ),
        ({"path": "x.parquet", "columns": {"sentence3": "a"}}, r"columns\.sentence3 is not a known key"),
    ],
)
def test_bad_entries_are_clear_errors(entry, message):
    with pytest.raises(ValueError, match=message):
        load_training_pairs([entry])


@pytest.mark.shared_data
def test_real_training_pairs_have_482k_rows_and_group_ids(data_dir, tmp_path):
    counts: dict[str, int] = {}
    pairs = load_training_pairs(["training_pairs/*.parquet"], data_dir=data_dir, counts=counts, cache_dir=tmp_path)
    assert len(pairs) == 482_315 == counts["training_pairs/*.parquet"]
    assert pairs["group_id"][0] == 0


@pytest.mark.parametrize(
    "sentence1, sentence2, keys, error",
    [
        (["a", "b"], ["c"], None, ValueError),  # was zipped: the second pair silently had no sentence2
        (["a", "b"], ["c", "d"], np.array([0]), ValueError),
        ("ab", ["c", "d"], None, TypeError),  # was read as two pairs "a", "b"
    ],
)
def test_pair_groups_refuse_columns_of_different_lengths(sentence1, sentence2, keys, error):
    """AP3."""
    with pytest.raises(error, match="sentence1"):
        pair_groups(sentence1, sentence2, keys=keys)


@pytest.mark.parametrize(
    "sources, max_pairs, error, message",
    [
        ("training_pairs/parasci.parquet", 0, ValueError, "max_pairs must be >= 1, got 0"),  # datasets' concat error
        ("training_pairs/parasci.parquet", -1, ValueError, "max_pairs must be >= 1, got -1"),  # numpy's
        ([], None, ValueError, "sources is empty"),  # "Unable to concatenate an empty list of datasets"
    ],
)
def test_load_training_pairs_names_a_bad_cap_or_no_sources(data_dir, cache_dir, sources, max_pairs, error, message):
    """AP12."""
    with pytest.raises(error, match=message):
        load_training_pairs(sources, max_pairs=max_pairs, data_dir=data_dir, cache_dir=cache_dir)


def test_sample_rows_names_a_negative_weight():
    """AP12: 'negative dimensions are not allowed' from numpy."""
    with pytest.raises(ValueError, match="weight must be in"):
        sample_rows(10, weight=-0.5, max_pairs=None, seed=0)
