"""Finite-or-fail for inference outputs: ``embed``/``score`` never write NaN or infinity."""

from __future__ import annotations

import numpy as np


class NonFiniteOutputError(ValueError):
    """A model produced NaN or infinite embeddings (bad weights, or an overflow)."""


def check_finite(vectors: np.ndarray, start: int = 0) -> np.ndarray:
    """Return ``vectors`` if every value is finite, else raise naming the first bad row (``start`` + its index)."""
    finite = np.isfinite(vectors)
    if finite.all():
        return vectors
    bad = np.flatnonzero(~finite.reshape(len(vectors), -1).all(axis=1))
    first = int(bad[0])
    if vectors.dtype == np.float16 and np.isinf(vectors[first]).any():
        fix = "a value exceeds float16's range (65504); float32 output (without --float16) works"
    else:
        fix = "check the model's weights (re-save or retrain it)"
    raise NonFiniteOutputError(
        f"the model produced non-finite (NaN/inf) embeddings for {len(bad)} of {len(vectors)} texts (first: row "
        f"{start + first}); they were not written: {fix}."
    )
