"""Vector data rearrangement: ``copy`` (VCOPY) and ``gather_mask`` (VREDUCEv2).

What the hardware computes (Ascend C Copy and GatherMask pages, the A2/A3
library source ``impl/basic_api/dav_c220/kernel_operator_vec_gather_mask_impl.h``;
assumptions are marked *assumed*):

* ``copy``: a level-0 instruction (:mod:`npuemu.isa.vmask`): lane ``e`` of
  repeat ``r`` copies ``src[element(r, e, src_stride, src_repeat_size)]`` to
  ``dst[element(r, e, dst_stride, dst_repeat_size)]`` as raw bits.  The block
  strides are 0..65535 and the repeat strides 0..4095 (documented), in 32-byte
  blocks.  Masked-off lanes keep ``dst``.
* ``gather_mask``: each of ``repeat_times`` repeats covers ``n`` lanes:
  ``256 / sizeof(T)`` in normal mode (``reduce_mode=False``, ``mask`` unused),
  ``mask`` elements in counter mode (``reduce_mode=True``, 1 <= mask < 2**32;
  the A2/A3 form, where a repeat may cover more than 256 bytes).  Lane ``e`` of
  repeat ``r`` reads ``src0[element(r, e, src0_block_stride, src0_repeat_stride)]``
  and is kept when its pattern bit is 1: for a built-in pattern 1..7 bit ``e``
  of 0101.., 1010.., 0001.., 0010.., 0100.., 1000.., 1111.. (lowest bit
  first); for a pattern tensor bit ``e`` of the bits that start at byte
  ``r * src1_repeat_stride * 32`` of it, lowest bit of each word first.  The
  kept elements are written one after another from ``dst[0]``, across
  repeats; their number goes to the RSVD_CNT register (``rsvdCnt``,
  :func:`remain`).  Every source is read before ``dst`` is written (*assumed*).
* Afterwards the mask register is in normal mode and holds ``(low=mask,
  high=0)``: the library writes ``mask`` to it in both modes and switches to
  normal mode when done.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from . import level0
from . import state as S
from . import vmask as vm
from .fault import Fault, register
from .linkage import instruction

U8_MAX = 255
U16_MAX = 65535
U32_MAX = 0xFFFFFFFF
COPY_BLK_MAX = 65535
COPY_REP_MAX = 4095

F_FIELD = 1700
F_PATTERN = 1701
F_COUNTER_MASK = 1702

# the fields F_FIELD names (its ``c`` argument)
FIELDS = ("CopyRepeatParams.dst_stride", "CopyRepeatParams.src_stride", "CopyRepeatParams.dst_repeat_size",
          "CopyRepeatParams.src_repeat_size", "GatherMaskParams.src0_block_stride", "GatherMaskParams.repeat_times",
          "GatherMaskParams.src0_repeat_stride", "GatherMaskParams.src1_repeat_stride")
(DST_STRIDE, SRC_STRIDE, DST_REPEAT_SIZE, SRC_REPEAT_SIZE, SRC0_BLOCK_STRIDE, REPEAT_TIMES, SRC0_REPEAT_STRIDE,
 SRC1_REPEAT_STRIDE) = range(8)

register({
    F_FIELD: (errors.ParamRangeError,
              lambda a, b, c, env: f"{FIELDS[c]} = {a} is out of range [0, {b}]"),
    F_PATTERN: (errors.ParamRangeError,
                lambda a, b, c, env: f"gather_mask src1_pattern {a} is not a built-in pattern (1..7: 1 even lanes, "
                                     f"2 odd lanes, 3-6 lane 0-3 of every 4, 7 all); pass a uint16/uint32 "
                                     f"LocalTensor for a pattern of your own"),
    F_COUNTER_MASK: (errors.ParamRangeError,
                     lambda a, b, c, env: f"gather_mask with reduce_mode=True (counter mode) takes mask = the "
                                          f"elements per repeat, 1..{U32_MAX}; got {a}"),
})

# built-in patterns: lane e is kept when e % PERIOD[p] == PHASE[p]
PERIOD = np.array([1, 2, 2, 4, 4, 4, 4, 1], np.int64)
PHASE = np.array([0, 0, 1, 0, 1, 2, 3, 0], np.int64)


@njit(cache=True)
def check_field(value, limit, which, loc):
    if value < 0 or value > limit:
        raise Fault(F_FIELD, loc, value, limit, which)


# --------------------------------------------------------------------------- copy

@njit(cache=True)
def copy_plan(st, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
              dblk, sblk, drep, srep, esize, loc):
    """Check a ``copy`` (CopyRepeatParams limits, alignment, bounds) and plan its lanes (:func:`vmask.plan`)."""
    counter, lo, hi, repeats, total, top, every = vm.plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                                                           repeat, esize, loc)
    check_field(dblk, COPY_BLK_MAX, DST_STRIDE, loc)
    check_field(sblk, COPY_BLK_MAX, SRC_STRIDE, loc)
    check_field(drep, COPY_REP_MAX, DST_REPEAT_SIZE, loc)
    check_field(srep, COPY_REP_MAX, SRC_REPEAT_SIZE, loc)
    lanes = 256 // esize
    epb = 32 // esize
    if repeats > 0:
        vm.check_dst_blk_stride(dblk, top, epb, loc)
    vm.check_operand(st, dst, dst_len, vm.reach(counter, top, lanes, repeats, total, dblk, drep, epb), vm.DST, loc)
    vm.check_operand(st, src, src_len, vm.reach(counter, top, lanes, repeats, total, sblk, srep, epb), vm.SRC, loc)
    return counter, lo, hi, repeats, total, top, every


def _copy_lane(d, a, b, t, s):
    d[t] = a[t]


def make_copy(storage):
    """``copy`` for one element width (raw bits: every 16-bit type shares one, every 32-bit type another)."""
    esize = np.dtype(storage).itemsize
    epb = (32 // esize,) * 3
    lanes = 256 // esize
    name = level0.lane(f"{__name__}.copy.{np.dtype(storage).name}", njit(_copy_lane))

    @instruction
    def run(st, lm, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
            dblk, sblk, drep, srep, loc):
        plan = copy_plan(st, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
                         dblk, sblk, drep, srep, esize, loc)
        d = lm[dst:dst + dst_len * esize].view(storage)
        a = lm[src:src + src_len * esize].view(storage)
        level0.walk(name, plan, d, a, None, 0, (dblk, sblk, sblk), (drep, srep, srep), epb, lanes)

    return run


copy_b16 = make_copy(np.uint16)
copy_b32 = make_copy(np.uint32)


# --------------------------------------------------------------------------- gather_mask

@njit(cache=True)
def gather_mask_checks(st, esize, dst, dst_len, src0, src0_len, pat, pat_len, pat_esize, use_tensor, pattern,
                       reduce, mask, blk, repeat, rep0, rep1, loc):
    """Check a ``gather_mask`` before it reads anything; returns the lanes per repeat.

    ``use_tensor``: the pattern is the tensor at ``pat``, else the built-in ``pattern``.
    """
    if not use_tensor and (pattern < 1 or pattern > 7):
        raise Fault(F_PATTERN, loc, pattern, 0, 0)
    check_field(blk, U8_MAX, SRC0_BLOCK_STRIDE, loc)
    check_field(repeat, U16_MAX, REPEAT_TIMES, loc)
    check_field(rep0, U16_MAX, SRC0_REPEAT_STRIDE, loc)
    check_field(rep1, U8_MAX, SRC1_REPEAT_STRIDE, loc)
    if reduce:
        if mask < 1 or mask > U32_MAX:
            raise Fault(F_COUNTER_MASK, loc, mask, 0, 0)
        n = mask
    else:
        n = 256 // esize
    epb = 32 // esize
    vm.check_operand(st, dst, dst_len, 0, vm.DST, loc)
    vm.check_operand(st, src0, src0_len, vm.reach(False, n, n, repeat, 0, blk, rep0, epb), vm.SRC0, loc)
    if use_tensor:
        bits = 8 * pat_esize
        need = 0
        if repeat > 0:
            need = (repeat - 1) * rep1 * (32 // pat_esize) + (n + bits - 1) // bits
        vm.check_operand(st, pat, pat_len, need, vm.SRC1, loc)
    return n


@njit(cache=True)
def kept(lm, pat, use_tensor, pattern, rep1, r, e):
    """Whether lane ``e`` of repeat ``r`` is selected (``use_tensor``: by the bits at UB byte ``pat``)."""
    if use_tensor:
        byte = lm[pat + r * rep1 * 32 + (e >> 3)]
        return ((byte >> (e & 7)) & 1) != 0
    return e % PERIOD[pattern] == PHASE[pattern]


def make_gather_mask(storage):
    """``gather_mask`` for one element width (raw bits)."""
    esize = np.dtype(storage).itemsize
    epb = 32 // esize

    @instruction
    def run(st, lm, dst, dst_len, src0, src0_len, pat, pat_len, pat_esize, use_tensor, pattern, reduce, mask, blk,
            repeat, rep0, rep1, loc):
        n = gather_mask_checks(st, esize, dst, dst_len, src0, src0_len, pat, pat_len, pat_esize, use_tensor,
                               pattern, reduce, mask, blk, repeat, rep0, rep1, loc)
        count = 0
        for r in range(repeat):
            for e in range(n):
                if kept(lm, pat, use_tensor, pattern, rep1, r, e):
                    count += 1
        vm.check_operand(st, dst, dst_len, count, vm.DST, loc)
        a = lm[src0:src0 + src0_len * esize].view(storage)
        buf = np.empty(count, storage)
        k = 0
        for r in range(repeat):
            for e in range(n):
                if kept(lm, pat, use_tensor, pattern, rep1, r, e):
                    buf[k] = a[vm.element(r, e, blk, rep0, epb)]
                    k += 1
        d = lm[dst:dst + dst_len * esize].view(storage)
        d[:count] = buf
        st[S.MASK_MODE] = 0
        st[S.MASK_LO] = mask & U32_MAX
        st[S.MASK_HI] = 0
        st[S.RSVD_CNT] = count
        return count

    return run


gather_mask_b16 = make_gather_mask(np.uint16)
gather_mask_b32 = make_gather_mask(np.uint32)


@njit(cache=True)
def remain(st):
    """RSVD_CNT: the elements the last ``gather_mask`` kept (0 before the first)."""
    return st[S.RSVD_CNT]
