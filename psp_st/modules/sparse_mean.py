"""Mean of token embeddings with a compact sparse gradient (one row per distinct token of the batch)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class _SparseBagMean(torch.autograd.Function):
    @staticmethod
    def forward(ctx, flat: torch.Tensor, offsets: torch.Tensor, lengths: torch.Tensor, weight: torch.Tensor):
        ctx.save_for_backward(flat, lengths)
        ctx.weight_shape = weight.shape
        divisor = lengths.clamp(min=1).unsqueeze(1).to(weight.dtype)
        return F.embedding_bag(flat, weight, offsets, mode="sum") / divisor

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        flat, lengths = ctx.saved_tensors
        per_text = grad / lengths.clamp(min=1).unsqueeze(1).to(grad.dtype)
        rows = torch.repeat_interleave(torch.arange(len(lengths), device=flat.device), lengths)
        pieces, inverse = torch.unique(flat, return_inverse=True)
        order = torch.argsort(inverse, stable=True)
        counts = torch.bincount(inverse, minlength=len(pieces))
        starts = torch.cat([counts.new_zeros(1), counts.cumsum(0)[:-1]])
        # transpose of the forward bag: each distinct piece sums the gradients of the texts that contain it
        values = F.embedding_bag(rows[order], per_text, starts, mode="sum")
        weight_grad = torch.sparse_coo_tensor(
            pieces.unsqueeze(0), values, ctx.weight_shape, is_coalesced=True, check_invariants=False
        )
        return None, None, None, weight_grad


def bag_mean(input_ids: torch.Tensor, embedding: nn.Embedding, pad_id: int) -> torch.Tensor:
    """``F.embedding_bag(input_ids, weight, mode="mean", padding_idx=pad_id)`` (rows with no token give zeros); when
    ``embedding.sparse`` is set and gradients flow, with our own backward. Why: torch's sparse backward emits one
    gradient row per *token*; ours one coalesced row per *distinct* token (``benchmarks/results/training.md``)."""
    weight = embedding.weight
    if not (embedding.sparse and weight.requires_grad and torch.is_grad_enabled()):
        return F.embedding_bag(input_ids, weight, mode="mean", padding_idx=pad_id)
    mask = input_ids != pad_id
    lengths = mask.sum(1)
    offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]])
    return _SparseBagMean.apply(input_ids[mask], offsets, lengths, weight)
