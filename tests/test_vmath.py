"""The vectorised exp and ln (npuemu.isa.vmath) give the bits of their definition.

The definition (npuemu.isa.vec_unary): the element widened to float64, the C
library's exp or log, one rounding to the destination type.  Checked over
every float16 input and every bfloat16 value (as a float32 input), on
millions of random float32 bit patterns, on edge cases (subnormals, overflow
and underflow thresholds, the smallest normal, special values), in place and
with overlapping operands, and through the level-0 form.
benchmarks/exhaustive_transcendental.py checks all 2**32 float32 inputs.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from npuemu.isa import vec_unary as vu
from npuemu.isa import vmath

OPS = {"exp": vmath.EXP, "ln": vmath.LN}


@njit(error_model="numpy")
def _definition(op, x):
    return math.exp(np.float64(x)) if op == 0 else math.log(np.float64(x))


@njit(error_model="numpy")
def reference_f32(op, x):
    """The definition on float32 elements, one libm call each."""
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = np.float32(_definition(op, x[i]))
    return out


def reference_f16(op, bits):
    """The definition on float16 bit patterns; NumPy rounds float64 to float16 once (its own code, not npuemu's)."""
    with np.errstate(all="ignore"):
        wide = [_definition(op, np.float64(v)) for v in bits.view(np.float16).astype(np.float64)]
        return np.array(wide, np.float64).astype(np.float16).view(np.uint16)


def run_count(name, x, *, dst_offset=None):
    """The count-form instruction ``<name>`` on ``x`` in a fresh UB; ``dst_offset`` bytes from the source (default: apart)."""
    esize = x.dtype.itemsize
    n = len(x)
    st = np.zeros(1024, np.int64)
    size = 2 * n * esize + 1024
    lm = np.zeros(size + 64, np.uint8)
    src = 512
    dst = src + (n * esize + 256 if dst_offset is None else dst_offset)
    lm[src:src + n * esize] = x.view(np.uint8)
    getattr(vu, name)(st, lm, dst, n, src, n, n, 0)
    return lm[dst:dst + n * esize].view(x.dtype).copy()


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    u = np.uint16 if got.dtype.itemsize == 2 else np.uint32
    bad = np.flatnonzero(got.view(u) != want.view(u))
    assert bad.size == 0, f"{bad.size} mismatches, first at {bad[:5]}: {got[bad[:5]]} != {want[bad[:5]]}"


@pytest.mark.parametrize("op", OPS)
def test_every_float16_input(op):
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    got = run_count(f"{op}_f16", bits)
    same_bits(got, reference_f16(OPS[op], bits))


@pytest.mark.parametrize("op", OPS)
def test_every_bfloat16_value_as_float32(op):
    x = (np.arange(65536, dtype=np.uint32) << np.uint32(16)).view(np.float32)
    same_bits(run_count(f"{op}_f32", x), reference_f32(OPS[op], x))


def _edges() -> np.ndarray:
    f32 = np.float32
    around = [88.72283, 88.7228394, 89.0, -87.33654, -87.3365479, -103.27893, -103.972084, -104.0, -150.0,
              -160.0, -1000.0, 100.0, 1000.0, 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 0.6931472, 1.1754944e-38,
              1.1754942e-38, 1e-45, 1.4e-45, 3.4028235e38, -87.0, 11.089866, 11.0898665, -9.704, -17.33, -16.64,
              np.e, 1e-7, -1e-7, 5.9604645e-08]
    out = [np.float32(v) for v in around]
    for v in around:
        b = np.array([v], f32).view(np.uint32)[0]
        out += list(np.arange(int(b) - 300, int(b) + 300, dtype=np.int64).astype(np.uint32).view(f32))
    out += list(np.arange(0, 1 << 16, dtype=np.uint32).view(f32))                  # subnormals
    out += list((np.arange(0, 1 << 16, dtype=np.uint32) | np.uint32(0x80000000)).view(f32))
    out += list(np.array([0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FA00000, 0xFFFFFFFF,
                          0x7F7FFFFF, 0x00800000, 0x80800000, 0x3F800000, 0x3F7FFFFF, 0x3F800001],
                         np.uint32).view(f32))
    return np.array(out, f32)


@pytest.mark.parametrize("op", OPS)
def test_float32_edges_and_special_values(op):
    x = _edges()
    same_bits(run_count(f"{op}_f32", x), reference_f32(OPS[op], x))


@pytest.mark.parametrize("op", OPS)
def test_random_float32_bit_patterns(op):
    rng = np.random.default_rng(20)
    x = rng.integers(0, 1 << 32, 1 << 22, dtype=np.uint64).astype(np.uint32).view(np.float32)
    same_bits(run_count(f"{op}_f32", x), reference_f32(OPS[op], x))
    # the range where the results are finite and nonzero, which the random bit patterns mostly miss
    y = rng.uniform(-104, 88.7, 1 << 21)
    if op == "ln":
        y = np.exp(y)                   # positive finite float32 values from subnormal to near FLT_MAX
    y = y.astype(np.float32)
    same_bits(run_count(f"{op}_f32", y), reference_f32(OPS[op], y))


@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("op", OPS)
def test_flagged_elements_take_the_definition(op, half):
    """Elements whose fast result lies near a rounding boundary exist, are flagged, and come out right."""
    run, _, _ = vmath.KERNELS[OPS[op], half]
    if half:
        x = np.arange(65536, dtype=np.uint32).astype(np.uint16)
        want = reference_f16(OPS[op], x)
    else:
        x = np.random.default_rng(3).uniform(-80, 80, 1 << 20).astype(np.float32)
        if op == "ln":
            x = np.abs(x) + np.float32(1e-3)
        want = reference_f32(OPS[op], x)
    d = np.empty_like(x)
    flagged = run(d, x)
    assert flagged > 0
    same_bits(d, want)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_in_place_and_overlapping(op, dtype):
    rng = np.random.default_rng(5)
    if dtype == "f32":
        x = rng.uniform(-20, 20, 4096).astype(np.float32)
        ref = reference_f32
    else:
        x = rng.uniform(-12, 12, 4096).astype(np.float16).view(np.uint16)
        ref = reference_f16
    if op == "ln":
        x = (np.abs(x.view(np.float16)) if dtype == "f16" else np.abs(x)).view(x.dtype)
    want = ref(OPS[op], x)
    same_bits(run_count(f"{op}_{dtype}", x, dst_offset=0), want)
    # destination behind the source: every element is read before it is overwritten
    same_bits(run_count(f"{op}_{dtype}", x, dst_offset=-64), want)
    # destination ahead: the element loop reads what it wrote 32 elements (f16: 16) before
    k = 64 // x.dtype.itemsize
    buf = np.concatenate([x, np.zeros(k, x.dtype)])
    for i in range(len(x)):
        buf[i + k] = ref(OPS[op], buf[i:i + 1])[0]
    seq = buf[k:]
    same_bits(run_count(f"{op}_{dtype}", x, dst_offset=64), seq)


@pytest.mark.parametrize("op", OPS)
def test_level0_dense_runs(op):
    """The level-0 form with default strides (the vectorised path), full and partial repeats, in place."""
    x = np.random.default_rng(9).uniform(0.01, 30, 64 * 10).astype(np.float32)
    want = reference_f32(OPS[op], x)
    st = np.zeros(1024, np.int64)
    lm = np.zeros(8192, np.uint8)
    lm[:x.nbytes] = x.view(np.uint8)
    fn = getattr(vu, f"{op}_l0_f32")
    # mask 64 of 64 lanes, 10 repeats, block stride 1, repeat stride 8: one dense run
    fn(st, lm, 4096, 640, 0, 640, 1, 0, 64, 0, 10, 1, 1, 8, 8, 0)
    same_bits(lm[4096:4096 + x.nbytes].view(np.float32), want)
    # 40 of 64 lanes: runs of 40, 64 apart, the other lanes untouched
    lm[4096:] = 0
    fn(st, lm, 4096, 640, 0, 640, 1, 0, 40, 0, 10, 1, 1, 8, 8, 0)
    got = lm[4096:4096 + x.nbytes].view(np.float32).reshape(10, 64)
    same_bits(got[:, :40].ravel(), want.reshape(10, 64)[:, :40].ravel())
    assert not got[:, 40:].any()
    # in place
    fn(st, lm, 0, 640, 0, 640, 1, 0, 64, 0, 10, 1, 1, 8, 8, 0)
    same_bits(lm[:x.nbytes].view(np.float32), want)


def test_f16_midpoint_test_is_conservative():
    """Every float16 midpoint (and the overflow threshold) passes the test."""
    h = np.arange(0, 0x7C00, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64)
    mids = np.concatenate([(h[:-1] + h[1:]) / 2, [65520.0]]).astype(np.float32)
    mids = np.concatenate([mids, -mids])
    assert np.all((mids.astype(np.float64) * 2).astype(np.float32) == mids * 2)    # exact in float32
    flags = _midpoints(mids)
    assert flags.all()


@njit
def _midpoints(v):
    out = np.empty(len(v), np.bool_)
    for i in range(len(v)):
        out[i] = vmath.f16_midpoint(v[i])
    return out
