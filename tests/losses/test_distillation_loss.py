"""TeacherDistillationLoss against hand computations."""

from __future__ import annotations

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
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=2)
    with torch.no_grad():
        loss.projection.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0]]))
    student = torch.tensor([[1.0, 1.0], [3.0, 0.0]])  # projected: (1, 2) and (3, 0)
    teacher = torch.tensor([[2.0, 1.0], [0.0, 1.0]])
    # cos((1,2),(2,1)) = 4/5; cos((3,0),(0,1)) = 0  -> mean(1 - cos) = (0.2 + 1) / 2
    value = loss([{"x": student}], teacher)
    assert value.item() == pytest.approx((0.2 + 1.0) / 2, abs=1e-6)


def test_projection_is_trained_and_not_part_of_the_model():
    model = FixedModel(4)
    loss = TeacherDistillationLoss(model, teacher_dim=3)
    assert {id(p) for p in loss.parameters()} == {id(loss.projection.weight)}
    assert list(model.parameters()) == []


def test_projection_starts_as_a_seeded_scaled_orthogonal_map():
    """M6-7: ``W`` is orthogonal times ``1 / sqrt(student_dim)`` (near unit scale) and drawn from ``seed``."""
    weight = TeacherDistillationLoss(FixedModel(16), teacher_dim=24, seed=3).projection.weight.detach()
    torch.testing.assert_close(weight.T @ weight, torch.eye(16) / 16)
    again = TeacherDistillationLoss(FixedModel(16), teacher_dim=24, seed=3).projection.weight
    other = TeacherDistillationLoss(FixedModel(16), teacher_dim=24, seed=4).projection.weight
    assert torch.equal(weight, again) and not torch.allclose(weight, other)


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match="teacher_dim"):
        TeacherDistillationLoss(FixedModel(2), teacher_dim=0)
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=3)
    with pytest.raises(ValueError, match="shape"):
        loss([{"x": torch.ones(2, 2)}], torch.ones(2, 4))


def test_non_finite_teacher_vectors_are_refused():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=2)
    with pytest.raises(ValueError, match="teacher vectors .* NaN or infinite"):
        loss([{"x": torch.ones(2, 2)}], torch.tensor([[1.0, float("nan")], [1.0, 0.0]]))


def test_empty_batch_is_a_clear_error():
    with pytest.raises(ValueError, match="the batch is empty"):
        TeacherDistillationLoss(FixedModel(2), teacher_dim=2)([{"x": torch.ones(0, 2)}], torch.ones(0, 2))


def test_config_and_citation():
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=3)
    assert loss.get_config_dict() == {"teacher_dim": 3, "seed": 0}
    assert "Reimers" in loss.citation


def test_a_float64_student_trains_through_the_float32_projection():
    """L10-1: a float64 model (``model.double()``) failed with torch's "expected m1 and m2 to have the same dtype"."""
    loss = TeacherDistillationLoss(FixedModel(2), teacher_dim=2)
    with torch.no_grad():
        loss.projection.weight.copy_(torch.eye(2))
    student = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64, requires_grad=True)
    value = loss([{"x": student}], torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64))
    value.backward()
    assert value.item() == pytest.approx((1 - 2**-0.5) / 2, abs=1e-6)
    assert student.grad is not None and student.grad.dtype == torch.float64


def test_the_config_names_the_projection_seed():
    """L10-3: the model card listed only ``teacher_dim``; ``seed`` draws ``W`` and changes the trained model."""
    assert TeacherDistillationLoss(FixedModel(2), teacher_dim=3, seed=7).get_config_dict()["seed"] == 7
