"""Scrambling: shuffle the token order of some rows of a padded id batch (regularizer for order-aware encoders)."""

from __future__ import annotations

import torch


def scramble_ids(
    input_ids: torch.Tensor, mask: torch.Tensor | None, probability: float, generator: torch.Generator | None = None
) -> torch.Tensor:
    """With ``probability`` per row, randomly permute the row's real tokens (``mask``; ``None``: every position);
    padding stays at the end. The scrambling of Wieting & Gimpel (2017, 2018). Leaves ``input_ids`` unchanged."""
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"scrambling probability must be in [0, 1], got {probability}")
    if input_ids.ndim != 2 or probability == 0.0 or input_ids.shape[1] < 2:
        return input_ids
    device = input_ids.device
    valid = torch.ones_like(input_ids, dtype=torch.bool) if mask is None else mask.bool()
    rows = torch.rand(input_ids.shape[0], generator=generator).to(device) < probability
    keys = torch.rand(input_ids.shape, generator=generator).to(device)
    position = torch.arange(input_ids.shape[1], device=device, dtype=keys.dtype).expand_as(keys)
    # rows left alone keep their order (key = position); padding sorts to the end in its own order
    keys = torch.where(rows.unsqueeze(1), keys, position / input_ids.shape[1])
    keys = torch.where(valid, keys, 2.0 + position)
    return input_ids.gather(1, keys.argsort(dim=1))
