"""The matmul kernels against NumPy: every kernel and dtype at odd shapes, tails on every axis.

Shapes are (M, K, N) with M in {1, 17, 130}, K in {7, 40, 129}, N in {15, 33}:
single rows (GEMV), sizes one past a fractal, and K that leaves a partial L0
step and L1 chunk.  Tolerances are the catalog's (docs/kernels.md): int8 is
exact; float16/bfloat16 inputs are compared with float32 NumPy on the upcast
inputs, rounded once, within one unit in the last place of the output;
float32 within the difference of two float32 summation orders.
"""
from __future__ import annotations

import numpy as np
import pytest

from npuemu.kernels import linear, matmul, matmul_int8, matmul_queue
from npuemu.kernels._host import to_dtype
from npuemu.kernels.catalog import BY_NAME, compare, matmul_dims
from npuemu.platform import Platform
from npuemu.tiling.matmul import base_tiles, core_block, matmul_tiling
from npuemu.host.run import make_context

SHAPES = [(1, 7, 15), (17, 40, 33), (130, 129, 15), (17, 129, 33), (1, 40, 33), (130, 7, 15)]
FLOATS = ("float16", "bfloat16", "float32")
TOL = BY_NAME["matmul"].tolerance


def operands(rng, dtype, m, k, n, trans_b=False):
    a = to_dtype(rng.standard_normal((m, k)), dtype)
    b = to_dtype(rng.standard_normal((n, k) if trans_b else (k, n)) / np.sqrt(k), dtype)
    return a, b


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("run", [matmul.matmul, matmul_queue.matmul_queue], ids=["static", "queue"])
def test_matmul_kernels_match_numpy(run, dtype, rng):
    for m, k, n in SHAPES:
        a, b = operands(rng, dtype, m, k, n)
        out = run(a, b)
        ref = matmul.reference(a, b)
        assert out.shape == (m, n) and out.dtype == a.dtype
        ok, err = compare(out, ref, TOL[dtype])
        assert ok, f"{run.__name__} {dtype} M={m} K={k} N={n}: max error {err}"


# bfloat16's transposed kernel is float16's with other dtype codes (the same instructions, copies and sync):
# test_matmul_with_transposed_b[float16] runs that code and test_matmul_kernels_match_numpy[static-bfloat16]
# the bfloat16 numerics by default
TRANSPOSED = [pytest.param(d, marks=pytest.mark.slow(reason="covered by test_matmul_with_transposed_b[float16] "
                                                     "and test_matmul_kernels_match_numpy[static-bfloat16]"))
              if d == "bfloat16" else d for d in FLOATS]


@pytest.mark.parametrize("dtype", TRANSPOSED)
def test_matmul_with_transposed_b(dtype, rng):
    for m, k, n in SHAPES[:3]:
        a, b = operands(rng, dtype, m, k, n, trans_b=True)
        ok, err = compare(matmul.matmul(a, b, trans_b=True), matmul.reference(a, b, trans_b=True), TOL[dtype])
        assert ok, f"{dtype} M={m} K={k} N={n}: {err}"


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("activation", ["gelu", "leaky_relu"])
def test_linear_matches_numpy(activation, dtype, rng):
    for m, k, n in SHAPES:
        x, w = operands(rng, dtype, m, k, n)
        bias = to_dtype(rng.standard_normal(n), dtype)
        out = linear.linear(x, w, bias, activation, 0.1)
        ref = linear.reference(x, w, bias, activation, 0.1)
        ok, err = compare(out, ref, TOL[dtype])
        assert ok, f"linear {activation} {dtype} M={m} K={k} N={n}: {err}"


def test_linear_with_a_torch_layout_weight(rng):
    x, w = operands(rng, "float16", 17, 40, 33, trans_b=True)
    bias = to_dtype(rng.standard_normal(33), "float16")
    out = linear.linear(x, w, bias, "gelu", trans_b=True)
    ok, err = compare(out, linear.reference(x, w, bias, "gelu", trans_b=True), TOL["float16"])
    assert ok, err


