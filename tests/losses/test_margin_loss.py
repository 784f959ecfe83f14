"""ParaphraseMarginLoss: the formula, in-batch mining, and column checks."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from psp_st.losses import ParaphraseMarginLoss


def test_loss_matches_formula_with_given_negatives():
    torch.manual_seed(0)
    s, t, t_neg, s_neg = (torch.randn(5, 4) for _ in range(4))
    loss = ParaphraseMarginLoss(model=None, margin=0.4)
    expected = (
        F.relu(0.4 - F.cosine_similarity(s, t) + F.cosine_similarity(s, t_neg))
        + F.relu(0.4 - F.cosine_similarity(s, t) + F.cosine_similarity(t, s_neg))
    ).mean()
    assert torch.allclose(loss.compute_loss_from_embeddings([s, t, t_neg, s_neg]), expected)
    one_sided = ParaphraseMarginLoss(model=None, margin=0.4, symmetric=False)
    assert one_sided.compute_loss_from_embeddings([s, t, t_neg, s_neg]) < expected


def test_in_batch_mining_uses_hardest_other_pair():
    s = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
    t = torch.tensor([[1.0, 0.1], [0.1, 1.0], [0.6, 0.8]])
    loss = ParaphraseMarginLoss(model=None, margin=0.4)
    hardest_t_for_s0 = 2  # cos(s0, t2) > cos(s0, t1)
    hardest_s_for_t0 = 2
    first = F.relu(0.4 - F.cosine_similarity(s[:1], t[:1]) + F.cosine_similarity(s[:1], t[hardest_t_for_s0:3]))
    second = F.relu(0.4 - F.cosine_similarity(s[:1], t[:1]) + F.cosine_similarity(t[:1], s[hardest_s_for_t0:3]))
    per_pair0 = (first + second).item()
    value = loss.compute_loss_from_embeddings([s, t])
    assert value.item() > 0
    # group labels putting pairs 0 and 2 together change pair 0's negative (to pair 1) and lower the loss
    grouped = loss.compute_loss_from_embeddings([s, t], torch.tensor([0, -1, 0]))
    assert grouped.item() < value.item()
    assert per_pair0 > 0


def test_in_batch_loss_is_the_formula_on_the_hardest_opposite_side_negatives():
    """M6-1: the mined ``t'`` is the ``t_j`` nearest ``s_i`` and ``s'`` the ``s_j`` nearest ``t_i`` (j != i)."""
    torch.manual_seed(1)
    s, t = torch.randn(6, 4), torch.randn(6, 4)
    cos = (F.normalize(s, dim=-1) @ F.normalize(t, dim=-1).T).fill_diagonal_(float("-inf"))
    t_neg, s_neg = t[cos.argmax(1)], s[cos.argmax(0)]
    expected = (
        F.relu(0.4 - F.cosine_similarity(s, t) + F.cosine_similarity(s, t_neg))
        + F.relu(0.4 - F.cosine_similarity(s, t) + F.cosine_similarity(t, s_neg))
    ).mean()
    assert torch.allclose(ParaphraseMarginLoss(model=None).compute_loss_from_embeddings([s, t]), expected)


def test_each_hinge_clips_at_zero_on_its_own():
    """M6-2: the second (``t``-side) hinge is a relu of its own, not one relu over the sum."""
    s = t = t_neg = torch.tensor([[1.0, 0.0]])
    s_neg = torch.tensor([[-1.0, 0.0]])  # first hinge 0.4 - 1 + 1 = 0.4, second 0.4 - 1 - 1 < 0
    loss = ParaphraseMarginLoss(model=None, margin=0.4).compute_loss_from_embeddings([s, t, t_neg, s_neg])
    assert loss.item() == pytest.approx(0.4)


def test_gradient_flows_to_embeddings():
    s, t = torch.randn(6, 4, requires_grad=True), torch.randn(6, 4, requires_grad=True)
    ParaphraseMarginLoss(model=None).compute_loss_from_embeddings([s, t]).backward()
    assert s.grad is not None and s.grad.abs().sum() > 0


def test_wrong_number_of_columns_is_a_clear_error(psp_model):
    loss = ParaphraseMarginLoss(psp_model)
    features = psp_model.preprocess(["a dog"])
    with pytest.raises(ValueError, match="2 columns"):
        loss([features, features, features], None)


def test_config_and_citation():
    loss = ParaphraseMarginLoss(model=None, margin=0.3, symmetric=False)
    assert loss.get_config_dict() == {"margin": 0.3, "symmetric": False}
    with_term = ParaphraseMarginLoss(model=None, in_batch_weight=0.1).get_config_dict()
    assert with_term == {"margin": 0.4, "symmetric": True, "in_batch_weight": 0.1, "in_batch_scale": 20.0}
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    in_batch_citation = MultipleNegativesRankingLoss(model=None).citation.strip()
    assert in_batch_citation not in loss.citation
    assert in_batch_citation in ParaphraseMarginLoss(model=None, in_batch_weight=0.1).citation
    assert "wieting-gimpel-2018-paranmt" in loss.citation and "wieting-etal-2022-paraphrastic" in loss.citation


def test_in_batch_term_matches_sentence_transformers_mnrl():
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    torch.manual_seed(0)
    s, t, t_neg, s_neg = (torch.randn(6, 4) for _ in range(4))
    plain = ParaphraseMarginLoss(model=None).compute_loss_from_embeddings([s, t, t_neg, s_neg])
    mnrl = MultipleNegativesRankingLoss(
        model=None, scale=20.0, directions=("query_to_doc", "doc_to_query"), partition_mode="per_direction"
    ).compute_loss_from_embeddings([s, t], None)
    loss = ParaphraseMarginLoss(model=None, in_batch_weight=0.1)
    assert torch.allclose(loss.compute_loss_from_embeddings([s, t, t_neg, s_neg]), plain + 0.1 * mnrl, atol=1e-6)


def test_in_batch_term_masks_pairs_of_one_group():
    s = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1]])
    t = torch.tensor([[1.0, 0.1], [0.1, 1.0], [0.9, 0.2]])
    loss = ParaphraseMarginLoss(model=None, margin=0.0, in_batch_weight=1.0)
    # pairs 0 and 2 are near-copies: as each other's candidates they dominate the softmax; one group masks them
    free = loss._in_batch_softmax(s, t, None)
    grouped = loss._in_batch_softmax(s, t, torch.tensor([7, -1, 7]))
    scores = 20.0 * F.normalize(s, dim=-1) @ F.normalize(t, dim=-1).T
    scores[0, 2] = scores[2, 0] = float("-inf")
    target = torch.arange(3)
    expected = (F.cross_entropy(scores, target) + F.cross_entropy(scores.T, target)) / 2
    assert torch.allclose(grouped, expected)
    assert grouped < free


@pytest.mark.parametrize("options", [{"in_batch_weight": -0.1}, {"in_batch_scale": 0.0}])
def test_bad_in_batch_options_are_clear_errors(options):
    with pytest.raises(ValueError, match="in_batch"):
        ParaphraseMarginLoss(model=None, **options)


@pytest.mark.parametrize("options", [{"margin": float("nan")}, {"in_batch_scale": float("inf")}, {"margin": -0.1}])
def test_non_finite_or_negative_options_are_refused(options):
    with pytest.raises(ValueError, match=f"{next(iter(options))} must be"):
        ParaphraseMarginLoss(model=None, **options)


def test_empty_batch_is_a_clear_error(psp_model):
    empty = psp_model.preprocess([])
    with pytest.raises(ValueError, match="the batch is empty"):
        ParaphraseMarginLoss(psp_model)([empty, empty], None)


def test_fractional_group_labels_are_refused_not_truncated():
    s, t = torch.randn(2, 4), torch.randn(2, 4)
    loss = ParaphraseMarginLoss(model=None)
    with pytest.raises(ValueError, match="group labels must be integer ids"):
        loss.compute_loss_from_embeddings([s, t], torch.tensor([0.5, 0.7]))
    assert loss.compute_loss_from_embeddings([s, t], torch.tensor([1.0, 2.0])) > 0  # whole numbers are ids


@pytest.mark.parametrize("labels", [[0, 1] * 4, [1] * 8, [0, 1, -1, 1, 0, 0, 1, -1, 0]])
def test_class_labels_read_as_group_ids_are_refused(labels):
    """U10: a paraphrase-classification dataset's 0/1 ``label`` trained every pair as a paraphrase, without a word."""
    pairs = torch.randn(2, len(labels), 4)
    with pytest.raises(ValueError, match=r"class labels, not the group ids .*remove the label/score column"):
        ParaphraseMarginLoss(model=None).compute_loss_from_embeddings(list(pairs), torch.tensor(labels))


def test_group_ids_and_small_batches_of_zeros_and_ones_still_train():
    s, t = torch.randn(2, 8, 4)
    loss = ParaphraseMarginLoss(model=None)
    assert loss.compute_loss_from_embeddings([s, t], torch.tensor([0, 1, 2, 3, 0, 1, 5, 9])) > 0
    assert loss.compute_loss_from_embeddings([s[:4], t[:4]], torch.tensor([0, 1, 0, 1])) > 0
    assert (
        loss.compute_loss_from_embeddings([s, t, t, s], torch.tensor([0, 1] * 4)) >= 0
    )  # given negatives: labels unread
