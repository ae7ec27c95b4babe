"""Filling UB tensors: ``Duplicate`` (a scalar everywhere) and ``Brcb`` (elements to blocks).

The element width arrives at run time (2 or 4 bytes), so one compiled
function serves every dtype; elements are written as raw bits.  ``Duplicate``
receives the scalar both as a float32 and as an int64 and a ``kind`` that
says which one counts and how it becomes the element's bits: float16 and
bfloat16 round to nearest even, float32 is stored as is, integers wrap to the
element width (C++ conversion of the scalar argument).

Hardware rules (Ascend C ``Duplicate`` and ``Brcb``, Atlas A2):

* ``Duplicate`` is an ordinary vector instruction: count form (which leaves
  the mask register all-ones in normal mode) and level-0 form with a mask,
  ``repeat_times`` in [0, 255], ``dst_block_stride`` (uint16) and
  ``dst_repeat_stride`` (uint8) in 32-byte blocks.
* ``Brcb`` sets the mask register to all ones (the library's ``ResetMask()``)
  and writes whole blocks: repeat ``i`` reads ``src[8*i : 8*i + 8]``
  (contiguous) and fills the 32-byte block at
  ``(i * dst_rep_stride + j * dst_blk_stride) * 32`` bytes with element ``j``.
  A ``dst_blk_stride`` of 0 is undefined and ``src`` must not overlap any block
  the instruction writes.
* Operands are 32-byte aligned in UB and what is touched lies inside the tensors.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..numerics import half as H
from . import state as S
from . import vmask as V
from .common import load_raw, store_raw
from .fault import Fault, register
from .vec_cast import operand_reach

# how the scalar becomes an element
KIND_INT = 0
KIND_F32 = 1
KIND_F16 = 2
KIND_BF16 = 3


F_FIELD = 420
F_BRCB_BLK_ZERO = 421
F_BRCB_OVERLAP = 422
F_REPEAT = 423

# parameter names for F_FIELD messages
FIELDS = ("dst_block_stride", "dst_repeat_stride", "repeat_params.dst_blk_stride", "repeat_params.dst_rep_stride")
DUP_BLK, DUP_REP, BRCB_BLK, BRCB_REP = range(4)

register({
    F_FIELD: (errors.ParamRangeError,
              lambda a, b, c, env: f"{FIELDS[c]} = {a} is out of range [0, {b}]"),
    F_BRCB_BLK_ZERO: (errors.ParamRangeError,
                      lambda a, b, c, env: "brcb: repeat_params.dst_blk_stride is 0, which the hardware leaves "
                                           "undefined (the 8 blocks of a repeat would land on one block)"),
    F_BRCB_OVERLAP: (errors.OverlapError,
                     lambda a, b, c, env: f"brcb: src (UB bytes [{a}, {b})) overlaps the destination block at "
                                          f"UB byte {c}; src and dst must not overlap"),
    F_REPEAT: (errors.ParamRangeError,
               lambda a, b, c, env: f"repeat_times {a} out of range [0, 255]"),
})


@njit(cache=True, inline="always")
def _check_field(value, limit, which, loc):
    if value < 0 or value > limit:
        raise Fault(F_FIELD, loc, value, limit, which)


@instruction
def scalar_bits(kind, fvalue, ivalue):
    """The element bits (int64) of the ``duplicate`` scalar."""
    if kind == KIND_F32:
        return np.int64(np.float32(fvalue).view(np.uint32))
    if kind == KIND_F16:
        return np.int64(H.f32_to_f16(np.float32(fvalue)))
    if kind == KIND_BF16:
        return np.int64(H.f32_to_bf16(np.float32(fvalue)))
    return np.int64(ivalue)          # integers: the store keeps the low bytes (wraps)


@instruction
def duplicate(st, lm, dst, dst_len, size, kind, fvalue, ivalue, count, loc):
    """Count form: the first ``count`` elements of ``dst`` set to the scalar."""
    V.check_count(count, loc)
    V.check_operand(st, dst, dst_len, count, V.DST, loc)
    bits = scalar_bits(kind, fvalue, ivalue)
    for i in range(count):
        store_raw(lm, dst + i * size, size, bits)
    V.count_form_done(st)


@instruction
def duplicate_l0(st, lm, dst, dst_len, size, kind, fvalue, ivalue, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                 repeat, dst_blk, dst_rep, loc):
    """Level-0 form: the lanes the mask enables in ``repeat`` strided repeats set to the scalar."""
    lanes = 256 // size
    epb = 32 // size
    counter, lo, hi, repeats, total = V.resolve(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, size, loc)
    _check_field(dst_blk, V.U16_MAX, DUP_BLK, loc)
    _check_field(dst_rep, V.U8_MAX, DUP_REP, loc)
    top = V.lanes_used(counter, lo, hi, lanes, total)
    V.check_dst_blk_stride(dst_blk, top, epb, loc)
    need = operand_reach(counter, top, lanes, repeats, total, dst_blk, dst_rep, epb)
    V.check_operand(st, dst, dst_len, need, V.DST, loc)
    bits = scalar_bits(kind, fvalue, ivalue)
    every = counter or V.all_lanes(lo, hi, lanes)
    for r in range(repeats):
        n = lanes
        if counter and r == repeats - 1:
            n = total - r * lanes
        for e in range(n):
            if every or V.lane_on(lo, hi, e):
                store_raw(lm, dst + V.element(r, e, dst_blk, dst_rep, epb) * size, size, bits)


@instruction
def brcb(st, lm, dst, dst_len, src, src_len, size, repeat, dst_blk, dst_rep, loc):
    """Element ``8*i + j`` of ``src`` to every lane of block ``i * dst_rep + j * dst_blk`` of ``dst``."""
    epb = 32 // size
    if repeat < 0 or repeat > 255:
        raise Fault(F_REPEAT, loc, repeat, 0, 0)
    _check_field(dst_blk, V.U16_MAX, BRCB_BLK, loc)
    _check_field(dst_rep, V.U16_MAX, BRCB_REP, loc)
    if dst_blk == 0:
        raise Fault(F_BRCB_BLK_ZERO, loc, 0, 0, 0)
    need = ((repeat - 1) * dst_rep + 7 * dst_blk) * epb + epb if repeat > 0 else 0
    V.check_operand(st, dst, dst_len, need, V.DST, loc)
    V.check_operand(st, src, src_len, 8 * repeat, V.SRC, loc)
    # src is read while the blocks are written: no written block may share a byte with it
    base = st[S.SEG_BASE + V.UB]
    s_lo, s_hi = src, src + 8 * repeat * size
    for i in range(repeat):
        for j in range(8):
            b = dst + (i * dst_rep + j * dst_blk) * 32
            if b < s_hi and s_lo < b + 32:
                raise Fault(F_BRCB_OVERLAP, loc, s_lo - base, s_hi - base, b - base)
    for i in range(repeat):
        for j in range(8):
            bits = load_raw(lm, src + (8 * i + j) * size, size, False)
            b = dst + (i * dst_rep + j * dst_blk) * 32
            for k in range(epb):
                store_raw(lm, b + k * size, size, bits)
    # the library issues ResetMask() before vbrcb: every lane enabled, mode unchanged
    st[S.MASK_LO] = -1
    st[S.MASK_HI] = -1
