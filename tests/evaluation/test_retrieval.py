from __future__ import annotations

import numpy as np
import pytest

from psp_st.evaluation.retrieval import RetrievalEvaluator, rank_metrics, retrieval_ranks
from psp_st.evaluation.turku_labels import parse_label


def test_ranks_exclude_the_query_and_average_ties():
    # rows: 0 query, 1 target, 2 closer than target, 3 a tie with the target, 4 far away
    embeddings = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 0.1], [1.0, 1.0], [-1.0, 0.0]])
    ranks = retrieval_ranks(embeddings, queries=[0, 0, 0], targets=[1, 2, 4])
    # target 1: one candidate strictly closer (2), one tie (3) -> 1 + 1 + 0.5
    # target 2: the closest -> 1; target 4: the farthest of 4 candidates -> 4
    assert ranks.tolist() == [2.5, 1.0, 4.0]


def test_cosines_differing_only_by_float_noise_tie():
    """A candidate whose cosine differs from the target's by float noise (a reordered bag of pieces) is a tie."""
    embeddings = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 1.0000001]], dtype=np.float32)
    assert retrieval_ranks(embeddings, queries=[0, 0], targets=[1, 2]).tolist() == [1.5, 1.5]


def test_query_equal_to_target_ranks_first():
    embeddings = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert retrieval_ranks(embeddings, [0], [0]).tolist() == [1.0]


def test_query_equal_to_target_ranks_first_even_among_copies_of_it():
    """M6-17: two other candidates at cosine 1 do not push the query's own text below rank 1."""
    embeddings = np.array([[1.0, 0.0], [1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    assert retrieval_ranks(embeddings, [0], [0]).tolist() == [1.0]


def test_ranks_do_not_depend_on_the_query_batch_size():
    """M6-18: each batch of queries is ranked against its own targets."""
    embeddings = np.random.default_rng(0).normal(size=(9, 3))
    queries, targets = [0, 1, 2, 3, 4], [5, 6, 7, 8, 0]
    batched = retrieval_ranks(embeddings, queries, targets, batch_size=2)
    assert batched.tolist() == retrieval_ranks(embeddings, queries, targets).tolist()


def test_rank_ten_is_in_the_top_ten():
    """M6-19: ``top10`` counts rank 10 (the test above has no rank 10)."""
    assert rank_metrics(np.array([10.0, 11.0]), num_candidates=11)["top10"] == 50.0


def test_rank_metrics_by_hand():
    # 11 candidates -> 10 others per query; ranks 1, 3 and 11
    metrics = rank_metrics(np.array([1.0, 3.0, 11.0]), num_candidates=11)
    assert metrics["top1"] == pytest.approx(100 / 3)
    assert metrics["top10"] == pytest.approx(200 / 3)
    assert metrics["mean_rank_pct"] == pytest.approx((0 + 2 + 10) / 3 / 10 * 100)


@pytest.mark.parametrize(
    ("label", "group"),
    [("4", "4"), ("4i", "4"), ("4s", "4"), ("4>", "4<>"), ("4<is", "4<>"), ("3", "3"), ("2", "2"), ("1", "1")],
)
def test_turku_label_groups(label, group):
    assert parse_label(label).group == group


def test_unknown_turku_label_in_retrieval_data_names_the_row(lookup_model):
    data = {"sentence1": ["a", "b"], "sentence2": ["c", "d"], "label_str": ["4", "x"]}
    with pytest.raises(ValueError, match="column 'label_str', row 1: label 'x' is not in the Turku scheme"):
        RetrievalEvaluator(data)


def test_retrieval_evaluator_reports_per_label_group(lookup_model):
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1], "d": [0.1, 1]})
    data = {"sentence1": ["a", "c"], "sentence2": ["b", "d"], "label_str": ["4", "2"]}
    metrics = RetrievalEvaluator(data, name="toy")(model)
    assert metrics["toy_candidates"] == 4
    assert metrics["toy_4_top1"] == 100.0 and metrics["toy_2_top1"] == 100.0
    assert metrics["toy_positive_pairs"] == 1
    assert "toy_3_top1" not in metrics


def test_label_3_pairs_are_positive(lookup_model):
    """M6-20: ``positive`` is labels 3 and 4 (Kanerva et al.), not 4 alone."""
    model = lookup_model({"a": [1, 0], "b": [1, 0.1], "c": [0, 1], "d": [0.1, 1]})
    data = {"sentence1": ["a", "c"], "sentence2": ["b", "d"], "label_str": ["4", "3"]}
    assert RetrievalEvaluator(data, name="toy")(model)["toy_positive_pairs"] == 2


def test_retrieval_evaluator_needs_label_str():
    with pytest.raises(ValueError, match=r"missing column\(s\) \['label_str'\]"):
        RetrievalEvaluator({"sentence1": ["a"], "sentence2": ["b"], "label": [4]})


@pytest.mark.parametrize(
    "queries, targets, options, error, message",
    [
        ([0, -1], [1, 0], {}, ValueError, r"queries must be row numbers in \[0, 3\)"),  # -1 was the last row
        ([0.7, 1.0], [1, 0], {}, ValueError, "queries must be a 1-D sequence of integer row numbers"),  # 0.7 -> 0
        ([0, 1], [1, 0], {"batch_size": 0}, ValueError, "batch_size must be >= 1"),  # range() arg 3 must not be zero
    ],
)
def test_retrieval_ranks_refuse_bad_indexes_and_batch_sizes(queries, targets, options, error, message):
    """AP8."""
    with pytest.raises(error, match=message):
        retrieval_ranks(np.eye(3, dtype=np.float32), queries, targets, **options)


def test_rank_metrics_refuse_a_zero_based_rank():
    """AP8: rank 0 gave a negative mean_rank_pct."""
    with pytest.raises(ValueError, match="ranks must be 1-based"):
        rank_metrics(np.array([0, 1]), 5)


def test_rank_metrics_are_typed_for_a_list_of_ranks():
    """Y8-3: ``ranks: np.ndarray`` made mypy reject the list rank_metrics takes at run time."""
    import collections.abc
    import typing

    kinds = [typing.get_origin(hint) for hint in typing.get_args(typing.get_type_hints(rank_metrics)["ranks"])]
    assert collections.abc.Sequence in kinds
    assert rank_metrics([1, 2], 2)["top1"] == 50.0
