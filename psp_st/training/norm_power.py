"""Row norms to a power after training: every piece vector becomes ``row * |row| ** (power - 1)``, its direction kept.

Mean pooling weighs a piece by the norm of its vector. SIF (``model.init_sif``) sets those weights from piece
frequencies before training, and training then moves them; a power below 1 evens them out again afterwards, folded
into the table, so inference costs nothing more (psp-en: ``norm_power: 0.9``, round 25 and 26 of
``benchmarks/results/psp_en_v3_ablation.md``). Sentence-Transformers has no post-training re-weighting of a static
table, and model2vec's weights come from frequencies only, hence this module."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from torch import nn


def powered_row_norms(table: np.ndarray, power: float) -> np.ndarray:
    """``table`` (rows = piece vectors) with every row's norm raised to ``power``, computed in float64 and returned
    in ``table``'s dtype; zero rows (padding, all-zero pieces) stay zero."""
    if not 0 < power <= 1:
        raise ValueError(f"norm_power must be in (0, 1], got {power!r}")
    rows = np.asarray(table, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    scale = np.divide(norms**power, norms, out=np.zeros_like(norms), where=norms > 0)
    return (rows * scale).astype(np.asarray(table).dtype)


def raise_row_norms(embedding: nn.Embedding, power: float) -> None:
    """Raise the norm of every row of ``embedding`` (a P-SP model's piece table) to ``power``, in place."""
    import torch

    weight = embedding.weight
    table = weight.detach().cpu()
    table = table.float() if table.dtype == torch.bfloat16 else table  # numpy has none; copy_ casts the result back
    powered = powered_row_norms(table.numpy(), power)
    with torch.no_grad():
        weight.copy_(torch.from_numpy(powered))
