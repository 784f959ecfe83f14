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
