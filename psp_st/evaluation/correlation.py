"""Pearson and Spearman correlation with the checks SciPy leaves out (constant input gives a silent NaN)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike


class UndefinedCorrelationError(ValueError):
    """A correlation is undefined: fewer than two pairs, or one side is constant."""


def as_scores(values: ArrayLike, what: str, name: str) -> np.ndarray:
    """``values`` as a 1-D float64 array, or a ValueError naming ``name`` and the first NaN/inf row."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name}: {what} must be one-dimensional, got shape {array.shape}")
    bad = np.flatnonzero(~np.isfinite(array))
    if len(bad):
        raise ValueError(f"{name}: {what} has {len(bad)} NaN/inf values, first at row {int(bad[0])}")
    return array


def correlations(
    gold: Sequence[float] | np.ndarray, predicted: Sequence[float] | np.ndarray, name: str = "scores"
) -> dict[str, float]:
    """``{"pearson", "spearman"}`` between gold scores and predicted similarities (SciPy, ties averaged).

    Where SciPy (what ST and MTEB call) warns and returns NaN for a constant side, this raises
    :class:`UndefinedCorrelationError` naming ``name``; NaN inputs and length mismatches raise ``ValueError``."""
    from scipy.stats import pearsonr, spearmanr

    gold_array = as_scores(gold, "gold scores", name)
    predicted_array = as_scores(predicted, "predicted similarities", name)
    if len(gold_array) != len(predicted_array):
        raise ValueError(f"{name}: {len(gold_array)} gold scores but {len(predicted_array)} predictions")
    if len(gold_array) < 2:
        raise UndefinedCorrelationError(f"{name}: a correlation needs at least 2 pairs, got {len(gold_array)}")
    for what, array in (("gold scores", gold_array), ("predicted similarities", predicted_array)):
        if np.ptp(array) == 0:
            raise UndefinedCorrelationError(
                f"{name}: all {len(array)} {what} are equal ({array[0]:.6g}); the correlation is undefined"
                + (" (did the model map every text to the same vector?)" if what.startswith("predicted") else "")
            )
    return {
        "pearson": float(pearsonr(gold_array, predicted_array)[0]),
        "spearman": float(spearmanr(gold_array, predicted_array)[0]),
    }
