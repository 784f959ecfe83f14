"""Mean pooling of piece vectors over a flat id array: a fused gather-sum kernel, torch-free.

``torch.nn.functional.embedding_bag`` does this in one pass over the ids; numpy has no fused gather-sum, and
its gather-then-reduce passes run about 4x slower at d=1024 (measured with ``benchmarks/encode_speed.py``'s
corpus). So the kernel is compiled with numba when it is installed (``pip install "psp-st[fast]"``, optional:
:mod:`psp_st.inference.pooling_kernel`: four rows per pass over the accumulator, software prefetch of the next
rows, at least as fast as ``embedding_bag``; it releases the GIL so batches run in parallel threads); without numba
a numpy version (gather length-sorted padded groups, sum) gives the same vectors to float32 rounding, slower.

Both compute, per row ``i`` with pieces ``flat[offsets[i]:offsets[i + 1]]``: the float32 mean of their weight
rows in piece order, the ``empty_row`` weight row when the row has no piece, and then, with ``normalize``, the
L2-normalized vector (``x / max(|x|, 1e-12)``, as ``torch.nn.functional.normalize``).

Weights may be float32 or float16; float16 rows are widened to float32 element by element as they are read (the
same vectors as widening the weights first, bit for bit). With the compiled kernel, pooling straight from float16
halves the weight memory and the bytes read per piece, so an engine keeps a float16 release's weights as float16
(:func:`weights_dtype`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Literal

import numpy as np
import numpy.typing as npt

#: The compiled kernel once built, ``False`` once numba was found missing, ``None`` before the first look.
_KERNEL: Callable[..., None] | Literal[False] | None = None


def _numba_kernel() -> Callable[..., None] | None:
    """The compiled kernel, or ``None`` if numba is not installed (machine code cached on disk by numba)."""
    global _KERNEL
    if _KERNEL is None:
        try:
            from psp_st.inference.pooling_kernel import pool_mean as kernel
        except ImportError:
            _KERNEL = False
            return None
        _KERNEL = kernel
    return _KERNEL or None


def has_compiled_kernel() -> bool:
    """Whether pooling runs the compiled (numba) kernel."""
    return _numba_kernel() is not None


def _pool_numpy(
    weights: np.ndarray, flat: np.ndarray, offsets: np.ndarray, empty_row: int, out: np.ndarray, group: int = 64
) -> None:
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    for start in range(0, len(order), group):
        rows = order[start : start + group]
        counts = lengths[rows]
        width = int(counts.max(initial=0))
        if width == 0:
            out[rows] = weights[empty_row]
            continue
        ids = np.full((len(rows), width), -1, dtype=np.int64)
        row_of = np.repeat(np.arange(len(rows)), counts)
        col_of = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        ids[row_of, col_of] = flat[np.repeat(offsets[rows], counts) + col_of]
        gathered = weights[np.maximum(ids, 0)].astype(np.float32, copy=False)
        gathered[ids < 0] = 0.0
        sums = gathered.sum(axis=1, dtype=np.float32)
        empty = counts == 0
        sums[~empty] /= counts[~empty, None].astype(np.float32)
        sums[empty] = weights[empty_row]
        out[rows] = sums


def _pool_torch(
    torch, weights: np.ndarray, flat: np.ndarray, offsets: np.ndarray, empty_row: int, out: np.ndarray
) -> None:
    vectors = torch.nn.functional.embedding_bag(
        torch.from_numpy(flat), torch.from_numpy(weights), torch.from_numpy(offsets[:-1]), mode="mean"
    )
    out[...] = vectors.numpy()
    out[offsets[1:] == offsets[:-1]] = weights[empty_row]


def pool_mean(
    weights: np.ndarray, flat: np.ndarray, offsets: np.ndarray, empty_row: int, normalize: bool, out: np.ndarray
) -> np.ndarray:
    """Write the mean piece vector of each row into ``out`` (float32, ``(len(offsets) - 1, dim)``) and return it.

    ``weights``: float32, or float16 that is finite (the kernel does not widen float16 infinities or NaN). Runs
    the compiled kernel when numba is installed; else, in a process that has already imported torch (never
    imported here), torch's ``embedding_bag`` (same summation order, so the same vectors); else numpy.
    """
    kernel = _numba_kernel()
    if kernel is not None and weights.dtype in (np.float32, np.float16):
        # numba has no float16 type on CPU: the kernel reads float16 as its uint16 bits and widens them itself
        bits = weights.view(np.uint16) if weights.dtype == np.float16 else weights
        kernel(bits, flat, offsets, empty_row, bool(normalize), out)
        return out
    torch = sys.modules.get("torch")
    if torch is not None and weights.dtype == np.float32:
        _pool_torch(torch, weights, flat, offsets, empty_row, out)
    else:
        _pool_numpy(weights, flat, offsets, empty_row, out)
    if normalize:
        _normalize_rows(out)
    return out


def weights_dtype(dtype: npt.DTypeLike) -> np.dtype:
    """The dtype an engine keeps weights of ``dtype`` in: float16 stays float16 when the compiled kernel pools
    from it (half the memory and memory traffic, the same vectors); everything else becomes float32 (a float32
    model is never rounded)."""
    if np.dtype(dtype) == np.float16 and has_compiled_kernel():
        return np.dtype(np.float16)
    return np.dtype(np.float32)


def huge_page_copy(weights: np.ndarray, dtype: npt.DTypeLike = np.float32) -> np.ndarray:
    """``weights`` as ``dtype`` in memory backed by 2 MiB pages where the OS offers them (Linux transparent huge
    pages, ``madvise``), else an ordinary copy.

    At d=1024 every piece vector fills a whole 4 KiB page, so pooling's random row reads miss the TLB on
    nearly every piece; with 2 MiB pages the weights span a few dozen pages. Pooling then measured 10-20% less
    CPU time (noisy shared machine).
    """
    import mmap

    dtype = np.dtype(dtype)
    nbytes = weights.size * dtype.itemsize
    page = 2 << 20
    if not hasattr(mmap, "MADV_HUGEPAGE") or nbytes < page:
        return np.array(weights, dtype=dtype, order="C")
    region = mmap.mmap(-1, (nbytes + 2 * page - 1) // page * page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    region.madvise(mmap.MADV_HUGEPAGE)
    raw = np.frombuffer(region, dtype=np.uint8)
    start = -raw.ctypes.data % page  # the array starts on a 2 MiB boundary
    copy = raw[start : start + nbytes].view(dtype).reshape(weights.shape)
    copy[...] = weights
    return copy


def _normalize_rows(out: np.ndarray) -> None:
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))
    out /= np.maximum(norms, np.float32(1e-12))[:, None]
