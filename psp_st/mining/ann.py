"""Nearest-neighbour search with FAISS (unit vectors: inner product is cosine): exact (flat) below a size
threshold, IVF or HNSW above it, built block by block from :class:`ShardedVectors`."""

from __future__ import annotations

import logging
import math
import os
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from psp_st.arguments import check_int
from psp_st.io.atomic import atomic_path
from psp_st.mining.shards import ShardedVectors

logger = logging.getLogger(__name__)

INDEX_KINDS = ("auto", "flat", "ivf", "ivf-sq8", "hnsw")


def import_faiss():
    """``faiss``, or an ImportError naming the extra."""
    from psp_st.io.extras import require

    return require("faiss", "nearest-neighbour mining")


@dataclass(frozen=True)
class IndexSpec:
    """How to index the vectors.

    Args:
        kind: ``flat`` (exact), ``ivf`` (inverted lists), ``ivf-sq8`` (of 8-bit scalar-quantised vectors: a quarter
            of the memory), ``hnsw`` (graph), or ``auto``: ``flat`` below ``exact_below`` vectors, else ``ivf``.
        nlist: IVF lists (default: ``4 * sqrt(n)``, the FAISS guideline, capped so each list trains on 39+ points).
        hnsw_m / ef_search / ef_construction: HNSW graph degree and search / build beam widths.
        train_size: vectors sampled to train IVF or PCA (default: ``64 * max(nlist, 1024)``).
        pca: reduce the vectors to this many dimensions (a PCA trained with the index) before an IVF/HNSW index;
            the mined pairs' cosines are recomputed in full dimension.
    """

    kind: str = "auto"
    exact_below: int = 100_000
    nlist: int | None = None
    nprobe: int = 16
    hnsw_m: int = 32
    ef_search: int = 128
    ef_construction: int = 80
    train_size: int | None = None
    pca: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.kind not in INDEX_KINDS:
            raise ValueError(f"unknown index kind {self.kind!r}; use one of {INDEX_KINDS}")
        check_int("nprobe (--nprobe)", self.nprobe)
        check_int("exact_below (--exact-below)", self.exact_below, minimum=0)
        for name in ("pca", "nlist", "train_size"):
            if getattr(self, name) is not None:
                check_int(f"{name} (--{name.replace('_', '-')})", getattr(self, name))

    def resolve(self, n: int) -> str:
        """The concrete kind for ``n`` vectors."""
        if self.kind == "auto":
            return "flat" if n < self.exact_below else "ivf"
        return self.kind

    def config(self) -> dict[str, Any]:
        return asdict(self)


