"""The numba kernel of :mod:`psp_st.inference.pooling` (module level: numba caches its machine code). float16 weights
come as ``uint16`` bits (numba has no CPU float16), widened in registers (:func:`widen`): same sums, half the bytes."""

from __future__ import annotations

import platform

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
        prototype = ir.FunctionType(ir.VoidType(), [byte_pointer.type, int32, int32, int32])
        function = cgutils.get_or_insert_function(builder.module, prototype, "llvm.prefetch.p0")
        builder.call(function, [byte_pointer, ir.Constant(int32, 0), ir.Constant(int32, 3), ir.Constant(int32, 1)])
        return context.get_dummy_value()

    return numba.types.void(array, row, col), codegen


def half_to_float(builder, bits, native: bool):  # pragma: no cover - runs inside numba's compiler
    """LLVM IR: the float32 of the float16 whose i16 bits are ``bits``, exact for every finite float16: ``fpext half``
    where ``native`` (x86 F16C, ARM64), else integer code (sign to bit 31, exponent + mantissa shifted into float32
    place, read as a float32 ``2**112`` times too small, times ``2**112``; exact for ``-0.0`` and subnormals too)."""
    int32, float32 = ir.IntType(32), ir.FloatType()
    if native:
        return builder.fpext(builder.bitcast(bits, ir.HalfType()), float32)
    shifted = builder.shl(builder.sext(bits, int32), ir.Constant(int32, 13))
    placed = builder.and_(shifted, ir.Constant(int32, 0x8FFFE000))  # sign, exponent, mantissa; bits 28-30 cleared
    return builder.fmul(builder.bitcast(placed, float32), ir.Constant(float32, 2.0**112))


def native_half(context) -> bool:  # pragma: no cover - runs inside numba's compiler
    """Whether numba's target converts float16 in hardware (x86 F16C, ARM64); else LLVM would call a runtime
    function that numba's JIT may not link."""
    features = str(getattr(context.codegen(), "_tm_features", "")).split(",")
    return "+f16c" in features or platform.machine().lower() in ("aarch64", "arm64")


@intrinsic
def widen(typingctx, value):  # pragma: no cover - compiled
    """``widen(x)``: a float32 ``x`` unchanged; a uint16 ``x`` (finite float16 bits) as the same value in float32."""
    if value == numba.types.float32:
        return numba.types.float32(value), lambda context, builder, signature, args: args[0]
    if value != numba.types.uint16:
        return None

    def codegen(context, builder, signature, args):
        return half_to_float(builder, args[0], native_half(context))

    return numba.types.float32(value), codegen


@numba.njit(nogil=True, cache=True)
def pool_mean(weights, flat, offsets, empty_row, normalize, out):  # pragma: no cover - compiled
    """``weights``: float32, or float16 as ``uint16`` bits (finite); see :func:`psp_st.inference.pooling.pool_mean`."""
    dim = weights.shape[1]
    line = 64 // weights.itemsize  # elements per 64-byte cache line
    total = len(flat)
    # sums go to one reused row that stays in L1 (summing into the large, cold output row was slower)
    acc = np.empty(dim, dtype=np.float32)
    for i in range(len(offsets) - 1):
        start = offsets[i]
        stop = offsets[i + 1]
        vector = out[i]
        if stop == start:
            row = weights[empty_row]
            for d in range(dim):
                vector[d] = widen(row[d])  # type: ignore[call-arg]
        else:
            for d in range(dim):
                acc[d] = 0.0
            k = start
            while k < stop:
                # the rows of the next group are cold (tokenization runs between batches): fetch them now
                for ahead in range(k + GROUP, min(k + 2 * GROUP, total)):
                    for d in range(0, dim, line):  # one prefetch per cache line
                        prefetch(weights, flat[ahead], d)  # type: ignore[call-arg]  # numba supplies typingctx
                if k + GROUP <= stop:  # four rows per pass: a quarter of the accumulator loads and stores
                    r0, r1, r2, r3 = weights[flat[k]], weights[flat[k + 1]], weights[flat[k + 2]], weights[flat[k + 3]]
                    for d in range(dim):
                        acc[d] = (((acc[d] + widen(r0[d])) + widen(r1[d])) + widen(r2[d])) + widen(r3[d])  # type: ignore[call-arg]
                    k += GROUP
                else:
                    row = weights[flat[k]]
                    for d in range(dim):
                        acc[d] += widen(row[d])  # type: ignore[call-arg]
                    k += 1
            count = np.float32(stop - start)
            for d in range(dim):
                vector[d] = acc[d] / count
        if normalize:
            norm = np.float32(0.0)
            for d in range(dim):
                norm += vector[d] * vector[d]
            norm = max(np.float32(np.sqrt(norm)), np.float32(1e-12))
            for d in range(dim):
                vector[d] /= norm
