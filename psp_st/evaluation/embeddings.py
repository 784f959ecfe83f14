"""Embed each distinct text once per evaluation run, and refuse NaN/inf embeddings with a clear error."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from psp_st.arguments import check_int
from psp_st.inference.encode import check_model, encode_texts, takes_fast_path
from psp_st.inference.finite import NonFiniteOutputError
from psp_st.tokenization.text_checks import check_texts


class NonFiniteEmbeddingError(NonFiniteOutputError):
    """The model returned NaN or infinite values for some texts (a kind of the inference layer's error, so catching
    ``NonFiniteOutputError`` catches both)."""


def model_label(model: Any) -> str:
    """A short human-readable name of a model, for error messages and reports."""
    card = getattr(model, "model_card_data", None)
    for attribute in ("model_name", "model_id", "base_model"):
        value = getattr(card, attribute, None) if card is not None else None
        if value:
            return str(value)
    return getattr(model, "name_or_path", None) or type(model).__name__


def check_finite(embeddings: np.ndarray, texts: Sequence[str], model: Any = None) -> np.ndarray:
    """Return ``embeddings`` if every value is finite; else raise naming the first offending text."""
    bad = np.flatnonzero(~np.isfinite(embeddings).all(axis=1))
    if len(bad):
        raise NonFiniteEmbeddingError(
            f"model {model_label(model)} returned NaN/inf embeddings for {len(bad)} of {len(texts)} texts, "
            f"first at index {bad[0]}: {texts[bad[0]]!r:.80}"
        )
    return embeddings


def weights_checksum(model: Any) -> int | None:
    """CRC-32 of the bytes of a torch ``model``'s parameters (``None`` for an engine, which has none): tells a model
    whose weights changed in place (an optimizer step; fused Adam leaves torch's version counters as they were)."""
    parameters = getattr(model, "parameters", None)
    if not callable(parameters):
        return None
    import torch

    checksum = 0
    for parameter in parameters():
        data = parameter.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
        checksum = zlib.crc32(data.numpy(), checksum)
    return checksum


class EmbeddingCache:
    """Encodes texts with ``model.encode`` (a P-SP model: psp-st's engine, the same vectors, faster), each distinct
    text once, and refuses NaN/inf. Rows are float32, unnormalized, exactly what ``model.encode(texts)`` returns;
    when the model's weights (a trainer's evaluator between steps) or ``max_seq_length`` change the cache starts
    again."""

    def __init__(self, model: Any, batch_size: int = 64, show_progress_bar: bool = False) -> None:
        self.model = model
        self.batch_size = check_int("batch_size", batch_size)
        self.show_progress_bar = show_progress_bar
        self._index: dict[str, int] = {}
        self._rows: list[np.ndarray] = []
        self._weights = self._state()

    def __len__(self) -> int:
        return len(self._index)

    def _state(self) -> tuple[int | None, Any]:
        """What the cached vectors depend on besides the texts: the weights and the truncation (C13-3)."""
        return weights_checksum(self.model), getattr(self.model, "max_seq_length", None)

    def add(self, texts: Sequence[str]) -> None:
        """Embed the texts not seen yet, in one ``encode`` call."""
        texts = check_texts(texts)
        weights = self._state()
        if weights != self._weights:  # vectors of older weights or another truncation
            self._index, self._rows, self._weights = {}, [], weights
        new = list(dict.fromkeys(text for text in texts if text not in self._index))
        if not new:
            return
        check_model(self.model)
        if takes_fast_path(self.model):
            try:
                vectors = encode_texts(self.model, new)
            except NonFiniteOutputError as error:  # one error type for evaluation callers, naming the model
                raise NonFiniteEmbeddingError(f"model {model_label(self.model)}: {error}") from error
        else:
            vectors = self.model.encode(
                new, batch_size=self.batch_size, show_progress_bar=self.show_progress_bar, convert_to_numpy=True
            )
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(new):
            raise ValueError(
                f"model {model_label(self.model)} returned embeddings of shape {vectors.shape} for {len(new)} texts"
            )
        check_finite(vectors, new, self.model)
        start = len(self._rows)
        self._rows.extend(vectors)
        self._index.update({text: start + offset for offset, text in enumerate(new)})

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` embeddings of ``texts`` (embedding the unseen ones first); no texts: ``(0, 0)``."""
        texts = check_texts(texts)
        self.add(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._rows[self._index[text]] for text in texts])


def cosine_pairs(embeddings1: np.ndarray, embeddings2: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity, with ST's ``pairwise_cos_sim`` (the function its evaluators use)."""
    import torch
    from sentence_transformers.util import pairwise_cos_sim

    return pairwise_cos_sim(torch.from_numpy(embeddings1), torch.from_numpy(embeddings2)).numpy()


def cosine_matrix(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Full cosine similarity matrix ``(len(queries), len(candidates))`` of 2-D arrays: ST's ``cos_sim`` (the same
    torch operations, the same values) without importing Sentence-Transformers (seconds: transformers, sklearn...)."""
    import torch

    def unit(rows: np.ndarray) -> torch.Tensor:
        return torch.nn.functional.normalize(torch.from_numpy(rows), p=2, dim=-1)

    return torch.mm(unit(queries), unit(candidates).transpose(0, 1)).numpy()
