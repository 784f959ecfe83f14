"""Pooling straight from float16 weights: bit for bit the vectors of widening the weights to float32 first."""

from __future__ import annotations

import numpy as np
import pytest


def compiled_kernel():
    import psp_st.inference.pooling as pooling

    kernel = pooling._numba_kernel()
    if kernel is None:
        pytest.skip("numba is not installed")
    return kernel


def awkward_float16(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    """Random float16 weights over every exponent, with subnormals, zeros, negative zeros and the extremes."""
    rng = np.random.default_rng(seed)
    weights = (rng.standard_normal((rows, dim)) * 2.0 ** rng.integers(-24, 14, (rows, dim))).astype(np.float16)
    special = np.array([0.0, -0.0, 6e-8, -6e-8, 6.1e-5, -3e-6, 65504.0, -65504.0], dtype=np.float16)
    weights.flat[rng.choice(weights.size, 4 * len(special), replace=False)] = np.tile(special, 4)
    weights[1] = np.float16(-0.0)  # a whole negative-zero row
    bits = weights.view(np.uint16)
    assert np.isfinite(weights).all() and (((bits & 0x7C00) == 0) & ((bits & 0x3FF) != 0)).sum() > rows
    return weights


@pytest.mark.parametrize("native", [True, False])
def test_half_to_float_is_numpys_float16_to_float32_on_every_finite_value(native):
    """Both conversions (hardware ``fpext half``, the integer code) on all 63,488 finite float16 bit patterns."""
    compiled_kernel()
    import numba
    from numba.core.registry import cpu_target
    from numba.extending import intrinsic

    from psp_st.inference.pooling_kernel import half_to_float, native_half

    if native and not native_half(cpu_target.target_context):
        pytest.skip("numba's target has no hardware float16 conversion")

    @intrinsic
    def convert(typingctx, value):
        def codegen(context, builder, signature, args):
            return half_to_float(builder, args[0], native)

        return numba.types.float32(value), codegen

    @numba.njit
    def widen_all(bits, out):
        for i in range(len(bits)):
            out[i] = convert(bits[i])

    bits = np.arange(1 << 16, dtype=np.uint16)
    bits = bits[np.isfinite(bits.view(np.float16))]
    out = np.empty(len(bits), dtype=np.float32)
    widen_all(bits, out)
    assert np.array_equal(out.view(np.uint32), bits.view(np.float16).astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("normalize", [False, True])
def test_float16_kernel_equals_widen_then_float32_kernel_bit_for_bit(normalize):
    kernel = compiled_kernel()
    weights = awkward_float16(60, 72)
    rng = np.random.default_rng(1)
    lengths = np.array([0, 1, 2, 3, 4, 5, 7, 8, 9, 17, 40, 1, 0])
    flat = rng.integers(0, 60, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    half, widened = (np.empty((len(lengths), 72), np.float32) for _ in range(2))
    kernel(weights.view(np.uint16), flat, offsets, 1, normalize, half)  # empty rows: the negative-zero row
    kernel(weights.astype(np.float32), flat, offsets, 1, normalize, widened)
    assert np.array_equal(half.view(np.uint32), widened.view(np.uint32))
    assert np.signbit(half[[0, -1]]).all()  # -0.0 read as -0.0


def test_pool_mean_dispatches_float16_to_the_kernel_without_a_copy_of_the_weights():
    from psp_st.inference.pooling import pool_mean

    compiled_kernel()
    weights = awkward_float16(30, 16)
    flat = np.array([3, 4, 5, 29, 0, 2], dtype=np.int64)
    offsets = np.array([0, 3, 3, 6])
    out = pool_mean(weights, flat, offsets, 7, False, np.empty((3, 16), np.float32))
    expected = pool_mean(weights.astype(np.float32), flat, offsets, 7, False, np.empty((3, 16), np.float32))
    assert np.array_equal(out.view(np.uint32), expected.view(np.uint32))


def test_numpy_fallback_pools_float16_as_its_float32_widening():
    import psp_st.inference.pooling as pooling

    weights = awkward_float16(40, 24)
    lengths = np.array([2, 0, 5, 1, 9])
    flat = np.random.default_rng(2).integers(0, 40, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    half, widened = (np.empty((len(lengths), 24), np.float32) for _ in range(2))
    pooling._pool_numpy(weights, flat, offsets, 3, half)
    pooling._pool_numpy(weights.astype(np.float32), flat, offsets, 3, widened)
    assert np.array_equal(half, widened)
    wide = weights.astype(np.float64)
    np.testing.assert_allclose(half[2], wide[flat[2:7]].mean(axis=0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(half[1], weights[3].astype(np.float32))


def test_engine_keeps_float16_weights_and_gives_the_widened_vectors(sp_tokenizer, caption_sentences):
    from psp_st.inference import PSPEngine

    compiled_kernel()
    weights = awkward_float16(sp_tokenizer.vocab_size, 32)
    half = PSPEngine(weights, sp_tokenizer, threads=1)
    full = PSPEngine(weights.astype(np.float32), sp_tokenizer, threads=1)
    assert half.weights.dtype == np.float16 and full.weights.dtype == np.float32
    texts = caption_sentences[:300] + ["", "a dog \u2603 runs"]
    assert np.array_equal(half.encode(texts).view(np.uint32), full.encode(texts).view(np.uint32))


def test_engine_refuses_non_finite_float16_weights(sp_tokenizer):
    from psp_st.inference import PSPEngine

    weights = np.zeros((sp_tokenizer.vocab_size, 8), dtype=np.float16)
    weights[5, 2] = np.inf
    with pytest.raises(ValueError, match="non-finite"):
        PSPEngine(weights, sp_tokenizer)
