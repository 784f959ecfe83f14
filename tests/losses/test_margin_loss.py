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
    assert "wieting-gimpel-2018-paranmt" in loss.citation and "wieting-etal-2022-paraphrastic" in loss.citation
