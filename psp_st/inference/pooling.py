"""Mean pooling of piece vectors over a flat id array, torch-free: with numba a compiled kernel (numpy has no fused
gather-sum; gather, then reduce is ~4x slower), else numpy (the same vectors to float32 rounding)."""

from __future__ import annotations

import functools
import mmap
import sys
from collections.abc import Callable

import numpy as np
import numpy.typing as npt


@functools.cache
def _numba_kernel() -> Callable[..., None] | None:
    """The compiled kernel, or ``None`` without numba (or without a folder for its compiled code)."""
    from psp_st.io.extras import import_kernels

    kernels = import_kernels("psp_st.inference.pooling_kernel")
    return None if kernels is None else kernels.pool_mean


#: Pieces pooled in numpy, one piece at a time in the kernel's order (the same bits, slower), before the kernel is
#: loaded: loading numba and the compiled code costs time and memory once per process (T4 in
#: benchmarks/results/audit_round5/start_findings.md), so a small job never does.
KERNEL_AFTER_PIECES = 100_000
_pieces_before_kernel = 0


@functools.cache
def _numba_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def _kernel_due(pieces: int) -> bool:
    """Count ``pieces`` more pieces to pool; whether to pool them with the kernel (loaded, or now worth loading)."""
    global _pieces_before_kernel
    _pieces_before_kernel += pieces
    return bool(_numba_kernel.cache_info().currsize) or _pieces_before_kernel >= KERNEL_AFTER_PIECES


def _pool_sequential(
    weights: np.ndarray, flat: np.ndarray, offsets: np.ndarray, empty_row: int, normalize: bool, out: np.ndarray
) -> None:
    """The compiled kernel's arithmetic in numpy: float32 sums in piece order, divided by the count, normalised by the
    float32 sum of squares in dimension order (bit for bit its vectors)."""
    for i in range(len(offsets) - 1):
        start, stop = int(offsets[i]), int(offsets[i + 1])
        if stop == start:
            out[i] = weights[empty_row]
        else:
            total = np.zeros(weights.shape[1], dtype=np.float32)
            for piece in flat[start:stop]:
                total += weights[piece]
            np.divide(total, np.float32(stop - start), out=out[i])
        if normalize:
            vector = out[i]
            norm = np.add.accumulate(vector * vector)[-1]
            vector /= max(np.float32(np.sqrt(norm)), np.float32(1e-12))


def has_compiled_kernel() -> bool:
    """Whether pooling runs the compiled (numba) kernel."""
    return _numba_kernel() is not None


#: Piece-vector elements the numpy fallback gathers at once (64 MiB of float32): it pads up to 64 texts to the
#: longest, and 64 texts of 20,000 pieces at d=384 had taken 1.8 GB (N8-5 in audit_round8/numerics_findings.md).
GATHER_ELEMENTS = 1 << 24


def _pool_numpy(
    weights: np.ndarray, flat: np.ndarray, offsets: np.ndarray, empty_row: int, out: np.ndarray, group: int = 64
) -> None:
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    budget = max(1, GATHER_ELEMENTS // max(weights.shape[1], 1))  # pieces per gather
    start = 0
    while start < len(order):
        longest = int(lengths[order[min(start + group, len(order)) - 1]])  # sorted: the group's last is its longest
        rows = order[start : start + max(1, min(group, budget // max(longest, 1)))]
        start += len(rows)
        counts = lengths[rows]
        width = int(counts.max(initial=0))
        if width == 0:
            out[rows] = weights[empty_row]
            continue
        if width > budget:  # one text longer than a gather: summed a gather at a time
            first = int(offsets[rows[0]])
            total = np.zeros(weights.shape[1], dtype=np.float32)
            for piece in range(first, first + width, budget):
                total += weights[flat[piece : min(piece + budget, first + width)]].sum(axis=0, dtype=np.float32)
            out[rows[0]] = total / np.float32(width)
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

    Row ``i`` averages ``weights[flat[offsets[i]:offsets[i + 1]]]`` in piece order (``weights[empty_row]`` if
    empty), then with ``normalize`` ``x / max(|x|, 1e-12)``. ``weights``: float32, or finite float16. Runs the
    compiled kernel (its first :data:`KERNEL_AFTER_PIECES` pieces in numpy, the same bits), else torch's
    ``embedding_bag`` if torch is already imported (never imported here), else numpy.
    """
    supported = weights.dtype in (np.float32, np.float16) and weights.shape[1] > 0
    if supported and _numba_installed() and not _kernel_due(len(flat)):
        _pool_sequential(weights, flat, offsets, empty_row, normalize, out)
        return out
    kernel = _numba_kernel()
    if kernel is not None and weights.dtype in (np.float32, np.float16):
        bits = weights.view(np.uint16) if weights.dtype == np.float16 else weights  # numba has no CPU float16
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
    """The dtype an engine keeps ``dtype`` weights in: float16 with numba installed (the kernel pools it, and numpy in
    its order before it loads; asked without loading it), else float32."""
    if np.dtype(dtype) == np.float16 and _numba_installed():
        return np.dtype(np.float16)
    return np.dtype(np.float32)


def huge_page_copy(weights: np.ndarray, dtype: npt.DTypeLike = np.float32) -> np.ndarray:
    """``weights`` as ``dtype`` on 2 MiB pages where the OS offers them (Linux ``madvise``), else an ordinary copy:
    at d=1024 each piece vector fills a 4 KiB page, so pooling's random row reads would miss the TLB each time."""
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
