"""Vectorised ``exp`` and ``ln`` with results identical to the C library's, rounded once.

The definition of the transcendental vector instructions
(:mod:`npuemu.isa.vec_unary`) is: widen the element to float64, apply the C
library's ``exp`` or ``log``, round once to the destination type (float32, or
float16 with one rounding).  A call into libm per element costs some 7 ns
and stops LLVM from vectorising the loop; this module computes the same bits
at about 1 ns per element.

How.  :func:`exp64` and :func:`log64` are branch-free float64 approximations
(range reduction by powers of two, a polynomial, integer operations on the
bits) that LLVM vectorises.  Their relative error is below 2**-49 (the
polynomials' own error is below 2**-53, plus a few roundings; at most
2**-52 measured over every float32 input by
``benchmarks/exhaustive_transcendental.py``), the C library's below 2**-52
(glibc's is under one ulp; any libm within 2**-44 would do), so the float64 value
libm returns lies within ``y * (1 +- EPS)`` of the fast value ``y``, EPS =
2**-42 leaving a factor of 100 or more to spare.  Rounding is monotone: when
``y * (1 - EPS)`` and ``y * (1 + EPS)`` round to the same destination value,
so does everything between them, libm's result included, and that value is
the result.  Otherwise (a rounding boundary -- a midpoint between two
destination values, the overflow threshold, a subnormal step -- lies within
the interval: 3038 float32 inputs for ``exp``, some 11700 for ``ln``) the element is *flagged*
and recomputed by the definition itself, as are the inputs whose fast path is
not meant to be right: NaN for ``exp``; zero, negatives, infinity and NaN for
``ln``.  Overflow, underflow to zero and subnormal results need no flag:
``exp`` clamps its argument to [-160, 100], where the float64 result is
finite and normal and rounds to the same float32 / float16 infinity, zero or
subnormal as libm's.  A float16 destination rounds to float32 first, which
changes nothing unless that float32 value is a float16 rounding boundary
(:func:`f16_midpoint`, a conservative test, flags those).  So the results are those of the definition by
construction; the exhaustive script confirms it on all 2**32 float32 inputs
(no mismatch, NaN payloads included; some six minutes for both operations),
and tests/test_vmath.py on all float16 and bfloat16 ones.

Loops run in chunks of 64 elements: pass one writes the rounded fast results,
and for a flagged element its *input* (source and destination have the same
storage type), collecting the flags in a 64-bit mask; pass two, only when the
mask is not empty, replaces each flagged element by the exact value of the
input it holds.  That also works in place (destination = source).  The loops
are compiled with floating-point contraction (``fastmath={"contract"}``): an
FMA only makes the approximations more accurate, and the bound above holds
with or without it.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from ..numerics.half import f16_to_f32, f32_to_f16
from .linkage import instruction

EXP, LN = 0, 1
EPS = 2.0 ** -42
CHUNK = 64

_MAGIC = 6755399441055744.0                     # 1.5 * 2**52: adding it rounds to an integer
_MAGIC_BITS = np.int64(0x4338000000000000)
_INVLN2 = 1.4426950408889634
_LN2HI = 6.93147180369123816490e-01             # 32 significant bits: k * _LN2HI is exact for |k| < 2**21
_LN2LO = 1.90821492927058770002e-10
_SQRTHALF_BITS = np.int64(0x3FE6A09E667F3BCD)

# (exp(r) - 1 - r) / r**2 on |r| <= 0.357, degree 9 (Chebyshev interpolation; error below 2**-53)
_E0 = float.fromhex("0x1.0000000000003p-1")
_E1 = float.fromhex("0x1.5555555555585p-3")
_E2 = float.fromhex("0x1.5555555550e66p-5")
_E3 = float.fromhex("0x1.11111110fb935p-7")
_E4 = float.fromhex("0x1.6c16c18a295dcp-10")
_E5 = float.fromhex("0x1.a01a024b51ad5p-13")
_E6 = float.fromhex("0x1.a01979f22290bp-16")
_E7 = float.fromhex("0x1.71dc3bf7d8c52p-19")
_E8 = float.fromhex("0x1.28d591e6f465ep-22")
_E9 = float.fromhex("0x1.b2a05af4d6f5fp-26")

# Q(z) = (2 atanh(s) - 2 s) / (s z), z = s**2 <= 0.0295, degree 6 (error contribution below 2**-57)
_L0 = float.fromhex("0x1.5555555555559p-1")
_L1 = float.fromhex("0x1.999999999335fp-2")
_L2 = float.fromhex("0x1.24924930e3b8fp-2")
_L3 = float.fromhex("0x1.c71c5fa173d81p-3")
_L4 = float.fromhex("0x1.746389c88d304p-3")
_L5 = float.fromhex("0x1.39e50fbe6f922p-3")
_L6 = float.fromhex("0x1.2c7ac2980eabep-3")


@njit(cache=True, inline="always")
def exp64(x):
    """exp(x) for float64 ``x`` in [-160, 100], relative error below 2**-49; no branches."""
    t = x * _INVLN2 + _MAGIC
    k = np.float64(t).view(np.int64) - _MAGIC_BITS           # round(x / ln 2) as an integer
    kf = t - _MAGIC
    r = (x - kf * _LN2HI) - kf * _LN2LO          # |r| <= ln(2) / 2 + a little
    q = _E9
    q = q * r + _E8
    q = q * r + _E7
    q = q * r + _E6
    q = q * r + _E5
    q = q * r + _E4
    q = q * r + _E3
    q = q * r + _E2
    q = q * r + _E1
    q = q * r + _E0
    p = 1.0 + (r + (r * r) * q)
    return p * np.int64((k + np.int64(1023)) << np.int64(52)).view(np.float64)


@njit(cache=True, inline="always")
def log64(x):
    """log(x) for finite positive normal float64 ``x``, relative error below 2**-49; no branches."""
    bits = np.float64(x).view(np.int64)
    k = (bits - _SQRTHALF_BITS) >> np.int64(52)  # x = 2**k * m, m in [sqrt(1/2), sqrt(2))
    m = np.int64(bits - (k << np.int64(52))).view(np.float64)
    f = m - 1.0
    s = f / (2.0 + f)                            # log(m) = 2 atanh(s)
    z = s * s
    q = _L6
    q = q * z + _L5
    q = q * z + _L4
    q = q * z + _L3
    q = q * z + _L2
    q = q * z + _L1
    q = q * z + _L0
    lm = 2.0 * s + s * z * q
    kf = np.float64(k)
    return kf * _LN2HI + (lm + kf * _LN2LO)


@instruction
def f64_to_f16(x):
    """float64 -> float16 bits with a single rounding (to nearest even).

    Rounds to float32 *to odd* first: that intermediate has more than
    float16's precision plus two bits, so the final round to nearest even is
    the same as rounding the float64 directly.
    """
    r = np.float32(x)
    back = np.float64(r)
    if back == x or r != r or np.isinf(r):
        return f32_to_f16(r)
    bits = r.view(np.uint32)
    if abs(back) > abs(x):
        bits = np.uint32(bits - 1)      # rounded away from zero: step back to the truncated value
    return f32_to_f16(np.uint32(bits | 1).view(np.float32))


@njit(cache=True, inline="always")
def f16_midpoint(v):
    """False only if float32 ``v`` is not halfway between two adjacent float16 values (nor 65520).

    Such a midpoint is an odd multiple of 2**-25 or of 2**(e - 11) for ``v``'s
    exponent ``e`` >= -14, so at least 12 trailing bits of its float32
    significand are zero; zero and infinity are not midpoints.  One float32
    value in 4096 passes the test without being a midpoint, which only costs
    a recomputation.
    """
    u = np.float32(v).view(np.uint32) & np.uint32(0x7FFFFFFF)
    # u - 1 < 0x7F7FFFFF (unsigned): neither zero (it wraps) nor infinity
    return ((u & np.uint32(0xFFF)) == np.uint32(0)) & (np.uint32(u - np.uint32(1)) < np.uint32(0x7F7FFFFF))


@njit(cache=True, inline="always")
def _fast(op, x):
    """``(approximation, flagged)`` of op(x) for float64 ``x`` widened from float32 or float16."""
    if op == EXP:
        xc = min(max(x, -160.0), 100.0)
        return exp64(xc), x != x
    ok = (x > 0.0) & (x < np.inf)
    return log64(x if ok else 1.0), not ok


@njit(cache=True, inline="always")
def _exact(op, x):
    """The definition: libm in float64."""
    if op == EXP:
        return math.exp(x)
    return math.log(x)


def make(op, half):
    """``(run, run_in_place, element)`` for ``op`` (EXP or LN) on float32 or (``half``) float16 storage.

    ``run(d, a)`` sets ``d[i] = op(a[i])`` for arrays that do not overlap,
    ``run_in_place(d)`` sets ``d[i] = op(d[i])`` (both return how many
    elements were flagged), and ``element(v)`` is one stored element's result
    by the definition; all give the same bits.
    """
    @njit(cache=True, inline="always")
    def widen(v):
        return np.float64(f16_to_f32(v)) if half else np.float64(v)

    @njit(cache=True, inline="always")
    def rounded(y):
        """``(y * (1 - EPS) rounded to the storage type, whether y * (1 + EPS) may round elsewhere)``."""
        lo = np.float32(y * (1.0 - EPS))
        bad = lo != np.float32(y * (1.0 + EPS))
        if half:
            # no float16 rounding boundary in the interval: rounding to float32 first changes nothing
            return f32_to_f16(lo), bad | f16_midpoint(lo)
        return lo, bad

    @njit(cache=True, inline="always")
    def element(v):
        y = _exact(op, widen(v))
        return f64_to_f16(y) if half else np.float32(y)

    @njit(cache=True, inline="always")
    def block(dd, aa):
        """One chunk (at most 64 elements); returns how many were flagged."""
        mask = np.uint64(0)
        for t in range(len(dd)):                 # pass one: vectorised
            v = aa[t]
            y, bad = _fast(op, widen(v))
            r, off = rounded(y)
            bad |= off
            dd[t] = v if bad else r              # a flagged element keeps its input for pass two
            mask |= np.uint64(bad) << np.uint64(t)
        flagged = 0
        if mask != 0:                            # pass two: the definition, for flagged elements
            for t in range(len(dd)):
                if (mask >> np.uint64(t)) & np.uint64(1):
                    dd[t] = element(dd[t])
                    flagged += 1
        return flagged

    @njit(cache=True, fastmath={"contract"}, error_model="numpy")
    def run(d, a):
        flagged = 0
        for c0 in range(0, len(d), CHUNK):
            flagged += block(d[c0:c0 + CHUNK], a[c0:c0 + CHUNK])
        return flagged

    @njit(cache=True, fastmath={"contract"}, error_model="numpy")
    def run_in_place(d):
        flagged = 0
        for c0 in range(0, len(d), CHUNK):
            dd = d[c0:c0 + CHUNK]
            flagged += block(dd, dd)             # one array: LLVM sees each load and store at one address
        return flagged

    return run, run_in_place, element


KERNELS = {(op, half): make(op, half) for op in (EXP, LN) for half in (0, 1)}


def apply(op, half, d, a, delta):
    """``d[i] = op(a[i])`` for ``a`` and ``d`` of equal length whose addresses differ by ``delta`` bytes.

    ``op`` (EXP, LN) and ``half`` (0: float32, 1: float16 bits) are
    compile-time constants.  The same memory (``delta == 0``) runs in place,
    disjoint arrays vectorised; arrays that overlap otherwise run one element
    at a time in order, as a plain loop would.  Callable from compiled code only.
    """
    raise NotImplementedError("apply is only callable from compiled code")


@overload(apply, prefer_literal=True)
def _apply(op, half, d, a, delta):
    if not (isinstance(op, types.IntegerLiteral) and isinstance(half, types.IntegerLiteral)):
        return None
    run, run_in_place, element = KERNELS[op.literal_value, half.literal_value]

    def impl(op, half, d, a, delta):
        n = len(d)
        if delta == 0:
            run_in_place(d)
        elif abs(delta) >= n * d.itemsize:
            run(d, a)
        else:
            for i in range(n):
                d[i] = element(a[i])

    return impl
