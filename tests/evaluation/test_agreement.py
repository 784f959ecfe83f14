from __future__ import annotations

import numpy as np
import pytest

from psp_st.evaluation.agreement import (
    ScoreAgreementEvaluator,
    exact_level,
    nearest_neighbours,
    neighbour_table_markdown,
    plot_score_levels,
    score_level_stats,
    sts_bucket,
)


def test_score_level_stats_by_hand():
    rows = score_level_stats([1.0, 1.0, 4.0, 2.5], [0.2, 0.4, 0.9, 0.5])
    assert [row["level"] for row in rows] == ["1.0", "2.5", "4.0"]
    assert rows[0] == pytest.approx({"level": "1.0", "count": 2, "mean": 0.3, "std": np.sqrt(0.02)})
    assert rows[1]["std"] == 0.0 and rows[2]["mean"] == pytest.approx(0.9)


def test_sts_buckets_put_five_with_four():
    assert [sts_bucket(score) for score in (0.0, 0.99, 1.0, 4.2, 5.0)] == ["0-1", "0-1", "1-2", "4-5", "4-5"]
    assert exact_level(3) == "3.0"


def test_score_level_stats_rejects_nan():
    with pytest.raises(ValueError, match="similarities has 1 NaN/inf values, first at row 1"):
        score_level_stats([1.0, 2.0], [0.1, float("nan")])


def test_plot_writes_a_png(tmp_path):
    rows = score_level_stats([1.0, 2.0, 2.0], [0.1, 0.5, 0.7])
    path = plot_score_levels("toy", rows, tmp_path / "plot.png", title="toy")
    from pathlib import Path

    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nearest_neighbours_skip_the_query_and_sort_by_cosine():
    candidates = ["q", "near", "far", "mid"]
    embeddings = np.array([[1.0, 0.0], [1.0, 0.1], [-1.0, 0.0], [1.0, 1.0]], dtype=np.float32)
    found = nearest_neighbours(embeddings[:1], embeddings, candidates, k=2, exclude=["q"])
    assert [text for text, _ in found[0]] == ["near", "mid"]
    assert found[0][1][1] == pytest.approx(1 / np.sqrt(2), abs=1e-6)
    table = neighbour_table_markdown("q", found[0], gold="mid")
    assert "| 2 | 0.707 | **mid** |" in table


def test_agreement_evaluator_separation(lookup_model):
    model = lookup_model({"a": [1, 0], "b": [1, 0], "c": [0, 1]})
    data = {"sentence1": ["a", "a"], "sentence2": ["b", "c"], "score": [4.0, 1.0]}
    evaluator = ScoreAgreementEvaluator(data)
    metrics = evaluator(model)
    assert metrics["4.0_mean"] == pytest.approx(1.0) and metrics["1.0_mean"] == pytest.approx(0.0)
    assert metrics["separation"] == pytest.approx(1.0)
    assert len(evaluator.stats) == 2


@pytest.mark.parametrize(
    "candidates, exclude, message",
    [
        ("abc", None, "1 candidates but 3 candidate_embeddings"),  # a str: one text, not three characters
        (["a", "b"], None, "2 candidates but 3 candidate_embeddings"),
        (["a", "b", "c"], "a", "exclude has 1 texts for 2 queries"),
    ],
)
def test_nearest_neighbours_refuse_texts_that_do_not_match_the_rows(candidates, exclude, message):
    """AP2: a str was indexed by character, a short list or exclude crashed with IndexError, a long one was ignored."""
    vectors = np.eye(3, dtype=np.float32)
    with pytest.raises(ValueError, match=message):
        nearest_neighbours(vectors[:2], vectors, candidates, k=2, exclude=exclude)


def test_nearest_neighbours_refuse_embeddings_of_different_dims():
    with pytest.raises(ValueError, match=r"one dim, got shapes \(2, 2\) and \(3, 3\)"):
        nearest_neighbours(np.ones((2, 2)), np.eye(3), ["a", "b", "c"])


def test_cosine_matrix_is_sentence_transformers_cos_sim_bit_for_bit():  # T1: no ST import, the same values
    import torch
    from sentence_transformers.util import cos_sim

    from psp_st.evaluation.embeddings import cosine_matrix

    rng = np.random.default_rng(0)
    queries, candidates = rng.normal(size=(3, 48)).astype(np.float32), rng.normal(size=(50, 48)).astype(np.float32)
    candidates[7] = 0.0  # a zero vector: cosine 0, as ST's
    expected = cos_sim(torch.from_numpy(queries), torch.from_numpy(candidates)).numpy()
    assert np.array_equal(cosine_matrix(queries, candidates), expected)


def test_score_level_stats_orders_negative_and_named_levels_by_score():
    """N8-1: levels were ordered by float(label before '-'): a negative score's level ('-1.0') crashed."""
    rows = score_level_stats([-1.0, 0.5, -0.5], [0.1, 0.9, 0.4])
    assert [row["level"] for row in rows] == ["-1.0", "-0.5", "0.5"]
    named = score_level_stats([3.0, 1.0], [0.8, 0.2], level=lambda score: "high" if score > 2 else "low")
    assert [row["level"] for row in named] == ["low", "high"]
