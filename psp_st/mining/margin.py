"""Scoring nearest-neighbour candidates by the ratio margin (Artetxe & Schwenk 2019, section 3), which discounts
"hub" sentences that are close to everything::

    margin(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / 2k  +  sum_{z in NN_k(y)} cos(y, z) / 2k )
"""

from __future__ import annotations

import numpy as np

STRATEGIES = ("all", "max")


def knn_mean(sims: np.ndarray) -> np.ndarray:
    """Mean of each row's neighbour similarities, ignoring missing neighbours (``-inf``); 0 for a row with none."""
    sims = np.asarray(sims, dtype=np.float64)
    finite = np.isfinite(sims)
    count = finite.sum(axis=1)
    return np.divide(np.where(finite, sims, 0.0).sum(axis=1), count, out=np.zeros(len(sims)), where=count > 0)


def ratio_margin(cos: np.ndarray, mean1: np.ndarray, mean2: np.ndarray) -> np.ndarray:
    """``cos / ((mean1 + mean2) / 2)`` elementwise (the ratio margin; ``nan`` where the denominator is not > 0)."""
    denominator = (np.asarray(mean1, dtype=np.float64) + np.asarray(mean2, dtype=np.float64)) / 2
    cos = np.asarray(cos, dtype=np.float64)
    return np.divide(cos, denominator, out=np.full(cos.shape, np.nan), where=denominator > 0)


def candidate_pairs(forward_ids: np.ndarray, backward_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Unique candidate pairs ``(i, j)`` sorted, from source row i's neighbours ``forward_ids[i]`` and (bitext) target
    row j's ``backward_ids[j]``; monolingual pairs are unordered, returned once with ``i < j``; ids -1 are skipped."""
    n, k = forward_ids.shape
    left = np.repeat(np.arange(n, dtype=np.int64), k)
    right = forward_ids.reshape(-1).astype(np.int64)
    if backward_ids is None:
        left, right = np.minimum(left, right), np.maximum(left, right)
        valid = (left >= 0) & (left != right)
    else:
        m, kb = backward_ids.shape
        left = np.concatenate([left, backward_ids.reshape(-1).astype(np.int64)])
        right = np.concatenate([right, np.repeat(np.arange(m, dtype=np.int64), kb)])
        valid = (left >= 0) & (right >= 0)
    pairs = np.unique(np.stack([left[valid], right[valid]], axis=1), axis=0)
    return pairs[:, 0], pairs[:, 1]


def best_margin_mask(left: np.ndarray, right: np.ndarray, margin: np.ndarray, monolingual: bool) -> np.ndarray:
    """The ``max`` strategy: True for pairs that are the best-margin candidate of their left or right sentence
    (monolingual: of a sentence at either end); ties keep the first pair in ``(i, j)`` order."""
    keep = np.zeros(len(margin), dtype=bool)
    if not len(margin):
        return keep
    score = np.nan_to_num(np.asarray(margin, dtype=np.float64), nan=-np.inf)
    sides = [np.concatenate([left, right])] if monolingual else [left, right]
    scores = [np.concatenate([score, score])] if monolingual else [score, score]
    for ends, end_scores in zip(sides, scores, strict=True):
        order = np.lexsort((-end_scores, ends))  # by sentence, best score first
        first = np.ones(len(order), dtype=bool)
        first[1:] = ends[order][1:] != ends[order][:-1]
        keep[order[first] % len(margin)] = True
    return keep
