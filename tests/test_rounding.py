"""The rounding algorithms of npuemu.numerics.rounding against independent NumPy references.

The references never shift significands: they find the two neighbours of the
exact value in the target format with NumPy's own (round-to-nearest-even)
conversions and ``nextafter``, then pick one by comparing exact float64
values.  ``test_vec_cast`` reuses them for the instructions.
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from npuemu.numerics import half as H
from npuemu.numerics import rounding as R

NONE, RINT, FLOOR, CEIL, ROUND, TRUNC, ODD = range(7)

# float32 signalling NaNs raise "invalid" when NumPy widens them; the references handle NaN explicitly
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
DIRECTED = (RINT, FLOOR, CEIL, ROUND, TRUNC)
ALL_MODES = (NONE, *DIRECTED, ODD)


# --------------------------------------------------------------------------- references


def _pick(mode: int, neg: np.ndarray, exact: np.ndarray, below: np.ndarray, above: np.ndarray,
          lo, hi, lo_odd: np.ndarray, mid_cmp: np.ndarray):
    """Choose between the magnitude neighbours ``lo <= |x| <= hi``.

    ``below``/``above`` say whether |x| is nearer ``lo``/``hi`` (neither: a tie),
    ``lo_odd`` whether ``lo`` is the odd one of the pair.
    """
    if mode in (NONE, RINT):
        take_hi = above | (~below & ~above & lo_odd)
    elif mode == ROUND:
        take_hi = ~below
    elif mode == FLOOR:
        take_hi = neg
    elif mode == CEIL:
        take_hi = ~neg
    elif mode == TRUNC:
        take_hi = np.zeros_like(neg)
    else:  # ODD
        take_hi = ~lo_odd
    return np.where(exact, lo, np.where(take_hi, hi, lo))


def ref_to_f16(x: np.ndarray, mode: int) -> np.ndarray:
    """float16 bits of the exact values ``x`` (float64) rounded in ``mode``; IEEE overflow, NaN kept."""
    x = np.asarray(x, np.float64)
    neg = np.signbit(x)
    a = np.abs(x)
    with np.errstate(over="ignore", invalid="ignore"):
        c = a.astype(np.float16)                                     # nearest (even), maybe inf
        up = c.astype(np.float64) > a
        lo = np.where(up, np.nextafter(c, np.float16(0)), c)
        hi = np.where(c.astype(np.float64) < a, np.nextafter(c, np.float16(np.inf)), c)
        hi = np.where(up, c, hi)
        lo64 = lo.astype(np.float64)
        hi64 = np.where(np.isinf(hi), 65536.0, hi.astype(np.float64))   # the next binade, for the midpoint
        mid = (lo64 + hi64) / 2
    exact = lo64 == a
    lo_bits, hi_bits = lo.view(np.uint16), hi.view(np.uint16)
    mag = _pick(mode, neg, exact, a < mid, a > mid, lo_bits, hi_bits, (lo_bits & 1) == 1, None)
    out = (mag | np.where(neg, 0x8000, 0)).astype(np.uint16)
    f32 = x.astype(np.float32).view(np.uint32)
    nan = np.isnan(x)
    out[nan] = (((f32[nan] >> 16) & 0x8000) | 0x7E00 | ((f32[nan] >> 13) & 0x3FF)).astype(np.uint16)
    inf = np.isinf(x)
    out[inf] = np.where(neg[inf], 0xFC00, 0x7C00)
    return out


def ref_to_f32(x: np.ndarray, mode: int) -> np.ndarray:
    """float32 bits of exact values ``x`` (float64, e.g. int32 or any float32) rounded in ``mode``."""
    x = np.asarray(x, np.float64)
    neg = np.signbit(x)
    a = np.abs(x)
    c = a.astype(np.float32)
    up = c.astype(np.float64) > a
    lo = np.where(up, np.nextafter(c, np.float32(0)), c)
    hi = np.where(up, c, np.where(c.astype(np.float64) < a, np.nextafter(c, np.float32(np.inf)), c))
    mid = (lo.astype(np.float64) + hi.astype(np.float64)) / 2
    lo_bits, hi_bits = lo.view(np.uint32), hi.view(np.uint32)
    mag = _pick(mode, neg, lo.astype(np.float64) == a, a < mid, a > mid, lo_bits, hi_bits, (lo_bits & 1) == 1,
                None)
    return (mag | np.where(neg, np.uint32(0x80000000), np.uint32(0))).astype(np.uint32)


def ref_f32_to_bf16(bits: np.ndarray, mode: int) -> np.ndarray:
    """bfloat16 bits of float32 patterns rounded in ``mode``: neighbours by truncating the magnitude."""
    bits = np.asarray(bits, np.uint32)
    neg = (bits >> 31) == 1
    mag = bits & 0x7FFFFFFF
    lo = (mag >> 16).astype(np.uint32)
    hi = lo + 1                                             # 0x7F80 (infinity) past the largest finite
    a = mag.view(np.float32).astype(np.float64)
    lo64 = (lo << 16).view(np.float32).astype(np.float64)
    mid = ((lo << 16) | 0x8000).view(np.float32).astype(np.float64)
    out = _pick(mode, neg, lo64 == a, a < mid, a > mid, lo, hi, (lo & 1) == 1, None)
    out = out | np.where(neg, 0x8000, 0)
    nan = np.isnan(mag.view(np.float32))
    out[nan] = (bits[nan] >> 16) | 0x40
    inf = mag == 0x7F800000
    out[inf] = bits[inf] >> 16
    return out.astype(np.uint16)


def ref_to_int(x: np.ndarray, mode: int, dtype) -> np.ndarray:
    """Exact values ``x`` (float64) rounded to integers in ``mode``, saturated to ``dtype``; NaN -> 0."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        if mode in (NONE, RINT):
            r = np.rint(x)
        elif mode == FLOOR:
            r = np.floor(x)
        elif mode == CEIL:
            r = np.ceil(x)
        elif mode == TRUNC:
            r = np.trunc(x)
        else:
            r = np.trunc(x + np.copysign(0.5, x))
    info = np.iinfo(dtype)
    out = np.zeros(x.shape, np.int64)
    ok = np.isfinite(r) & (r >= info.min) & (r <= float(info.max)) & (r < 2.0 ** 63)
    out[ok] = r[ok].astype(np.int64)
    out[~np.isnan(r) & (r > 0) & ~ok] = info.max
    out[~np.isnan(r) & (r < 0) & ~ok] = info.min
    return out.astype(dtype)


