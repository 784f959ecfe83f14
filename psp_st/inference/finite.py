"""Finite-or-fail for inference outputs: ``embed``/``score`` never write NaN or infinity."""

from __future__ import annotations

import numpy as np


class NonFiniteOutputError(ValueError):
    """A model produced NaN or infinite embeddings (bad weights, or an overflow)."""


def check_finite(vectors: np.ndarray) -> np.ndarray:
    """Return ``vectors`` if every value is finite, else raise naming the first bad row (0-based, in this batch)."""
    finite = np.isfinite(vectors)
    if finite.all():
        return vectors
    bad = np.flatnonzero(~finite.reshape(len(vectors), -1).all(axis=1))
    raise NonFiniteOutputError(
        f"the model produced non-finite (NaN/inf) embeddings for {len(bad)} of {len(vectors)} texts (first: text "
        f"{int(bad[0])} of this batch); nothing was written. Check the model's weights (re-save or retrain it)."
    )
