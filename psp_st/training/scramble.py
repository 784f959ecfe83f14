"""Scrambling: shuffle the token order of some sentences (regularization for order-aware encoders)."""

from __future__ import annotations

import torch


def scramble_input_ids(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    probability: float = 0.3,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """With probability ``probability`` per row, randomly permute the row's non-padding tokens.

    Wieting & Gimpel (2017, 2018) scramble 30-50% of the sentences while training LSTM encoders; for averaging
    encoders (P-SP, WORD, TRIGRAM) it changes nothing. Padding positions (``attention_mask == 0``; right
    padding) stay where they are. Vectorized: one ``argsort`` of random keys over the batch. Returns a new
    tensor; ``input_ids`` is not modified.
    """
    if not 0.0 <= probability <= 1.0:
        raise ValueError(f"scrambling probability must be in [0, 1], got {probability}")
    if input_ids.ndim != 2 or probability == 0.0 or input_ids.shape[1] < 2:
        return input_ids
    device = input_ids.device
    valid = torch.ones_like(input_ids, dtype=torch.bool) if attention_mask is None else attention_mask.bool()
    rows = torch.rand(input_ids.shape[0], generator=generator).to(device) < probability
    keys = torch.rand(input_ids.shape, generator=generator).to(device)
    position = torch.arange(input_ids.shape[1], device=device, dtype=keys.dtype).expand_as(keys)
    # unscrambled rows keep their order (key = position); padding sorts to the end in its own order
    keys = torch.where(rows.unsqueeze(1), keys, position / input_ids.shape[1])
    keys = torch.where(valid, keys, 2.0 + position)
    return input_ids.gather(1, keys.argsort(dim=1))
