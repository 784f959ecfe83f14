"""apply_filters: config parsing, order, and the kept/dropped report (Dataset and streaming)."""

from __future__ import annotations

import pickle

import pytest

from psp_st.data import apply_filters


@pytest.fixture
def pairs(pairs_dataset):
    return pairs_dataset(
        {
            "sentence1": ["A b c d", "a b c d", "one", "x y z w v", "Red fox jumps high"],
            "sentence2": ["e f g h", "e f g h", "two", "x y z w v", "a fox that jumps high"],
            "score": [0.9, 0.9, 0.5, 0.8, 0.2],
        }
    )


CONFIG = {"lowercase": True, "dedup": True, "length": {"min": 2}, "trigram_overlap": 0.7, "score": {"min": 0.5}}


def test_report_counts_each_step_in_config_order(pairs):
    kept, report = apply_filters(pairs, CONFIG)
    assert kept["sentence1"][:] == ["a b c d"]
    assert [(step.name, step.kept, step.dropped) for step in report.steps] == [
        ("lowercase", 5, 0),
        ("dedup", 4, 1),  # "A b c d" == "a b c d" once lower-cased
        ("length", 3, 1),  # "one"/"two"
        ("trigram_overlap", 2, 1),  # exact copy "x y z w v"
        ("score", 1, 1),  # 0.2
    ]
    assert report.total == 5 and report.kept == 1
    assert "trigram_overlap" in str(report) and "dedup" in str(report)


def test_list_config_and_disabled_steps(pairs):
    kept, report = apply_filters(pairs, [{"length": [2, 100]}, {"dedup": False}, {"trigram_overlap": None}])
    assert [step.name for step in report.steps] == ["length"]
    assert len(kept) == 4


def test_streaming_report_fills_while_iterating(pairs):
    stream = pairs.to_iterable_dataset()
    kept, report = apply_filters(stream, CONFIG)
    assert report.streaming and report.steps[1].kept == 0  # nothing counted before iteration
    assert [row["sentence1"] for row in kept] == ["a b c d"]
    assert [(step.kept, step.dropped) for step in report.steps] == [(5, 0), (4, 1), (3, 1), (2, 1), (1, 1)]


def test_a_counted_stream_pickles_for_dataloader_workers(pairs):
    kept, report = apply_filters(pairs.to_iterable_dataset(), CONFIG)
    copy = pickle.loads(pickle.dumps(kept))  # what a spawned DataLoader worker receives
    assert [row["sentence1"] for row in copy] == ["a b c d"]


def test_unknown_filter_lists_known_ones(pairs):
    with pytest.raises(ValueError, match=r"unknown filter 'lenght'; known filters: \["):
        apply_filters(pairs, {"lenght": [1, 2]})


def test_bad_parameters_are_named(pairs):
    with pytest.raises(ValueError, match=r"filter 'length': maximum is not a known key \(did you mean max\?\)"):
        apply_filters(pairs, {"length": {"maximum": 3}})


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"dedup": {"symmetric": "no"}}, "filter 'dedup': symmetric must be a bool, got 'no'"),
        ({"trigram_overlap": "x"}, "filter 'trigram_overlap': max must be a number"),
        ({"length": ["a", 3]}, "filter 'length': min must be a number"),
        ({"lowercase": "no"}, "filter 'lowercase' takes true, got 'no'"),
    ],
)
def test_bad_option_values_are_named(pairs, config, message):
    with pytest.raises(ValueError, match=message):
        apply_filters(pairs, config)


def test_language_config_for_bitext(pairs_dataset):
    bitext = pairs_dataset(
        {
            "sentence1": ["Je voudrais un café, s'il vous plaît.", "I would like a coffee, please."],
            "sentence2": ["I would like a coffee, please.", "I would like a coffee, please."],
        }
    )
    kept, report = apply_filters(bitext, {"language": {"sentence1": "fr", "sentence2": "en"}})
    assert kept["sentence1"][:] == ["Je voudrais un café, s'il vous plaît."]
    assert (report.steps[0].kept, report.steps[0].dropped) == (1, 1)


def test_num_proc_must_be_positive(pairs):
    with pytest.raises(ValueError, match=r"num_proc \(--num-proc\) must be >= 1, got 0"):
        apply_filters(pairs, CONFIG, num_proc=0)
