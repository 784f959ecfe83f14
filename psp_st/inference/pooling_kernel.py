"""The compiled (numba) mean-pooling kernel of :mod:`psp_st.inference.pooling`; imported only when numba is installed.

Module level, so numba caches the machine code on disk (``cache=True``) and a new process loads it instead of
compiling again.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]  # llvmlite ships no type information
from numba.core import cgutils
from numba.extending import intrinsic

#: Pieces added per pass over the accumulator (in piece order, so the float32 sums are the sequential ones).
GROUP = 4


@intrinsic
def prefetch(typingctx, array, row, col):  # pragma: no cover - compiled
    """``prefetch(weights, row, col)``: LLVM's prefetch of ``weights[row, col]`` (numba exposes no prefetch)."""

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
            k = start
            while k < stop:
                # the rows of the next group are cold (tokenization runs between batches): fetch them now
                for ahead in range(k + GROUP, min(k + 2 * GROUP, total)):
                    for d in range(0, dim, 16):  # one prefetch per 64-byte cache line
                        prefetch(weights, flat[ahead], d)  # type: ignore[call-arg]  # numba supplies typingctx
                if k + GROUP <= stop:  # four rows per pass: a quarter of the accumulator loads and stores
                    r0, r1, r2, r3 = weights[flat[k]], weights[flat[k + 1]], weights[flat[k + 2]], weights[flat[k + 3]]
                    for d in range(dim):
                        acc[d] = (((acc[d] + r0[d]) + r1[d]) + r2[d]) + r3[d]
                    k += GROUP
                else:
                    row = weights[flat[k]]
                    for d in range(dim):
                        acc[d] += row[d]
                    k += 1
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
