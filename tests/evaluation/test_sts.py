from __future__ import annotations

import numpy as np
import pytest

from psp_st.evaluation.sts import STSEvaluator, sbert_pooled, wieting_means


def test_wieting_means_average_subsets_then_years():
    per_subset = {"a": {"pearson": 0.2}, "b": {"pearson": 0.4}, "c": {"pearson": 0.9}}
    means = wieting_means(per_subset, {"2012": ["a", "b"], "2013": ["c"]})
    assert means == pytest.approx({"2012": 0.3, "2013": 0.9, "all": 0.6})


def test_sbert_pooled_is_spearman_over_the_concatenated_subsets():
    gold = {"a": [1.0, 2.0], "b": [3.0, 4.0]}
    predicted = {"a": [0.1, 0.4], "b": [0.3, 0.5]}
    # pooled ranks: gold (1, 2, 3, 4), predicted (1, 3, 2, 4) -> 1 - 6 * 2 / (4 * 15) = 0.8
    pooled = sbert_pooled(gold, predicted, {"2012": ["a", "b"]})
    assert pooled == pytest.approx({"2012": 0.8, "all": 0.8})


def test_sbert_pooled_all_is_the_mean_of_the_groups():
    """M6-21: ``all`` is the unweighted mean of the groups' pooled Spearman (one group above hides which)."""
    gold = {"a": [1.0, 2.0], "b": [3.0, 4.0], "c": [1.0, 2.0, 3.0]}
    predicted = {"a": [0.1, 0.4], "b": [0.3, 0.5], "c": [0.3, 0.2, 0.1]}
    pooled = sbert_pooled(gold, predicted, {"2012": ["a", "b"], "2013": ["c"]})
    assert pooled == pytest.approx({"2012": 0.8, "2013": -1.0, "all": -0.1})


def test_sts_evaluator_reports_subsets_years_and_both_conventions(lookup_model):
    vectors = {"a": [1, 0], "b": [1, 0.2], "c": [0, 1], "d": [1, 1], "e": [1, -1], "f": [1, 0.5]}
    model = lookup_model(vectors)
    subsets = {
        "s1": {"sentence1": ["a", "a", "a"], "sentence2": ["b", "d", "c"], "score": [5.0, 3.0, 0.0]},
        "s2": {"sentence1": ["d", "d", "e"], "sentence2": ["f", "c", "c"], "score": [4.0, 3.5, 1.0]},
    }
    metrics = STSEvaluator(subsets, groups={"2099": ["s1", "s2"]}, name="toy")(model)
    assert metrics["toy_s1_spearman"] == pytest.approx(1.0)
    assert metrics["toy_2099_mean_pearson"] == pytest.approx(
        np.mean([metrics["toy_s1_pearson"], metrics["toy_s2_pearson"]])
    )
    assert metrics["toy_wieting_pearson"] == pytest.approx(metrics["toy_2099_mean_pearson"])
    assert "toy_sbert_spearman" in metrics
    # each distinct text embedded once, in a single call
    assert len(model.calls) == 1 and sorted(model.calls[0]) == sorted(vectors)


def test_sts_evaluator_names_the_subset_without_a_score_column():
    with pytest.raises(ValueError, match=r"STS subset 'bad'.*missing column\(s\) \['score'\]"):
        STSEvaluator({"bad": {"sentence1": ["a"], "sentence2": ["b"], "label": [1]}})


def test_sts_evaluator_raises_on_a_model_that_maps_everything_to_one_vector(lookup_model):
    model = lookup_model({"a": [1, 1], "b": [1, 1], "c": [1, 1]})
    data = {"sentence1": ["a", "a"], "sentence2": ["b", "c"], "score": [1.0, 4.0]}
    with pytest.raises(ValueError, match="predicted similarities are equal"):
        STSEvaluator({"toy": data})(model)


def test_non_numeric_scores_name_the_column():
    with pytest.raises(ValueError, match="STS subset 'toy'.*column 'score' is not numeric"):
        STSEvaluator({"toy": {"sentence1": ["a", "b"], "sentence2": ["b", "c"], "score": ["high", "low"]}})


def test_a_shared_cache_embeds_again_after_the_weights_changed(psp_model):
    """T7-1: an evaluator's ``cache`` of the model being trained gave the first evaluation's vectors at every step."""
    import torch

    from psp_st.evaluation.embeddings import EmbeddingCache

    cache = EmbeddingCache(psp_model)
    before = cache.encode(["a dog runs on the beach"])
    with torch.no_grad():  # an optimizer step: the weights change in place
        for parameter in psp_model.parameters():
            parameter.add_(torch.randn_like(parameter))
    after = cache.encode(["a dog runs on the beach"])
    assert not np.allclose(after, before)
    np.testing.assert_allclose(after, psp_model.encode(["a dog runs on the beach"]), atol=1e-6)


def test_a_shared_cache_embeds_again_after_max_seq_length_changed(psp_model):  # C13-3
    from psp_st.evaluation.embeddings import EmbeddingCache

    text = ["a dog runs on the beach near the water"]
    cache = EmbeddingCache(psp_model)
    cache.encode(text)
    psp_model.max_seq_length = 2
    np.testing.assert_allclose(cache.encode(text), psp_model.encode(text), atol=1e-6)
