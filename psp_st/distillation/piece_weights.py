"""SIF weights ``a / (a + p(piece))`` for a static model's rows (Arora et al., 2017): neither Sentence-Transformers
nor model2vec exposes them for a sentencepiece vocabulary counted on our own text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from psp_st.tokenization.sentencepiece import SentencePieceTokenizer


def piece_counts(tokenizer: SentencePieceTokenizer, texts: Sequence[str]) -> np.ndarray:
    """How often each piece id occurs when ``tokenizer`` segments ``texts`` (length ``tokenizer.vocab_size``)."""
    flat, _ = tokenizer.encode_flat(texts)
    return np.bincount(np.asarray(flat, dtype=np.int64), minlength=tokenizer.vocab_size)[: tokenizer.vocab_size]


def sif_weights(counts: np.ndarray, a: float) -> np.ndarray:
    """``a / (a + p)`` per piece id, ``p = count / total``, rescaled to mean 1 (so the vectors keep their scale);
    ``a`` > 0: the smaller, the harder frequent pieces are pushed down."""
    if not a > 0:
        raise ValueError(f"the SIF constant a must be > 0, got {a}")
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 1 or counts.size == 0 or np.any(counts < 0):
        raise ValueError("counts must be a non-empty 1-d array of non-negative counts")
    probability = counts / max(float(counts.sum()), 1.0)
    weights = a / (a + probability)
    return weights / weights.mean()
