"""CosineContrastiveLoss formula and random negative pairing."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from datasets import Dataset

from psp_st.losses import CosineContrastiveLoss, add_random_negatives


def test_loss_is_linear_for_positives_and_squared_hinge_for_negatives(psp_model):
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    labels = torch.tensor([1, 0, 1, 0])
    d = 1 - F.cosine_similarity(a, b)
    expected = torch.where(labels == 1, d, F.relu(0.5 - d) ** 2).mean()
    loss = CosineContrastiveLoss(psp_model, margin=0.5)
    assert torch.allclose(loss.compute_loss_from_embeddings([a, b], labels), expected)


def test_a_negative_pair_closer_than_the_margin_pays_the_squared_gap(psp_model):
    """M6-8: the hinge is squared (the random vectors above are all farther apart than the margin)."""
    a, b = torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0]])  # d = 1 - 1/sqrt(2) ~ 0.293 < 0.5
    d = 1 - 2**-0.5
    loss = CosineContrastiveLoss(psp_model, margin=0.5).compute_loss_from_embeddings([a, b], torch.tensor([0]))
    assert loss.item() == pytest.approx((0.5 - d) ** 2)


def test_missing_labels_is_a_clear_error(psp_model):
    with pytest.raises(ValueError, match="label"):
        CosineContrastiveLoss(psp_model).compute_loss_from_embeddings([torch.randn(2, 3)] * 2, None)


def test_random_negatives_balanced_and_never_own_partner_or_group():
    data = Dataset.from_dict(
        {
            "sentence1": [f"s{i}" for i in range(40)],
            "sentence2": [f"t{i}" for i in range(40)],
            "group_id": [i // 4 for i in range(40)],
        }
    )
    out = add_random_negatives(data, seed=1)
    assert out.column_names == ["sentence1", "sentence2", "label"]
    assert len(out) == 80 and sum(out["label"]) == 40
    for s1, s2, label in zip(out["sentence1"], out["sentence2"], out["label"], strict=True):
        i, j = int(s1[1:]), int(s2[1:])
        if label == 1:
            assert i == j
        else:
            assert i != j and i // 4 != j // 4


def test_random_negatives_without_groups_never_pair_a_row_with_its_own_partner():
    """M6-9: the group guard above re-draws self-pairs too; without a group column they must never occur."""
    data = Dataset.from_dict({"sentence1": ["s0", "s1"], "sentence2": ["t0", "t1"]})
    for seed in range(10):
        out = add_random_negatives(data, seed=seed)
        rows = zip(out["sentence1"], out["sentence2"], out["label"], strict=True)
        negatives = [(s1, s2) for s1, s2, label in rows if label == 0]
        assert sorted(negatives) == [("s0", "t1"), ("s1", "t0")]


def test_random_negatives_re_draw_until_nearly_every_clash_with_a_big_group_is_gone():
    """M6-10: two groups of 10: about half of the first draws clash; up to 8 re-draws leave almost none."""
    data = Dataset.from_dict(
        {
            "sentence1": [f"s{i}" for i in range(20)],
            "sentence2": [f"t{i}" for i in range(20)],
            "group_id": [0] * 10 + [1] * 10,
        }
    )
    clashes = 0
    for seed in range(5):
        out = add_random_negatives(data, seed=seed)
        clashes += sum(
            int(s1[1:]) // 10 == int(s2[1:]) // 10
            for s1, s2, label in zip(out["sentence1"], out["sentence2"], out["label"], strict=True)
            if label == 0
        )
    assert clashes <= 1


def test_random_negatives_reject_missing_column():
    with pytest.raises(ValueError, match="sentence2"):
        add_random_negatives(Dataset.from_dict({"sentence1": ["a", "b"]}))


def test_columns_must_have_the_same_rows(psp_model):
    with pytest.raises(ValueError, match="same shape"):
        CosineContrastiveLoss(psp_model).compute_loss_from_embeddings(
            [torch.randn(3, 8), torch.randn(1, 8)], torch.ones(3)
        )


def test_a_third_column_is_refused(psp_model):
    features = psp_model.preprocess(["a dog"])
    with pytest.raises(ValueError, match="expects 2 columns"):
        CosineContrastiveLoss(psp_model)([features, features, features], torch.ones(1))


@pytest.mark.parametrize("labels", [[-1.0, 1.0], [2.0, 0.0], [float("nan"), 1.0]])
def test_labels_outside_zero_one_are_refused(psp_model, labels):
    with pytest.raises(ValueError, match=r"labels must be in \[0, 1\]"):
        CosineContrastiveLoss(psp_model).compute_loss_from_embeddings([torch.randn(2, 8)] * 2, torch.tensor(labels))


@pytest.mark.parametrize("margin", [-1.0, float("nan")])
def test_negative_or_non_finite_margin_is_refused(margin):
    with pytest.raises(ValueError, match="margin must be"):
        CosineContrastiveLoss(None, margin=margin)


def test_random_negatives_read_the_groups_in_one_arrow_read(monkeypatch):  # F7-3
    """``np.asarray`` of datasets' lazy ``Column`` makes a Python call per row: ~1.3 s per 160k pairs."""
    from datasets.arrow_dataset import Column

    data = Dataset.from_dict({"sentence1": ["a", "b", "c"], "sentence2": ["x", "y", "z"], "group_id": [0, 1, 2]})

    def refuse(self):
        raise AssertionError("a datasets Column was iterated row by row")

    monkeypatch.setattr(Column, "__iter__", refuse)
    assert len(add_random_negatives(data, seed=1)) == 6
