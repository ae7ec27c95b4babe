"""Rounding exact binary values to narrower formats in every Ascend ``RoundMode``.

The conversion instructions (``Cast``, and later the fixpipe's quantisation)
round an exact value -- a float of a wider format, or an integer -- to a
floating-point format with fewer significand bits or to an integer.  The host
FPU only rounds to nearest even, so every mode is implemented here with integer
arithmetic on the significand, which is exact and independent of the FPU's
rounding state.

Every value to round is written as ``(-1)**neg * mag * 2**exp`` with an unsigned
integer ``mag``.  Rounding to a quantum ``2**q`` drops the ``k = q - exp`` low
bits of ``mag`` (:func:`shift_round`); the dropped bits decide the increment
the same way the Ascend C documentation describes it (the "bits to round" are
the dropped bits, ``M`` the kept significand):

=========  ===================================================================
mode       the kept significand is incremented when
=========  ===================================================================
CAST_RINT  dropped > half, or dropped == half and the kept lsb is 1 (ties to even)
CAST_ROUND dropped >= half (ties away from zero)
CAST_FLOOR dropped != 0 and the value is negative
CAST_CEIL  dropped != 0 and the value is positive
CAST_TRUNC never
CAST_ODD   never, but the kept lsb is set when dropped != 0 (von Neumann rounding)
CAST_NONE  as CAST_RINT (the hardware only names it for conversions that can be
           inexact; exact conversions never consult the mode)
=========  ===================================================================

Floating-point targets follow IEEE 754 semantics, which is what Atlas A2/A3
cores do in their default Inf/NaN overflow mode: a finite value too large for
the target becomes infinity when the mode rounds away from zero (RINT, ROUND,
CEIL for positive and FLOOR for negative values) and the largest finite value
otherwise (TRUNC, ODD, and the other direction of FLOOR/CEIL).  Infinities are
kept; a NaN stays a quiet NaN with the top bits of its payload.  Subnormal
results are produced, never flushed.  ``sat=True`` selects the saturation
mode instead (``aclrtSetDeviceSatMode``): infinities and overflows become the
largest finite value of the sign, NaN becomes +0.

Integer targets saturate at their range (documented for every float->int and
int->narrower-int conversion); NaN converts to 0 (an assumption: the documents
do not say, and 0 is what the saturation mode defines for NaN).

Every function here is an ``@njit`` function callable from compiled code and,
through its dispatcher, from Python.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# RoundMode values (``asc.RoundMode``)
NONE = 0
RINT = 1
FLOOR = 2
CEIL = 3
ROUND = 4
TRUNC = 5
ODD = 6

# classes returned by decode()
FINITE = 0
INF = 1
NAN = 2

# mantissa and exponent widths of the floating-point formats.  They are int64
# scalars rather than Python ints on purpose: Numba compiles a callee once per
# distinct *literal* argument, so passing plain 23s and 8s around would build a
# separate copy of every function below for every format.
F32_M, F32_E = np.int64(23), np.int64(8)
F16_M, F16_E = np.int64(10), np.int64(5)
BF16_M, BF16_E = np.int64(7), np.int64(8)

_U0 = np.uint64(0)
_U1 = np.uint64(1)
_U63 = np.uint64(1 << 63)
_ZERO = np.int64(0)
_RINT = np.int64(RINT)
_EXACT = np.bool_(False)      # "not saturating" as a non-literal argument


@njit(cache=True)
def bit_length(x):
    """Number of significant bits of the uint64 ``x`` (0 for 0)."""
    x = np.uint64(x)
    n = 0
    if x >= np.uint64(1 << 32):
        x >>= np.uint64(32)
        n += 32
    if x >= np.uint64(1 << 16):
        x >>= np.uint64(16)
        n += 16
    if x >= np.uint64(1 << 8):
        x >>= np.uint64(8)
        n += 8
    if x >= np.uint64(1 << 4):
        x >>= np.uint64(4)
        n += 4
    if x >= np.uint64(1 << 2):
        x >>= np.uint64(2)
        n += 2
    if x >= np.uint64(2):
        x >>= np.uint64(1)
        n += 1
    return n + np.int64(x)


@njit(cache=True)
def shift_round(mag, k, neg, mode):
    """``mag / 2**k`` rounded to an integer in ``mode``; ``neg`` is the sign of the value.

    ``mag`` is a uint64 magnitude and ``k`` any non-negative shift (shifts of
    64 or more drop every bit).  Returns the rounded magnitude (uint64).
    """
    mag = np.uint64(mag)
    if k <= 0:
        return mag
    if k < 64:
        q = mag >> np.uint64(k)
        rem = mag & ((_U1 << np.uint64(k)) - _U1)
        half = _U1 << np.uint64(k - 1)
    else:
        q = _U0
        rem = mag
        # for k > 64 the half-ulp 2**(k-1) exceeds every uint64: rem is below it
        half = _U63 if k == 64 else _U0
    inexact = rem != _U0
    if k > 64:
        above, tie = False, False
    else:
        above, tie = rem > half, rem == half
    if mode == ROUND:
        up = above or tie
    elif mode == FLOOR:
        up = inexact and neg
    elif mode == CEIL:
        up = inexact and not neg
    elif mode == TRUNC:
        up = False
    elif mode == ODD:
        if inexact:
            q |= _U1
        up = False
    else:  # RINT, NONE
        up = above or (tie and (q & _U1) != _U0)
    return q + _U1 if up else q


@njit(cache=True)
def decode(bits, mbits, ebits):
    """Split a float bit pattern: ``(cls, neg, mag, exp)`` with value ``(-1)**neg * mag * 2**exp``.

    ``cls`` is FINITE (zeros included), INF or NAN; for NaN ``mag`` is the raw
    mantissa field (the payload).
    """
    bits = np.uint64(bits)
    mmask = (_U1 << np.uint64(mbits)) - _U1
    emask = (_U1 << np.uint64(ebits)) - _U1
    neg = ((bits >> np.uint64(mbits + ebits)) & _U1) != _U0
    efield = np.int64((bits >> np.uint64(mbits)) & emask)
    frac = bits & mmask
    bias = (1 << (ebits - 1)) - 1
    if efield == np.int64(emask):
        return (NAN if frac != _U0 else INF), neg, frac, 0
    if efield == 0:
        return FINITE, neg, frac, 1 - bias - mbits
    return FINITE, neg, frac | (_U1 << np.uint64(mbits)), efield - bias - mbits


@njit(cache=True)
def _overflow(neg, mode, sat, mbits, ebits):
    """The result of a finite value beyond the target's range: infinity or the largest finite value."""
    sign = (_U1 if neg else _U0) << np.uint64(mbits + ebits)
    inf = ((_U1 << np.uint64(ebits)) - _U1) << np.uint64(mbits)
    to_inf = (mode == NONE or mode == RINT or mode == ROUND
              or (mode == CEIL and not neg) or (mode == FLOOR and neg))
    if to_inf and not sat:
        return sign | inf
    return sign | (inf - _U1)


