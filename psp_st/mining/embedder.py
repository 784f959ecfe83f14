"""The one place where sharded embedding and mining open a model: ``open_embedder(name, threads)``.

Returns an object with ``.dim`` and ``.encode(texts, normalize=False) -> float32 (n, dim)``. Today it wraps
:func:`psp_st.hub.load` (P-SP releases, model folders, Hub ids, ``all-MiniLM-L6-v2``: one name rule,
:mod:`psp_st.io.model_names`), encoded through :func:`psp_st.inference.encode_texts`; a torch-free engine with the
same two members can replace the body without touching the jobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Embedder:
    """A Sentence-Transformers model behind the two-member embedder interface."""

    model: Any
    batch_size: int = 8192

    @property
    def dim(self) -> int:
        return int(self.model.get_embedding_dimension())

    def encode(self, texts: Sequence[str], normalize: bool = False) -> np.ndarray:
        from psp_st.inference import encode_texts

        return encode_texts(self.model, list(texts), batch_size=self.batch_size, normalize=normalize)


def open_embedder(name: str, threads: int | None = None) -> Embedder:
    """Open ``name`` (model folder, psp-st short name, Hub id, or ``all-MiniLM-L6-v2``) with ``threads`` threads."""
    from psp_st.hub.load import load, set_threads

    return Embedder(set_threads(load(name), threads))
