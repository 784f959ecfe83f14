"""TeacherDistillationLoss against hand computations."""

from __future__ import annotations

import math

import pytest
import torch

from psp_st.losses import TeacherDistillationLoss


class FixedModel(torch.nn.Module):
    """Returns the given features' ``x`` as the sentence embedding (dimension ``dim``)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim

    def get_embedding_dimension(self) -> int:
        return self.dim

    def forward(self, features):
        return {"sentence_embedding": features["x"]}


def test_cosine_value_by_hand():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=2, metric="cosine")
    with torch.no_grad():
        loss.projection.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
    student = torch.tensor([[1.0, 1.0], [3.0, 0.0]])  # projected: (1, 2) and (3, 0)
    teacher = torch.tensor([[2.0, 1.0], [0.0, 1.0]])
    # cos((1,2),(2,1)) = 4/5; cos((3,0),(0,1)) = 0  -> mean(1 - cos) = (0.2 + 1) / 2
    value = loss([{"x": student}], teacher)
    assert value.item() == pytest.approx((0.2 + 1.0) / 2, abs=1e-6)


def test_mse_value_by_hand():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=3, metric="mse")
    with torch.no_grad():
        loss.projection.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    student = torch.tensor([[1.0, 2.0]])  # projected: (1, 2, 3)
    teacher = torch.tensor([[0.0, 2.0, 5.0]])
    # squared errors 1, 0, 4 -> mean over 3 values
    assert loss([{"x": student}], teacher).item() == pytest.approx(5 / 3, abs=1e-6)


def test_similarity_value_by_hand():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=3, metric="similarity")
    student = torch.tensor([[1.0, 0.0], [1.0, 1.0]])  # cos = 1/sqrt(2)
    teacher = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])  # cos = 0
    # matrices differ only off the diagonal, by 1/sqrt(2) twice: mean of 4 entries
    assert loss([{"x": student}], teacher).item() == pytest.approx(2 * 0.5 / 4, abs=1e-6)


def test_similarity_ignores_a_rotation_of_the_student():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=2, metric="similarity")
    teacher = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 3.0]])
    rotation = torch.tensor([[0.0, -1.0], [1.0, 0.0]])
    assert loss([{"x": teacher @ rotation}], teacher).item() == pytest.approx(0.0, abs=1e-6)


def test_without_projection_compares_directly():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=2, metric="cosine", projection=False)
    value = loss.compute_loss_from_embeddings([torch.tensor([[1.0, 0.0]])], torch.tensor([[1.0, 1.0]]))
    assert value.item() == pytest.approx(1 - 1 / math.sqrt(2), abs=1e-6)
    assert list(loss.parameters()) == []


def test_projection_is_trained_and_not_part_of_the_model():
    model = FixedModel(4)
    loss = TeacherDistillationLoss(model, teacher_dim=3)
    assert {id(p) for p in loss.parameters()} == {id(loss.projection.weight)}
    assert list(model.parameters()) == []


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="metric"):
        TeacherDistillationLoss(FixedModel(2), teacher_dim=2, metric="l1")
    with pytest.raises(ValueError, match="equal dimensions"):
        TeacherDistillationLoss(FixedModel(2), teacher_dim=3, projection=False)
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=3)
    with pytest.raises(ValueError, match="shape"):
        loss([{"x": torch.ones(2, 2)}], torch.ones(2, 4))


def test_config_and_citation():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=3, metric="mse")
    assert loss.get_config_dict() == {"teacher_dim": 3, "metric": "mse", "projection": True}
    assert "Reimers" in loss.citation