@njit(cache=True)
def round_float(neg, mag, exp, mode, mbits, ebits, sat):
    """``(-1)**neg * mag * 2**exp`` rounded to the float format (mbits, ebits) in ``mode``: its bits.

    Handles every magnitude: results below the normal range become subnormals
    (or zero) rounded at the subnormal quantum, results beyond it overflow as
    described in the module docstring.
    """
    sign = (_U1 if neg else _U0) << np.uint64(mbits + ebits)
    mag = np.uint64(mag)
    if mag == _U0:
        return sign
    bias = (1 << (ebits - 1)) - 1
    emin = 1 - bias
    top = bit_length(mag) - 1 + exp                  # exponent of the leading bit
    qexp = (top if top > emin else emin) - mbits      # exponent of the result's ulp
    k = qexp - exp
    if k <= 0:
        q = mag << np.uint64(-k)
    else:
        q = shift_round(mag, k, neg, mode)
    if (q >> np.uint64(mbits + 1)) != _U0:           # rounded up into the next binade
        q >>= _U1
        qexp += 1
    if q >= (_U1 << np.uint64(mbits)):
        if qexp + mbits > bias:
            return _overflow(neg, mode, sat, mbits, ebits)
        biased = np.uint64(qexp + mbits + bias)
        return sign | (biased << np.uint64(mbits)) | (q - (_U1 << np.uint64(mbits)))
    return sign | q                                  # subnormal (exponent field 0)