def ref_integral(bits: np.ndarray, mode: int) -> np.ndarray:
    """float32 patterns rounded to integral float32 values (sign kept, NaN quieted)."""
    x = np.asarray(bits, np.uint32).view(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        r = {RINT: np.rint, FLOOR: np.floor, CEIL: np.ceil, TRUNC: np.trunc}.get(
            mode, lambda v: np.trunc(v + np.copysign(0.5, v)))(x)
    out = r.astype(np.float32).view(np.uint32).copy()
    nan = np.isnan(x)
    out[nan] = np.asarray(bits, np.uint32)[nan] | 0x400000
    return out


def f32_samples(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random float32 bit patterns plus the cases rounding gets wrong first."""
    edge = [0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000,
            0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0x3F800000, 0xBF800000,
            0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x47800000, 0xC77FF000, 0xC77FEFFF,  # f16 overflow
            0x33800000, 0x33000000, 0x33000001, 0xB3000000, 0x387FC000, 0x38800000, 0x387FE000]   # f16 subnormals
    r = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    # values in the float16 range, where the interesting rounding happens
    mid = (rng.integers(0x33000000, 0x47800000, n // 2, dtype=np.uint64)).astype(np.uint32)
    mid |= rng.integers(0, 2, n // 2, dtype=np.uint64).astype(np.uint32) << 31
    # exact ties for float16 (13 dropped bits = 0x1000) and bfloat16 (16 dropped bits = 0x8000)
    ties16 = (mid[: n // 8] & ~np.uint32(0x1FFF)) | 0x1000
    ties_bf = (r[: n // 8] & ~np.uint32(0xFFFF)) | 0x8000
    return np.concatenate([np.array(edge, np.uint32), r, mid, ties16, ties_bf])


# --------------------------------------------------------------------------- compiled drivers
# Arguments are int64/bool, as the vector instructions pass them, so these reuse their compilations.


@njit
def _narrow(bits, mode, sat, dm, de):
    out = np.empty(bits.size, np.int64)
    for i in range(bits.size):
        out[i] = R.narrow_float(bits[i], mode, sat, R.F32_M, R.F32_E, dm, de)
    return out


@njit
def _to_int(bits, mode, m, e, lo, hi):
    out = np.empty(bits.size, np.int64)
    for i in range(bits.size):
        out[i] = R.float_to_int(bits[i], mode, m, e, lo, hi)
    return out


@njit
def _from_int(v, mode, m, e):
    out = np.empty(v.size, np.int64)
    for i in range(v.size):
        out[i] = R.int_to_float(v[i], mode, m, e)
    return out


@njit
def _integral(bits, mode):
    out = np.empty(bits.size, np.int64)
    for i in range(bits.size):
        out[i] = R.round_integral(bits[i], mode, R.F32_M, R.F32_E)
    return out


def _i64(a) -> np.ndarray:
    return np.asarray(a).astype(np.int64)


# --------------------------------------------------------------------------- tests


def test_shift_round_against_exact_rationals():
    from fractions import Fraction
    import math
    for k in range(0, 6):
        for mag in range(0, 70):
            for neg in (False, True):
                x = Fraction(mag, 1 << k)
                want = {
                    RINT: round(x), FLOOR: math.floor(x) if not neg else math.ceil(x),
                    CEIL: math.ceil(x) if not neg else math.floor(x), TRUNC: math.floor(x),
                    ROUND: math.floor(x + Fraction(1, 2)),
                }
                for mode, w in want.items():
                    assert R.shift_round(np.uint64(mag), np.int64(k), neg, np.int64(mode)) == w, (mag, k, neg, mode)
                odd = math.floor(x) | (0 if x.denominator == 1 else 1)
                assert R.shift_round(np.uint64(mag), np.int64(k), neg, np.int64(ODD)) == odd
    # every bit dropped (shifts of 64 and more)
    top = np.uint64(1 << 63)
    assert R.shift_round(top, np.int64(64), False, np.int64(RINT)) == 0          # exactly half: tie to even 0
    assert R.shift_round(top + np.uint64(1), np.int64(64), False, np.int64(RINT)) == 1
    assert R.shift_round(top, np.int64(64), False, np.int64(ROUND)) == 1
    assert R.shift_round(np.uint64(1), np.int64(200), True, np.int64(FLOOR)) == 1
    assert R.shift_round(np.uint64(1), np.int64(200), False, np.int64(ODD)) == 1
    assert R.shift_round(np.uint64(1), np.int64(200), False, np.int64(ROUND)) == 0


@pytest.mark.parametrize("mode", ALL_MODES)
def test_f32_to_f16_every_mode(rng, mode):
    bits = f32_samples(rng, 60_000)
    got = _narrow(_i64(bits), np.int64(mode), False, R.F16_M, R.F16_E).astype(np.uint16)
    want = ref_to_f16(bits.view(np.float32), mode)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(hex(bits[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


def test_f32_to_f16_nearest_even_matches_numpy_and_f16c(rng):
    bits = f32_samples(rng, 60_000)
    got = _narrow(_i64(bits), np.int64(RINT), False, R.F16_M, R.F16_E).astype(np.uint16)
    x = bits.view(np.float32)
    with np.errstate(over="ignore"):
        numpy_bits = x.astype(np.float16).view(np.uint16)
    ok = ~np.isnan(x)
    np.testing.assert_array_equal(got[ok], numpy_bits[ok])
    f16c = np.array([H.f32_to_f16(v) for v in x[:2000]], np.uint16)     # the fast path the instruction takes
    np.testing.assert_array_equal(got[:2000], f16c)


@pytest.mark.parametrize("mode", DIRECTED)
def test_f32_to_bf16_every_mode(rng, mode):
    bits = f32_samples(rng, 60_000)
    got = _narrow(_i64(bits), np.int64(mode), False, R.BF16_M, R.BF16_E).astype(np.uint16)
    want = ref_f32_to_bf16(bits, mode)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(hex(bits[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]
    if mode == RINT:
        ml = pytest.importorskip("ml_dtypes")
        x = bits.view(np.float32)
        ok = ~np.isnan(x)
        np.testing.assert_array_equal(got[ok], x[ok].astype(ml.bfloat16).view(np.uint16))


def test_saturation_mode():
    f = np.array([np.inf, -np.inf, np.nan, 1e6, -1e6, 65504.0, 65520.0, 1.0], np.float32)
    got = _narrow(_i64(f.view(np.uint32)), np.int64(RINT), True, R.F16_M, R.F16_E).astype(np.uint16)
    np.testing.assert_array_equal(got, [0x7BFF, 0xFBFF, 0, 0x7BFF, 0xFBFF, 0x7BFF, 0x7BFF, 0x3C00])


def test_overflow_follows_the_rounding_direction():
    big = np.array([70000.0, -70000.0], np.float32).view(np.uint32)
    inf, ninf, mx, nmx = 0x7C00, 0xFC00, 0x7BFF, 0xFBFF
    want = {RINT: [inf, ninf], ROUND: [inf, ninf], TRUNC: [mx, nmx], ODD: [mx, nmx],
            FLOOR: [mx, ninf], CEIL: [inf, nmx]}
    for mode, w in want.items():
        got = _narrow(_i64(big), np.int64(mode), False, R.F16_M, R.F16_E)
        assert list(got) == w, mode


@pytest.mark.parametrize("dtype", [np.int32, np.int16, np.int8, np.uint8])
def test_f16_to_int_exhaustive(dtype):
    bits = np.arange(1 << 16, dtype=np.uint16)
    x = bits.view(np.float16).astype(np.float64)
    info = np.iinfo(dtype)
    for mode in (NONE, *DIRECTED):
        got = _to_int(_i64(bits), np.int64(mode), R.F16_M, R.F16_E, np.int64(info.min), np.int64(info.max))
        np.testing.assert_array_equal(got, ref_to_int(x, mode, dtype), err_msg=f"mode {mode}")


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
def test_f32_to_int(rng, dtype):
    bits = f32_samples(rng, 40_000)
    bits = np.concatenate([bits, np.array([0x5EFFFFFF, 0x5F000000, 0xDF000000, 0xDF000001, 0x4EFFFFFF,
                                           0x4F000000, 0xCF000000, 0xCF000001, 0x46FFFE00, 0x47000000,
                                           0x3F000000, 0xBF000000, 0x3FC00000, 0xC0200000], np.uint32)])
    x = bits.view(np.float32).astype(np.float64)
    info = np.iinfo(dtype)
    for mode in DIRECTED:
        got = _to_int(_i64(bits), np.int64(mode), R.F32_M, R.F32_E, np.int64(info.min), np.int64(info.max))
        np.testing.assert_array_equal(got, ref_to_int(x, mode, dtype), err_msg=f"mode {mode}")


def test_bf16_to_int32_exhaustive():
    bits = np.arange(1 << 16, dtype=np.uint32)
    x = (bits << 16).view(np.float32).astype(np.float64)
    for mode in DIRECTED:
        got = _to_int(_i64(bits), np.int64(mode), R.BF16_M, R.BF16_E, np.int64(-(1 << 31)), np.int64((1 << 31) - 1))
        np.testing.assert_array_equal(got, ref_to_int(x, mode, np.int32), err_msg=f"mode {mode}")


def test_int_to_float(rng):
    i16 = np.arange(-(1 << 15), 1 << 15, dtype=np.int64)
    i32 = np.concatenate([rng.integers(-(1 << 31), 1 << 31, 50_000), (1 << np.arange(31)) + 1,
                          -(1 << np.arange(31)) - 1, [(1 << 31) - 1, -(1 << 31), 16777217, 16777219, 33554438]])
    for mode in (NONE, *DIRECTED):
        got16 = _from_int(i16, np.int64(mode), R.F16_M, R.F16_E).astype(np.uint16)
        np.testing.assert_array_equal(got16, ref_to_f16(i16.astype(np.float64), mode), err_msg=f"mode {mode}")
        got32 = _from_int(_i64(i32), np.int64(mode), R.F32_M, R.F32_E).astype(np.uint32)
        np.testing.assert_array_equal(got32, ref_to_f32(i32.astype(np.float64), mode), err_msg=f"mode {mode}")


def test_int64_to_float32(rng):
    v = np.concatenate([rng.integers(-(1 << 63), (1 << 63) - 1, 3000, dtype=np.int64),
                        np.array([(1 << 63) - 1, -(1 << 63), (1 << 40) + (1 << 16), (1 << 40) + (1 << 16) + 1,
                                  -((1 << 40) + (1 << 16)), 3 << 60], np.int64)])
    for mode in DIRECTED:
        got = _from_int(v, np.int64(mode), R.F32_M, R.F32_E).astype(np.uint32).view(np.float32)
        for x, g in zip(v.tolist(), got):
            c = np.float32(x)                       # one rounding (to nearest even)
            lo = c if int(c) <= x else np.nextafter(c, np.float32(-np.inf))
            hi = lo if int(lo) == x else np.nextafter(lo, np.float32(np.inf))
            if int(lo) == x:
                want = lo
            elif mode == FLOOR:
                want = lo
            elif mode == CEIL:
                want = hi
            elif mode == TRUNC:
                want = lo if x > 0 else hi
            else:
                d = 2 * x - int(lo) - int(hi)       # sign of x - midpoint
                if d == 0:
                    even = lo if (lo.view(np.uint32) & 1) == 0 else hi
                    want = even if mode == RINT else (hi if x > 0 else lo)
                else:
                    want = hi if d > 0 else lo
            assert g == want, (x, mode, g, want)


@pytest.mark.parametrize("mode", DIRECTED)
def test_round_integral(rng, mode):
    bits = f32_samples(rng, 30_000)
    extra = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.3, 8388607.5, -8388608.5, 4194304.5],
                     np.float32).view(np.uint32)
    bits = np.concatenate([bits, extra])
    got = _integral(_i64(bits), np.int64(mode)).astype(np.uint32)
    np.testing.assert_array_equal(got, ref_integral(bits, mode))