def ivf_lists(spec: IndexSpec, n: int) -> int:
    """The IVF lists used for ``n`` vectors: ``spec.nlist`` (default ``4 * sqrt(n)``), at most one per 39."""
    nlist = spec.nlist or int(4 * math.sqrt(n))
    return max(1, min(nlist, n // 39))


def build_index(vectors: ShardedVectors, spec: IndexSpec) -> Any:
    """A FAISS inner-product index over all rows of ``vectors`` (row i gets id i)."""
    faiss = import_faiss()
    n, dim = len(vectors), vectors.dim
    kind = spec.resolve(n)
    reduced = dim if kind == "flat" else min(spec.pca or dim, dim)
    nlist = 0
    if kind == "flat":
        inner = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        inner = faiss.IndexHNSWFlat(reduced, spec.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = spec.ef_construction
        inner.hnsw.efSearch = spec.ef_search
    else:
        nlist = ivf_lists(spec, n)
        quantizer = faiss.IndexFlatIP(reduced)
        if kind == "ivf":
            inner = faiss.IndexIVFFlat(quantizer, reduced, nlist, faiss.METRIC_INNER_PRODUCT)
        else:
            inner = faiss.IndexIVFScalarQuantizer(
                quantizer, reduced, nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
            )
        inner.cp.seed = spec.seed
        inner.nprobe = min(spec.nprobe, nlist)
    index = inner if reduced == dim else faiss.IndexPreTransform(faiss.PCAMatrix(dim, reduced), inner)
    if not index.is_trained:
        size = min(n, spec.train_size or 64 * max(nlist, 1024))
        if size < nlist:
            raise ValueError(f"--train-size {size} is below the {nlist} IVF lists: pass more, or a smaller --nlist")
        if size < reduced < dim:  # FAISS's PCA has at most as many components as training vectors
            raise ValueError(
                f"--pca {reduced} needs at least {reduced} training vectors, got {size} (of {n}): pass a smaller "
                "--pca, or more --train-size"
            )
        sample = np.sort(np.random.default_rng(spec.seed).choice(n, size=size, replace=False))
        logger.info("training %s (%d lists, pca %s) on %d of %d vectors", kind, nlist, spec.pca, size, n)
        index.train(vectors.take(sample))
    for _, block in vectors.blocks():
        index.add(block)
    return index


def save_index(index: Any, path: str | os.PathLike) -> None:
    """Write ``index`` atomically (FAISS's own format: data only)."""
    faiss = import_faiss()
    with atomic_path(path) as tmp:
        faiss.write_index(index, str(tmp))


def load_index(path: str | os.PathLike, nprobe: int | None = None, ef_search: int | None = None) -> Any:
    """Read an index written by :func:`save_index`, setting the search-time knobs that the file does not store."""
    faiss = import_faiss()
    index = faiss.read_index(str(path))
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexPreTransform) else index
    if nprobe is not None and hasattr(inner, "nprobe"):
        inner.nprobe = min(nprobe, inner.nlist)
    if ef_search is not None and hasattr(inner, "hnsw"):
        inner.hnsw.efSearch = ef_search
    return index


def search(index: Any, queries: np.ndarray, k: int, exclude: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` ``(sims, ids)`` of each query, best first; ``exclude[i]`` (a row id) is removed from query i's list
    wherever it ranks (duplicates may tie with it). Missing neighbours have id -1 and similarity -inf."""
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    extra = 0 if exclude is None else 1
    sims, ids = index.search(queries, k + extra)
    sims[ids < 0] = -np.inf
    if exclude is None:
        return sims, ids
    keep = ids != np.asarray(exclude, dtype=np.int64)[:, None]
    keep[keep.sum(1) > k, -1] = False  # self not found: drop the last extra one
    return sims[keep].reshape(len(queries), k), ids[keep].reshape(len(queries), k)


def exact_similarities(queries: np.ndarray, vectors: ShardedVectors, ids: np.ndarray) -> np.ndarray:
    """Inner products of each query with its listed neighbours ``ids`` ``(q, k)``; ``-inf`` where an id is -1."""
    found = np.maximum(ids, 0)
    rows = vectors.take(found.reshape(-1)).reshape(*found.shape, vectors.dim)
    sims = np.einsum("qd,qkd->qk", np.asarray(queries, dtype=np.float32), rows)
    sims[ids < 0] = -np.inf
    return sims


def exact_search(
    queries: np.ndarray, vectors: ShardedVectors, k: int, exclude: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Brute-force top-``k`` by inner product (the reference for recall); ``exclude[i]`` is never query i's neighbour."""
    faiss = import_faiss()
    queries = np.ascontiguousarray(queries, dtype=np.float32)
    heap = faiss.ResultHeap(len(queries), k, keep_max=True)
    for first, block in vectors.blocks(size=16_384):  # bounds the (queries x block) temporaries
        sims = queries @ block.T
        if exclude is not None:
            local = np.asarray(exclude) - first
            rows = np.flatnonzero((local >= 0) & (local < len(block)))
            sims[rows, local[rows]] = -np.inf
        heap.add_result(sims, np.broadcast_to(np.arange(first, first + len(block)), sims.shape))
    heap.finalize()
    heap.D[heap.I < 0] = -np.inf
    return heap.D, heap.I


def recall_at_k(
    approx_ids: np.ndarray,
    exact_ids: np.ndarray,
    approx_sims: np.ndarray | None = None,
    exact_sims: np.ndarray | None = None,
    tolerance: float = 1e-5,
) -> float:
    """Mean share of each query's exact top-k that the approximate top-k found; given both lists' true similarities,
    one that ties with the exact k-th (within ``tolerance``) also counts (duplicates make several right answers)."""
    if approx_ids.shape != exact_ids.shape:
        raise ValueError(f"shapes differ: {approx_ids.shape} vs {exact_ids.shape}")
    if approx_ids.size == 0:
        return float("nan")
    hits = []
    for row, (a, e) in enumerate(zip(approx_ids, exact_ids, strict=True)):
        wanted = max(1, int((e >= 0).sum()))
        found = len(set(a[a >= 0]) & set(e[e >= 0]))
        if approx_sims is not None and exact_sims is not None:
            extra = set(a[(a >= 0) & (approx_sims[row] >= exact_sims[row, wanted - 1] - tolerance)]) - set(e)
            found += len(extra)
        hits.append(min(found, wanted) / wanted)
    return float(np.mean(hits))
