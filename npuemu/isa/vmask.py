"""The vector mask register and the level-0 (mask/repeat) iteration space.

A level-0 vector instruction runs ``repeat_times`` repeats; each repeat reads
8 DataBlocks of 32 bytes per operand (256 bytes: 128 b16, 64 b32 or 32 b64
lanes).  Lane ``e`` of repeat ``r`` of an operand with block stride ``blk`` and
repeat stride ``rep`` (both in 32-byte units) is element::

    (r * rep + (e // epb) * blk) * epb + e % epb        # epb = 32 // sizeof(T)

Which lanes run is decided by the 128-bit mask register (``[low, high]``, low
bits first) in *normal* mode, or by a total element count in *counter* mode
(then ``repeat_times`` is ignored and the repeats are ``ceil(count / lanes)``).
``is_set_mask=True`` loads the register from the call's ``mask`` argument;
``False`` uses what ``set_vector_mask`` left there.  Masked-off lanes of the
destination keep their old value.  Sources: the Ascend C "掩码" (mask) guide.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from . import state as S
from .fault import Fault, register

F_REPEAT = 300
F_MASK_RANGE = 301
F_MASK_BITS = 302
F_STRIDE = 303
F_COUNTER_NEG = 304

register({
    F_REPEAT: (errors.ParamRangeError,
               lambda a, b, c, env: f"repeat_times {a} out of range [0, 255]"),
    F_MASK_RANGE: (errors.ParamRangeError,
                   lambda a, b, c, env: f"continuous mask {a} is negative (valid: 0..{b})"),
    F_MASK_BITS: (errors.ParamRangeError,
                  lambda a, b, c, env: f"bit mask sets lanes beyond the {b} lanes of a repeat for this dtype "
                                       f"(for 32-bit types the high word must be 0; for 64-bit only the low "
                                       f"32 bits count)"),
    F_STRIDE: (errors.ParamRangeError,
               lambda a, b, c, env: f"stride {a} out of range [0, {b}]"),
    F_COUNTER_NEG: (errors.ParamRangeError,
                    lambda a, b, c, env: f"counter-mode element count {a} is negative"),
})

U64 = np.uint64
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True, inline="always")
def lanes_per_repeat(esize):
    return 256 // esize


@njit(cache=True, inline="always")
def bits_from_count(n):
    """(low, high) of a mask with the first ``n`` bits set (0 <= n <= 128)."""
    if n <= 0:
        return np.uint64(0), np.uint64(0)
    if n >= 128:
        return ALL_ONES, ALL_ONES
    if n >= 64:
        hi = np.uint64(0) if n == 64 else (np.uint64(1) << np.uint64(n - 64)) - np.uint64(1)
        return ALL_ONES, hi
    return (np.uint64(1) << np.uint64(n)) - np.uint64(1), np.uint64(0)


@njit(cache=True, inline="always")
def lane_on(lo, hi, e):
    if e < 64:
        return ((lo >> np.uint64(e)) & np.uint64(1)) != 0
    return ((hi >> np.uint64(e - 64)) & np.uint64(1)) != 0


@njit(cache=True)
def resolve(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, esize, loc):
    """Decide the lanes of a level-0 instruction.

    Returns ``(counter, lo, hi, repeats, total)``: in normal mode ``lo``/``hi``
    are the per-repeat lane bits and ``repeats`` the repeat count; in counter
    mode ``total`` elements run over ``repeats = ceil(total / lanes)``.
    """
    lanes = 256 // esize
    counter = st[S.MASK_MODE] == 1
    if counter:
        total = mask_lo if is_set_mask else st[S.MASK_LO]
        if total < 0:
            raise Fault(F_COUNTER_NEG, loc, total, 0, 0)
        return True, np.uint64(0), np.uint64(0), (total + lanes - 1) // lanes, total
    if repeat < 0 or repeat > 255:
        raise Fault(F_REPEAT, loc, repeat, 0, 0)
    if is_set_mask:
        if mask_is_bits:
            lo = np.uint64(mask_lo)
            hi = np.uint64(mask_hi)
        else:
            if mask_lo < 0:
                raise Fault(F_MASK_RANGE, loc, mask_lo, lanes, 0)
            lo, hi = bits_from_count(min(mask_lo, lanes))
        if lanes == 64 and hi != 0:
            raise Fault(F_MASK_BITS, loc, 0, lanes, 0)
        if lanes == 32 and (hi != 0 or (lo >> np.uint64(32)) != 0):
            raise Fault(F_MASK_BITS, loc, 0, lanes, 0)
        return False, lo, hi, repeat, 0
    # the register always holds 128 bits; a 32- or 64-bit instruction reads only its lanes'
    # bits, so the all-ones state reset_mask() leaves behind is valid for every dtype
    lo = np.uint64(st[S.MASK_LO])
    hi = np.uint64(st[S.MASK_HI])
    if lanes <= 64:
        hi = np.uint64(0)
    if lanes == 32:
        lo &= np.uint64(0xFFFFFFFF)
    return False, lo, hi, repeat, 0


@njit(cache=True, inline="always")
def check_stride(value, limit, loc):
    if value < 0 or value > limit:
        raise Fault(F_STRIDE, loc, value, limit, 0)


@njit(cache=True, inline="always")
def element(r, e, blk, rep, epb):
    """Element index of lane ``e`` in repeat ``r`` for block/repeat strides in 32-byte units."""
    return (r * rep + (e // epb) * blk) * epb + e % epb


@njit(cache=True, inline="always")
def extent(repeats, lanes, blk, rep, epb):
    """One past the largest element index any lane of ``repeats`` repeats can touch."""
    if repeats <= 0:
        return 0
    return ((repeats - 1) * rep + (lanes // epb - 1) * blk) * epb + epb


# --------------------------------------------------------------------------- mask register instructions

@njit(cache=True)
def set_mask_count(st, loc):
    st[S.MASK_MODE] = 1


@njit(cache=True)
def set_mask_norm(st, loc):
    st[S.MASK_MODE] = 0


@njit(cache=True)
def set_vector_mask(st, lo, hi, loc):
    st[S.MASK_LO] = lo
    st[S.MASK_HI] = hi


@njit(cache=True)
def set_vector_mask_len(st, n, counter, loc):
    """``set_vector_mask(len, mode=...)``: ``mode`` picks the encoding, not the register mode.

    COUNTER stores the element count; NORMAL stores the bits of the first
    ``len`` lanes (at most 128: a 32-bit instruction later reads only the low
    word, so ``len`` beyond its 64 lanes acts as 64).
    """
    if n < 0:
        raise Fault(F_MASK_LEN, loc, n, 0, 0)
    if counter:
        st[S.MASK_LO] = n
        st[S.MASK_HI] = 0
    else:
        lo, hi = bits_from_count(min(n, 128))
        st[S.MASK_LO] = np.int64(lo)
        st[S.MASK_HI] = np.int64(hi)


@njit(cache=True)
def reset_mask(st, loc):
    st[S.MASK_LO] = -1
    st[S.MASK_HI] = -1
