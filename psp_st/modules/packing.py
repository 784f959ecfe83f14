"""Packed token layout (``PackedSequence``'s) for recurrent encoders: a batch costs its tokens, not batch x width."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PackedTokens:
    """Where each real token of a right-padded batch sits in the packed layout: time-major, rows sorted by length
    (longest first), step ``t`` holding the ``t``-th token of the ``batch_sizes[t]`` rows still running.

    Attributes:
        rows, steps: ``(tokens,)`` batch row and time step (column) of each packed position.
        batch_sizes: ``(width,)`` int64 on the CPU: rows still running at each step (non-increasing).
        order: ``(batch,)`` rows by length, longest first (stable): packed slot ``j`` of every step is row ``order[j]``.
        lengths: ``(batch,)`` tokens per row.
    """

    rows: torch.Tensor
    steps: torch.Tensor
    batch_sizes: torch.Tensor
    order: torch.Tensor
    lengths: torch.Tensor

    @classmethod
    def from_mask(cls, mask: torch.Tensor) -> PackedTokens:
        """The layout of ``mask`` ``(batch, width)``, true on real tokens, which come first in every row."""
        lengths = mask.sum(1)
        order = torch.argsort(lengths, descending=True, stable=True)
        width = mask.shape[1]
        running = torch.arange(width, device=mask.device).unsqueeze(1) < lengths[order].unsqueeze(0)  # (width, batch)
        steps, slots = running.nonzero(as_tuple=True)  # time-major: every step lists its running slots in order
        return cls(rows=order[slots], steps=steps, batch_sizes=running.sum(1).cpu(), order=order, lengths=lengths)

    def gather(self, padded: torch.Tensor) -> torch.Tensor:
        """The packed entries ``(tokens, ...)`` of a ``(batch, width, ...)`` tensor."""
        return padded[self.rows, self.steps]

    def reversal(self) -> torch.Tensor:
        """``(tokens,)`` index turning packed entries into those of the row-reversed sentences (a backward RNN)."""
        position = torch.full((len(self.lengths), len(self.batch_sizes)), -1, dtype=torch.long, device=self.rows.device)
        position[self.rows, self.steps] = torch.arange(len(self.rows), device=self.rows.device)
        return position[self.rows, self.lengths[self.rows] - 1 - self.steps]

    def mean(self, values: torch.Tensor) -> torch.Tensor:
        """Per-row mean ``(batch, dim)`` of packed ``values`` ``(tokens, dim)``; a row with no token gets zeros."""
        sums = values.new_zeros(len(self.lengths), values.shape[1]).index_add(0, self.rows, values)
        return sums / self.lengths.clamp(min=1).unsqueeze(1).to(values.dtype)

    def max(self, values: torch.Tensor) -> torch.Tensor:
        """Per-row maximum ``(batch, dim)`` of packed ``values``; a row with no token gets zeros."""
        index = self.rows.unsqueeze(1).expand_as(values)
        return values.new_zeros(len(self.lengths), values.shape[1]).scatter_reduce(
            0, index, values, "amax", include_self=False
        )
