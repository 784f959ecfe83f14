"""SparseDenseAdam equals dense Adam on touched rows; sparse-aware clipping really clips."""

from __future__ import annotations

import pytest
import torch

from psp_st.training import SparseDenseAdam
from psp_st.training.optimizer import clip_grad_norm_sparse


def test_sparse_rows_match_dense_adam_first_step():
    torch.manual_seed(0)
    dense = torch.nn.Embedding(10, 4)
    sparse = torch.nn.Embedding(10, 4, sparse=True)
    sparse.weight.data.copy_(dense.weight.data)
    ids = torch.tensor([1, 3, 3])
    for module in (dense, sparse):
        module(ids).sum().backward()
    torch.optim.Adam(dense.parameters(), lr=0.1).step()
    SparseDenseAdam(sparse.parameters(), lr=0.1).step()
    assert torch.allclose(sparse.weight, dense.weight, atol=1e-6)


def test_weight_decay_acts_on_the_touched_rows_of_a_sparse_table():
    """T7-9: weight_decay did nothing to sparse parameters (all of a P-SP model's weights) under mega-batching."""
    torch.manual_seed(0)
    dense = torch.nn.Embedding(10, 4)
    sparse = torch.nn.Embedding(10, 4, sparse=True)
    sparse.weight.data.copy_(dense.weight.data)
    initial = dense.weight.detach().clone()
    ids = torch.tensor([1, 3, 3])
    for module in (dense, sparse):
        module(ids).sum().backward()
    torch.optim.AdamW(dense.parameters(), lr=0.1, weight_decay=0.5).step()
    SparseDenseAdam(sparse.parameters(), lr=0.1, weight_decay=0.5).step()
    touched = torch.tensor([1, 3])
    assert torch.allclose(sparse.weight[touched], dense.weight[touched], atol=1e-6)
    untouched = torch.tensor([0, 2, 4, 5, 6, 7, 8, 9])
    assert torch.equal(sparse.weight[untouched], initial[untouched])


def test_parameter_groups_without_parameters_are_refused():
    with pytest.raises(ValueError, match="nothing to train"):
        SparseDenseAdam([{"params": []}], lr=0.1)


def test_clipping_scales_sparse_and_dense_gradients():
    table = torch.nn.Embedding(5, 3, sparse=True)
    linear = torch.nn.Linear(3, 1)
    linear(table(torch.tensor([0, 2]))).sum().mul(100).backward()
    norm = clip_grad_norm_sparse(list(table.parameters()) + list(linear.parameters()), max_norm=1.0)
    assert norm > 1.0
    after = clip_grad_norm_sparse(list(table.parameters()) + list(linear.parameters()), max_norm=0.0)
    assert abs(float(after) - 1.0) < 1e-3


def test_row_bias_correction_matches_dense_adam_on_the_rows_own_steps():
    """A row touched at global steps 2 and 5 moves exactly as dense Adam on that row alone, stepped twice."""
    torch.manual_seed(0)
    sparse = torch.nn.Embedding(6, 4, sparse=True)
    alone = torch.nn.Parameter(sparse.weight.data[2].clone())
    optimizer = SparseDenseAdam(sparse.parameters(), lr=0.1, row_bias_correction=True)
    reference = torch.optim.Adam([alone], lr=0.1)
    for step in range(6):
        row = 2 if step in (2, 5) else 4
        weights = torch.randn(4)
        optimizer.zero_grad()
        (sparse(torch.tensor([row])) * weights).sum().backward()
        optimizer.step()
        if row == 2:
            reference.zero_grad()
            (alone * weights).sum().backward()
            reference.step()
    assert torch.allclose(sparse.weight[2], alone, atol=1e-6)