@njit(cache=True)
def narrow_float(bits, mode, sat, src_mbits, src_ebits, dst_mbits, dst_ebits):
    """A float of format (src_mbits, src_ebits) rounded to the narrower (dst_mbits, dst_ebits)."""
    cls, neg, mag, exp = decode(bits, src_mbits, src_ebits)
    sign = (_U1 if neg else _U0) << np.uint64(dst_mbits + dst_ebits)
    inf = ((_U1 << np.uint64(dst_ebits)) - _U1) << np.uint64(dst_mbits)
    if cls == NAN:
        if sat:
            return _U0
        # quiet NaN keeping the top of the payload (what x86 F16C and numerics.half do)
        payload = mag >> np.uint64(src_mbits - dst_mbits)
        return sign | inf | (_U1 << np.uint64(dst_mbits - 1)) | payload
    if cls == INF:
        return sign | (inf - _U1) if sat else sign | inf
    return round_float(neg, mag, exp, mode, dst_mbits, dst_ebits, sat)


@njit(cache=True)
def f32_to_f16(bits, mode, sat):
    """float32 bits -> float16 bits in ``mode`` (``sat``: saturation mode)."""
    return np.uint16(narrow_float(bits, mode, sat, F32_M, F32_E, F16_M, F16_E))


@njit(cache=True)
def f32_to_bf16(bits, mode, sat):
    """float32 bits -> bfloat16 bits in ``mode`` (``sat``: saturation mode)."""
    return np.uint16(narrow_float(bits, mode, sat, F32_M, F32_E, BF16_M, BF16_E))


@njit(cache=True)
def round_integral(bits, mode, mbits, ebits):
    """A float rounded to an integral value of the same format (``Cast`` float -> float).

    The sign is kept (``-0.25`` rounds up to ``-0.0``); infinities are kept and
    NaNs quieted.
    """
    cls, neg, mag, exp = decode(bits, mbits, ebits)
    bits = np.uint64(bits)
    if cls == NAN:
        return bits | (_U1 << np.uint64(mbits - 1))
    if cls == INF or exp >= 0:
        return bits
    q = shift_round(mag, -exp, neg, mode)
    return round_float(neg, q, _ZERO, _RINT, mbits, ebits, _EXACT)


@njit(cache=True)
def float_to_int(bits, mode, mbits, ebits, lo, hi):
    """A float rounded to an integer in ``mode`` and saturated to ``[lo, hi]``; NaN gives 0."""
    cls, neg, mag, exp = decode(bits, mbits, ebits)
    if cls == NAN:
        return np.int64(0)
    if cls == INF:
        return np.int64(lo) if neg else np.int64(hi)
    if exp >= 0:
        if bit_length(mag) + exp > 63:                 # |value| >= 2**63: beyond every target
            return np.int64(lo) if neg else np.int64(hi)
        q = mag << np.uint64(exp)
    else:
        q = shift_round(mag, -exp, neg, mode)
    v = -np.int64(q) if neg else np.int64(q)
    if v < lo:
        return np.int64(lo)
    if v > hi:
        return np.int64(hi)
    return v


@njit(cache=True)
def int_to_float(v, mode, mbits, ebits):
    """A signed integer (int64) rounded to the float format (mbits, ebits) in ``mode``."""
    v = np.int64(v)
    neg = v < 0
    mag = _U0 - np.uint64(v) if neg else np.uint64(v)     # also right for -2**63
    return round_float(neg, mag, _ZERO, mode, mbits, ebits, _EXACT)


@njit(cache=True)
def saturate(v, lo, hi):
    """An integer clamped to ``[lo, hi]`` (the hardware's narrowing integer conversions)."""
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v
