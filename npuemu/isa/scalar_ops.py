"""Scalar bit operations and ``ScalarCast``: the scalar unit's ``clz``, ``bcnt``, ``sff``, ``sflbits`` and conversions.

Plain ``@njit`` functions on int64 / float32 scalars, inlined into kernels and
callable from Python (debug mode, constant folding in the frontend), so both
give the same bits.  Integers are the 64-bit patterns of kernel ints: a
uint64 argument above 2**63 arrives as the negative int64 with its bits.

* :func:`clz`: leading zeros of the uint64 (64 for 0).
* :func:`bit_count`: bits equal to ``value`` (0 or 1).
* :func:`sff`: index of the lowest bit equal to ``value``, -1 if none
  (``GetSFFValue<1>(0x1000000000000100) == 8``, ``GetSFFValue<0>(~0) == -1``).
* :func:`sign_bits`: consecutive bits from bit 62 down equal to bit 63; the
  documented result for 0 and -1 (every bit equals the sign) is -1, and
  ``CountBitsCntSameAsSignBit(0x0100000000000020) == 6``.
* :func:`cast_to_i32`, :func:`cast_to_f16`: float32 -> int32 / float16 in a
  ``RoundMode`` with the arithmetic of :mod:`npuemu.numerics.rounding`
  (integers saturate, NaN gives 0; float16 in the default Inf/NaN mode, in
  which round-to-odd overflows to the largest finite value).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..numerics import half as H
from ..numerics import rounding as R

_I32_LO, _I32_HI = np.int64(-(1 << 31)), np.int64((1 << 31) - 1)
_NO_SAT = np.bool_(False)


@njit(cache=True)
def clz(x):
    """Leading zero bits of the 64-bit pattern ``x``: 0..64."""
    return np.int64(64 - R.bit_length(np.uint64(np.int64(x))))


@njit(cache=True)
def bit_count(x, value):
    """How many of the 64 bits of ``x`` equal ``value`` (0 or 1)."""
    u = np.uint64(np.int64(x))
    n = 0
    while u != np.uint64(0):
        u &= u - np.uint64(1)
        n += 1
    return np.int64(n if value == 1 else 64 - n)


@njit(cache=True)
def sff(x, value):
    """Index of the lowest bit of ``x`` equal to ``value`` (0 or 1); -1 if there is none."""
    u = np.uint64(np.int64(x))
    if value == 0:
        u = ~u
    if u == np.uint64(0):
        return np.int64(-1)
    return np.int64(R.bit_length(u & (~u + np.uint64(1))) - 1)      # u & -u: the lowest set bit alone


@njit(cache=True)
def sign_bits(x):
    """Consecutive bits from bit 62 down equal to the sign bit of the int64 ``x``; -1 for 0 and -1."""
    v = np.int64(x)
    u = np.uint64(~v) if v < 0 else np.uint64(v)
    if u == np.uint64(0):
        return np.int64(-1)
    return np.int64(63 - R.bit_length(u))


@njit(cache=True)
def cast_to_i32(x, mode):
    """float32 ``x`` -> int32 in ``RoundMode`` ``mode``, saturating; NaN gives 0."""
    bits = np.int64(np.float32(x).view(np.uint32))
    return R.float_to_int(bits, np.int64(mode), R.F32_M, R.F32_E, _I32_LO, _I32_HI)


@njit(cache=True)
def cast_to_f16(x, mode):
    """float32 ``x`` -> float16 in ``RoundMode`` ``mode``, returned as the (exact) float32 of that float16."""
    bits = np.int64(np.float32(x).view(np.uint32))
    return np.float32(H.f16_to_f32(R.f32_to_f16(bits, np.int64(mode), _NO_SAT)))
