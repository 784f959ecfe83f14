from __future__ import annotations

import pytest

from psp_st.evaluation.bitext import BitextMiningEvaluator


def test_error_rates_in_both_directions(lookup_model):
    # source x2 is closest to target y1 (cos 0.89 > 0.45 to y2: an error src->trg);
    # every target finds its own source (y1 = x1 exactly; y2 only overlaps x2; y3 nearly x3)
    model = lookup_model(
        {"x1": [1, 0, 0], "x2": [1, 0.5, 0], "x3": [0, 0, 1], "y1": [1, 0, 0], "y2": [0, 1, 0], "y3": [0, 0.1, 1]}
    )
    data = {"source": ["x1", "x2", "x3"], "target": ["y1", "y2", "y3"]}
    metrics = BitextMiningEvaluator(data, name="toy")(model)
    assert metrics["toy_src2trg_error"] == pytest.approx(100 / 3)
    assert metrics["toy_trg2src_error"] == pytest.approx(0.0)
    assert metrics["toy_mean_error"] == pytest.approx(50 / 3)


def test_multi_bitext_means_are_unweighted_means_over_the_sets(lookup_model):
    """M6-22: ``mean_error`` and ``mean_<direction>_error`` average the sets (one set cannot tell a mean from a max)."""
    from psp_st.evaluation.bitext import MultiBitextEvaluator

    model = lookup_model(
        {"x1": [1, 0, 0], "x2": [1, 0.5, 0], "x3": [0, 0, 1], "y1": [1, 0, 0], "y2": [0, 1, 0], "y3": [0, 0.1, 1]}
    )
    sets = {
        "hard": {"source": ["x1", "x2", "x3"], "target": ["y1", "y2", "y3"]},
        "easy": {"source": ["x1", "x3"], "target": ["y1", "y3"]},
    }
    metrics = MultiBitextEvaluator(sets)(model)
    assert metrics["mean_src2trg_error"] == pytest.approx(50 / 3)
    assert metrics["mean_error"] == pytest.approx(25 / 3)


def test_bitext_data_needs_source_and_target():
    with pytest.raises(ValueError, match=r"missing column\(s\) \['target'\]"):
        BitextMiningEvaluator({"source": ["a"], "english": ["b"]})


def test_a_tie_at_the_top_counts_half_whatever_the_row_order(lookup_model):
    """E11-2: x1 and x2 share one vector, so target y1 ties between them; an argmax gave the tie to the lowest row
    (correct in this order, an error reversed). Mean over tie orders: y1 scores 1/2, y2 0, y3 1, in either order."""
    model = lookup_model(
        {"x1": [1, 0, 0], "x2": [1, 0, 0], "x3": [0, 0, 1], "y1": [1, 0, 0], "y2": [0, 1, 0.2], "y3": [0, 0, 1]}
    )
    data = {"source": ["x1", "x2", "x3"], "target": ["y1", "y2", "y3"]}
    reversed_data = {column: values[::-1] for column, values in data.items()}
    for rows in (data, reversed_data):
        assert BitextMiningEvaluator(rows)(model)["trg2src_error"] == pytest.approx(50.0)