def test_global_bias_correction_moves_a_rare_row_further():
    """The default (lazy Adam, global step) gives a row first touched late a step of about (1 - b1) / sqrt(1 - b2)."""
    table = torch.nn.Embedding(3, 2, sparse=True)
    before = table.weight.data[1].clone()
    optimizer = SparseDenseAdam(table.parameters(), lr=0.01)
    for step in range(200):
        optimizer.zero_grad()
        table(torch.tensor([1 if step == 199 else 0])).sum().backward()
        optimizer.step()
    moved = (before - table.weight.data[1]).abs()
    step_size = 0.01 * (1 - 0.999**200) ** 0.5 / (1 - 0.9**200)
    expected = step_size * 0.1 / 0.001**0.5  # m = (1 - b1) g, v = (1 - b2) g^2 (g = 1): 1.35 x lr here
    assert torch.allclose(moved, torch.full((2,), expected), rtol=1e-3)


def test_a_checkpoint_saved_before_row_bias_correction_resumes():
    """W2 (audit 7): a run checkpointed by a psp-st without the option resumed into a KeyError inside step()."""
    table = torch.nn.Parameter(torch.zeros(4, 2))
    optimizer = SparseDenseAdam([table], lr=0.1)
    table.grad = torch.sparse_coo_tensor([[1]], torch.ones(1, 2), (4, 2))
    optimizer.step()
    saved = optimizer.state_dict()
    del saved["param_groups"][0]["row_bias_correction"]  # as an older psp-st wrote it
    resumed = SparseDenseAdam([table], lr=0.1)
    resumed.load_state_dict(saved)
    resumed.step()
    assert resumed.param_groups[0]["row_bias_correction"] is False


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"betas": (0.9, 1.0)}, r"adam_beta2 must be in \[0, 1\)"),  # trained nothing, silently
        ({"betas": (1.0, 0.999)}, r"adam_beta1 must be in \[0, 1\)"),  # ZeroDivisionError at the first step
        ({"eps": -1e-3}, r"adam_epsilon must be in \[0.0, inf\]"),
    ],
)
def test_adam_settings_torch_refuses_are_refused(options, message, tmp_path):
    """N8-3: betas outside [0, 1) and a negative eps were accepted, by the optimizer and by the training arguments."""
    from psp_st.training import PSPTrainingArguments

    with pytest.raises(ValueError, match=message):
        SparseDenseAdam(torch.nn.Embedding(3, 2, sparse=True).parameters(), **options)
    names = {"betas": ("adam_beta1", "adam_beta2"), "eps": ("adam_epsilon",)}
    ((key, value),) = options.items()
    settings = dict(zip(names[key], value if isinstance(value, tuple) else (value,), strict=True))
    with pytest.raises(ValueError, match=message):
        PSPTrainingArguments(str(tmp_path), report_to="none", use_cpu=True, **settings)


def test_clipping_norm_is_the_l2_norm_over_all_parameters_together():
    first, second = torch.nn.Parameter(torch.zeros(1)), torch.nn.Parameter(torch.zeros(1))
    first.grad, second.grad = torch.tensor([3.0]), torch.tensor([4.0])
    assert float(clip_grad_norm_sparse([first, second], max_norm=0.0)) == pytest.approx(5.0)


def test_dense_parameters_step_as_torch_adamw():
    """The docstring's "AdamW for dense ones": three steps with weight decay equal torch.optim.AdamW's."""
    torch.manual_seed(0)
    ours, reference = torch.nn.Linear(4, 3), torch.nn.Linear(4, 3)
    reference.load_state_dict(ours.state_dict())
    options = {"lr": 0.1, "betas": (0.8, 0.9), "weight_decay": 0.5}
    optimizers = [SparseDenseAdam(ours.parameters(), **options), torch.optim.AdamW(reference.parameters(), **options)]
    inputs = torch.randn(5, 4)
    for _ in range(3):
        for module, optimizer in zip((ours, reference), optimizers, strict=True):
            optimizer.zero_grad()
            module(inputs).pow(2).sum().backward()
            optimizer.step()
    for mine, theirs in zip(ours.parameters(), reference.parameters(), strict=True):
        assert torch.allclose(mine, theirs, atol=1e-6)