@pytest.mark.parametrize("out_dtype, scale", [("int32", 1.0), ("int8", 1 / 256), ("float16", 1 / 1000)])
def test_int8_matmul_is_exact(out_dtype, scale, rng):
    for m, k, n in SHAPES:
        a = rng.integers(-128, 128, (m, k), dtype=np.int8)
        b = rng.integers(-128, 128, (k, n), dtype=np.int8)
        out = matmul_int8.matmul_int8(a, b, out_dtype, scale)
        ref = matmul_int8.reference(a, b, out_dtype, scale)
        assert out.dtype == ref.dtype
        assert np.array_equal(out, ref), f"{out_dtype} M={m} K={k} N={n}"


def test_int8_extremes_saturate_and_stay_exact():
    a = np.full((17, 129), -128, np.int8)
    b = np.full((129, 33), -128, np.int8)
    assert np.all(matmul_int8.matmul_int8(a, b) == 129 * 128 * 128)
    assert np.all(matmul_int8.matmul_int8(a, b, "int8", 1.0) == 127)


def test_debug_mode_gives_identical_results(rng):
    a, b = operands(rng, "float16", 17, 40, 33)
    assert np.array_equal(matmul.matmul(a, b, debug=True).view(np.uint16), matmul.matmul(a, b).view(np.uint16))


def test_full_checks_are_clean(rng):
    """The hand-placed flags (static kernel) and the cube -> vector hand-off (Linear) pass check='full'.

    N = 15 gives every core whole rows of C, 9 cores in all, each with a K tail.
    """
    a, b = operands(rng, "float16", 130, 129, 15)
    ok, err = compare(matmul.matmul(a, b, check="full"), matmul.reference(a, b), TOL["float16"])
    assert ok, err
    bias = to_dtype(rng.standard_normal(15), "float16")
    # gelu: the specialisation tests/test_races.py checks at full too (compiled once for both)
    out = linear.linear(a, b, bias, "gelu", check="full")
    ok, err = compare(out, linear.reference(a, b, bias, "gelu"), TOL["float16"])
    assert ok, err


def test_many_tiles_per_core_and_few_cores(rng):
    """A 3-core part: each core walks several base tiles and K chunks, tails on every axis."""
    small = Platform.custom("test-matmul-3aic", aiv_count=6, aic_count=3)
    a, b = operands(rng, "float32", 300, 700, 290)
    ok, err = compare(matmul_queue.matmul_queue(a, b, platform=small), matmul.reference(a, b), TOL["float32"])
    assert ok, err


# ------------------------------------------------------------------------------ host side, no launch


@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (17, 33, 40), (130, 15, 129), (1000, 3000, 77), (8192, 64, 1024)])
def test_core_blocks_and_base_tiles_cover_c_exactly(m, n, k):
    ctx = make_context([np.empty((m, k), np.float16), np.empty((k, n), np.float16)], [np.empty((m, n), np.float16)])
    t = matmul_tiling(ctx).tiling_data
    hits = np.zeros((m, n), np.int32)
    for idx in range(t.usedCoreNum):
        m0, n0, rows, cols = core_block(t, idx)
        assert rows > 0 and cols > 0
        for i, j, tm, tn in base_tiles(t, rows, cols):
            assert 0 < tm <= t.baseM and 0 < tn <= t.baseN
            hits[m0 + i:m0 + i + tm, n0 + j:n0 + j + tn] += 1
    assert np.all(hits == 1)


def test_int8_base_k_holds_whole_fractals():
    ctx = make_context([np.empty((33, 7), np.int8), np.empty((7, 15), np.int8)], [np.empty((33, 15), np.int32)])
    assert matmul_tiling(ctx).tiling_data.baseK % 32 == 0


def test_matmul_dims_fold_drawn_shapes():
    assert matmul_dims((5, 6, 7)) == (5, 6, 7)
    for shape in [(1,), (1 << 20,), (3, 1000), (1000, 3), (131, 1)]:
        m, k, n = matmul_dims(shape)
        assert 1 <= m <= 130 and 1 <= k <= 129 and 1 <= n <= 97


def test_bad_operands_are_reported(rng):
    from npuemu.errors import LaunchError
    a, b = operands(rng, "float16", 4, 5, 6)
    with pytest.raises(LaunchError, match="K of A \\(5\\) and B \\(6\\) differ"):
        matmul.matmul(a, b.T)
    with pytest.raises(LaunchError, match="share a dtype"):
        matmul.matmul(a, b.astype(np.float32))
    with pytest.raises(LaunchError, match="activation must be one of"):
        linear.linear(a, b, np.zeros(6, np.float16), "tanh")
