"""Mean pooling of piece vectors over a flat id array: a fused gather-sum kernel, torch-free.

``torch.nn.functional.embedding_bag`` does this in one pass over the ids; numpy has no fused gather-sum, and
its gather-then-reduce passes run about 4x slower at d=1024 (measured with ``benchmarks/encode_speed.py``'s
corpus). So the kernel is compiled with numba when it is installed (``pip install "psp-st[fast]"``, optional:
with software prefetch of the next pieces' rows, as fast as ``embedding_bag``; it releases the GIL so batches
run in parallel threads); without numba a numpy
version (gather length-sorted padded groups, sum) gives the same vectors to float32 rounding, slower.

Both compute, per row ``i`` with pieces ``flat[offsets[i]:offsets[i + 1]]``: the float32 mean of their weight
rows in piece order, the ``empty_row`` weight row when the row has no piece, and then, with ``normalize``, the
L2-normalized vector (``x / max(|x|, 1e-12)``, as ``torch.nn.functional.normalize``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Literal

import numpy as np

#: The compiled kernel once built, ``False`` once numba was found missing, ``None`` before the first look.
_KERNEL: Callable[..., None] | Literal[False] | None = None
#: Pieces ahead whose weight row the compiled kernel prefetches (rows are cold: sentencepiece runs between batches).
PREFETCH_AHEAD = 2


def _prefetch_intrinsic(numba):
    """``prefetch(weights, row, col)``: LLVM's prefetch of ``weights[row, col]`` (numba exposes no prefetch)."""
    from llvmlite import ir  # type: ignore[import-untyped]  # llvmlite ships no type information
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch(typingctx, array, row, col):  # pragma: no cover - compiled
        def codegen(context, builder, signature, args):
            array_type = signature.args[0]
            view = context.make_array(array_type)(context, builder, args[0])
            pointer = cgutils.get_item_pointer(context, builder, array_type, view, [args[1], args[2]])
            byte_pointer = builder.bitcast(pointer, ir.IntType(8).as_pointer())
            int32 = ir.IntType(32)
            function = cgutils.get_or_insert_function(
                builder.module,
                ir.FunctionType(ir.VoidType(), [byte_pointer.type, int32, int32, int32]),
                "llvm.prefetch.p0",
            )
            builder.call(function, [byte_pointer, ir.Constant(int32, 0), ir.Constant(int32, 3), ir.Constant(int32, 1)])
            return context.get_dummy_value()

        return numba.types.void(array, row, col), codegen

    return prefetch


def _numba_kernel() -> Callable[..., None] | None:
    """The compiled kernel, or ``None`` if numba is not installed (compiled once per process, cached on disk)."""
    global _KERNEL
    if _KERNEL is None:
        try:
            import numba
        except ImportError:
            _KERNEL = False
            return None
        prefetch = _prefetch_intrinsic(numba)

        @numba.njit(nogil=True, cache=True)
        def pool_mean(weights, flat, offsets, empty_row, normalize, out):  # pragma: no cover - compiled
            dim = weights.shape[1]
            total = len(flat)
            for i in range(len(offsets) - 1):
                start = offsets[i]
                stop = offsets[i + 1]
                acc = out[i]
                if stop == start:
                    row = weights[empty_row]
                    for d in range(dim):
                        acc[d] = row[d]
                else:
                    for d in range(dim):
                        acc[d] = 0.0
                    for k in range(start, stop):
                        if k + PREFETCH_AHEAD < total:
                            ahead = flat[k + PREFETCH_AHEAD]
                            for d in range(0, dim, 16):  # one prefetch per 64-byte cache line
                                prefetch(weights, ahead, d)
                        row = weights[flat[k]]
                        for d in range(dim):
                            acc[d] += row[d]
                    count = np.float32(stop - start)
                    for d in range(dim):
                        acc[d] /= count
                if normalize:
                    norm = np.float32(0.0)
                    for d in range(dim):
                        norm += acc[d] * acc[d]
                    norm = max(np.float32(np.sqrt(norm)), np.float32(1e-12))
                    for d in range(dim):
                        acc[d] /= norm

        _KERNEL = pool_mean
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

    In a process that has already imported torch (never imported here), torch's ``embedding_bag`` does the
    pooling (the kernel the previous ``PSPEmbedding.embed`` used; in noisy shared-machine runs it was at least as
    fast as the numba kernel there); it sums in the same order, so the vectors are the same.
    """
    torch = sys.modules.get("torch")
    if torch is not None and weights.dtype == np.float32:
        _pool_torch(torch, weights, flat, offsets, empty_row, out)
        if normalize:
            _normalize_rows(out)
        return out
    kernel = _numba_kernel()
    if kernel is not None and weights.dtype == np.float32:
        kernel(weights, flat, offsets, empty_row, bool(normalize), out)
        return out
    _pool_numpy(weights, flat, offsets, empty_row, out)
    if normalize:
        _normalize_rows(out)
    return out


def _normalize_rows(out: np.ndarray) -> None:
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))
    out /= np.maximum(norms, np.float32(1e-12))[:, None]
