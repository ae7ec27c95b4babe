"""The vector mask register and the level-0 (mask/repeat) iteration space.

A level-0 vector instruction runs ``repeat_times`` repeats (0..255; 0 does
nothing); each repeat reads 8 DataBlocks of 32 bytes per operand (256 bytes:
128 b16, 64 b32 or 32 b64 lanes).  Lane ``e`` of repeat ``r`` of an operand
with block stride ``blk`` and repeat stride ``rep`` (both in 32-byte units) is
element::

    (r * rep + (e // epb) * blk) * epb + e % epb        # epb = 32 // sizeof(T)

Which lanes run is decided by the 128-bit mask register (``[low, high]``, low
bits first) in *normal* mode, or by a total element count in *counter* mode
(then ``repeat_times`` is ignored and the repeats are ``ceil(count / lanes)``).
``is_set_mask=True`` loads the register from the call's ``mask`` argument;
``False`` uses what ``set_vector_mask`` left there.  Masked-off lanes of the
destination keep their old value.  Sources: the Ascend C "掩码" (mask) guide
and the A2 (dav-c220) library code.

Rules this module enforces or assumes:

* A continuous mask above the lane count acts as all lanes; a negative one is
  an error.  A bit mask ``[mask0, mask1]`` given to a 32- or 64-bit
  instruction has its high word ``mask1`` ignored: only 64 (32) lanes exist,
  and the library's own check (``CheckMaskArray``) does not look at it for
  these types, so ``[mask0, anything]`` runs like ``[mask0]``.  For 64-bit
  types ``mask0`` must fit in 32 bits, which that check does assert.  The
  *register* likewise holds 128 bits and a 32-bit instruction reads only its
  64 lanes' bits, so the all-ones state ``reset_mask`` leaves is valid for
  every type.
* ``set_vector_mask(len, mode=...)``: ``mode`` picks how ``len`` is encoded
  (a count, or the first ``len`` lanes), not the register's mode.
* A count-form instruction runs in counter mode and leaves the register in
  normal mode with every lane enabled (:func:`count_form_done`), as the A2
  library does.
* ``dst_blk_stride == 0`` makes the DataBlocks of a repeat write the same 32
  bytes, which the hardware leaves undefined: it is rejected unless the
  enabled lanes fit in one DataBlock.  Source block or repeat strides of 0
  (re-reading data) are fine.
* Every operand must start 32-byte aligned in UB and hold every element an
  enabled lane touches (:func:`reach`; counted per element, not per block).
* On hardware the kernel prologue sets normal mode and an all-ones mask; a
  kernel that relies on that should call ``reset_mask()`` under npuemu too
  until the runtime initialises the register (it starts at zero).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import state as S
from .common import F_NEG_COUNT
from .fault import Fault, register

F_REPEAT = 300
F_MASK_RANGE = 301
F_MASK_BITS = 302
F_STRIDE = 303
F_COUNTER_NEG = 304
F_STRIDE_FIELD = 305
F_DST_BLOCK_STRIDE = 306
F_OPERAND_OVER = 307
F_OPERAND_ALIGN = 308
F_MASK_LEN = 309

# operand and stride names for fault messages (the ``which`` argument of the checks below)
OPERANDS = ("dst", "src0", "src1", "src")
DST, SRC0, SRC1, SRC = range(4)
STRIDE_FIELDS = ("dst_blk_stride", "src0_blk_stride", "src1_blk_stride", "src_blk_stride",
                 "dst_rep_stride", "src0_rep_stride", "src1_rep_stride", "src_rep_stride")
DST_BLK, SRC0_BLK, SRC1_BLK, SRC_BLK, DST_REP, SRC0_REP, SRC1_REP, SRC_REP = range(8)
U8_MAX = 255
U16_MAX = 65535
UB = 1                 # Hardware.UB: vector operands live there

register({
    F_REPEAT: (errors.ParamRangeError,
               lambda a, b, c, env: f"repeat_times {a} out of range [0, 255]"),
    F_MASK_RANGE: (errors.ParamRangeError,
                   lambda a, b, c, env: f"continuous mask {a} is negative (valid: 0..{b})"),
    F_MASK_BITS: (errors.ParamRangeError,
                  lambda a, b, c, env: f"bit mask mask[0] = {a & 0xFFFFFFFFFFFFFFFF:#x} sets lanes beyond the {b} lanes of a repeat "
                                       f"of a 64-bit dtype: mask[0] must be at most 0xffffffff (mask[1] is "
                                       f"ignored for 32- and 64-bit dtypes)"),
    F_STRIDE: (errors.ParamRangeError,
               lambda a, b, c, env: f"stride {a} out of range [0, {b}]"),
    F_COUNTER_NEG: (errors.ParamRangeError,
                    lambda a, b, c, env: f"counter-mode element count {a} is negative"),
    F_STRIDE_FIELD: (errors.ParamRangeError,
                     lambda a, b, c, env: f"repeat_params.{STRIDE_FIELDS[c]} = {a} is out of range [0, {b}]"),
    F_DST_BLOCK_STRIDE: (errors.ParamRangeError,
                         lambda a, b, c, env: f"dst_blk_stride is 0 while the mask enables lanes in {a} "
                                              f"DataBlocks of a repeat: they would all write the same 32 bytes, "
                                              f"which the hardware leaves undefined"),
    F_OPERAND_OVER: (errors.BoundsError,
                     lambda a, b, c, env: f"{OPERANDS[c]}: the instruction touches {a} elements of a tensor "
                                          f"that holds only {b}"),
    F_OPERAND_ALIGN: (errors.AlignmentError,
                      lambda a, b, c, env: f"{OPERANDS[b]} starts at UB byte {a}, which is not 32-byte "
                                           f"aligned (every vector operand must be)"),
    F_MASK_LEN: (errors.ParamRangeError,
                 lambda a, b, c, env: f"set_vector_mask length {a} is negative"),
})

ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@instruction
def lanes_per_repeat(esize):
    return 256 // esize


@instruction
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


@instruction
def lane_on(lo, hi, e):
    if e < 64:
        return ((lo >> np.uint64(e)) & np.uint64(1)) != 0
    return ((hi >> np.uint64(e - 64)) & np.uint64(1)) != 0


@instruction
def explicit_mask(mask_is_bits, mask_lo, mask_hi, lanes, loc):
    """Lane bits ``(lo, hi)`` of a call's own normal-mode ``mask`` (continuous or ``[mask0, mask1]``).

    ``mask1`` is dropped for 32- and 64-bit types (64 or 32 lanes); a 64-bit
    type's ``mask0`` must fit in 32 bits.
    """
    if mask_is_bits:
        lo = np.uint64(mask_lo)
        hi = np.uint64(mask_hi)
    else:
        if mask_lo < 0:
            raise Fault(F_MASK_RANGE, loc, mask_lo, lanes, 0)
        lo, hi = bits_from_count(min(mask_lo, lanes))
    if lanes <= 64:
        hi = np.uint64(0)
    if lanes == 32 and (lo >> np.uint64(32)) != 0:
        raise Fault(F_MASK_BITS, loc, np.int64(lo), lanes, 0)
    return lo, hi


@instruction
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
        lo, hi = explicit_mask(mask_is_bits, mask_lo, mask_hi, lanes, loc)
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


@instruction
def check_stride(value, limit, loc):
    if value < 0 or value > limit:
        raise Fault(F_STRIDE, loc, value, limit, 0)


@instruction
def element(r, e, blk, rep, epb):
    """Element index of lane ``e`` in repeat ``r`` for block/repeat strides in 32-byte units."""
    return (r * rep + (e // epb) * blk) * epb + e % epb


@instruction
def extent(repeats, lanes, blk, rep, epb):
    """One past the largest element index any lane of ``repeats`` repeats can touch."""
    if repeats <= 0:
        return 0
    return ((repeats - 1) * rep + (lanes // epb - 1) * blk) * epb + epb


@instruction
def all_lanes(lo, hi, lanes):
    """Every lane of a repeat is enabled (the loops then skip the per-lane test)."""
    if lanes > 64:
        return lo == ALL_ONES and hi == ALL_ONES
    if lanes == 64:
        return lo == ALL_ONES
    return lo == np.uint64(0xFFFFFFFF)


@instruction
def bit_length(x):
    n = 0
    while x != np.uint64(0):
        x >>= np.uint64(1)
        n += 1
    return n


@instruction
def lanes_used(counter, lo, hi, lanes, total):
    """One past the highest lane any repeat runs (0: the instruction touches nothing)."""
    if counter:
        return min(total, lanes)
    if hi != np.uint64(0):
        return 64 + bit_length(hi)
    return bit_length(lo)


@njit(cache=True)
def _far(r, n, blk, rep, epb):
    """The largest element index lanes ``0..n-1`` of repeat ``r`` touch (``n >= 1``)."""
    if blk == 0:        # every DataBlock of the repeat folds onto the first
        return r * rep * epb + min(n, epb) - 1
    return element(r, n - 1, blk, rep, epb)


@instruction
def reach(counter, top, lanes, repeats, total, blk, rep, epb):
    """One past the largest element index an operand with strides ``blk``/``rep`` is touched at.

    Strides are never negative, so the farthest element is in the last repeat
    or, in counter mode where that repeat may be partial, the repeat before
    it; inside a repeat it is the last lane, or with a block stride of 0 the
    last lane of the first DataBlock.  (A bit mask is taken as enabling every
    lane below its highest one, which may overestimate, never underestimate.)
    """
    if repeats <= 0 or top <= 0:
        return 0
    if counter:
        far = _far(repeats - 1, total - (repeats - 1) * lanes, blk, rep, epb)
        if repeats > 1:
            far = max(far, _far(repeats - 2, lanes, blk, rep, epb))
        return far + 1
    return _far(repeats - 1, top, blk, rep, epb) + 1


@njit(cache=True, inline="always")
def check_field(value, limit, which, loc):
    """A repeat-parameter field fits its hardware width (``which`` indexes STRIDE_FIELDS)."""
    if value < 0 or value > limit:
        raise Fault(F_STRIDE_FIELD, loc, value, limit, which)


@njit(cache=True, inline="always")
def check_dst_blk_stride(blk, top, epb, loc):
    """``dst_blk_stride == 0`` is only defined while the enabled lanes sit in one DataBlock."""
    if blk == 0 and top > epb:
        raise Fault(F_DST_BLOCK_STRIDE, loc, (top + epb - 1) // epb, 0, 0)


@njit(cache=True, inline="always")
def check_operand(st, addr, length, need, which, loc):
    """A vector operand starts 32-byte aligned in UB and holds the ``need`` elements touched."""
    off = addr - st[S.SEG_BASE + UB]
    if off % 32 != 0:
        raise Fault(F_OPERAND_ALIGN, loc, off, which, 0)
    if need > length:
        raise Fault(F_OPERAND_OVER, loc, need, length, which)


@njit(cache=True, inline="always")
def check_count(count, loc):
    if count < 0:
        raise Fault(F_NEG_COUNT, loc, count, 0, 0)


@instruction
def binary_count_checks(st, dst, dst_len, s0, s0_len, s1, s1_len, count, loc):
    """The checks of a binary count-form instruction (``count`` elements of each operand)."""
    check_count(count, loc)
    check_operand(st, dst, dst_len, count, DST, loc)
    check_operand(st, s0, s0_len, count, SRC0, loc)
    check_operand(st, s1, s1_len, count, SRC1, loc)


@instruction
def unary_count_checks(st, dst, dst_len, src, src_len, count, loc):
    """The checks of a unary or vector-scalar count-form instruction."""
    check_count(count, loc)
    check_operand(st, dst, dst_len, count, DST, loc)
    check_operand(st, src, src_len, count, SRC, loc)


@instruction
def plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, esize, loc):
    """:func:`resolve` plus what the lane loops need.

    Returns ``(counter, lo, hi, repeats, total, top, every)``: ``top`` is one
    past the highest lane a repeat runs (:func:`lanes_used`) and ``every``
    says no lane below ``top`` is masked off.
    """
    counter, lo, hi, repeats, total = resolve(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, esize, loc)
    lanes = 256 // esize
    top = lanes_used(counter, lo, hi, lanes, total)
    every = counter or all_lanes(lo, hi, lanes)
    return counter, lo, hi, repeats, total, top, every


@instruction
def binary_plan(st, dst, dst_len, s0, s0_len, s1, s1_len, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep, esize, loc):
    """Check a level-0 instruction with BinaryRepeatParams (all uint8) and plan its lanes.

    Nothing is touched before every parameter, alignment and bound is known
    good; returns :func:`plan`'s tuple.
    """
    counter, lo, hi, repeats, total, top, every = plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                                                        repeat, esize, loc)
    check_field(dblk, U8_MAX, DST_BLK, loc)
    check_field(s0blk, U8_MAX, SRC0_BLK, loc)
    check_field(s1blk, U8_MAX, SRC1_BLK, loc)
    check_field(drep, U8_MAX, DST_REP, loc)
    check_field(s0rep, U8_MAX, SRC0_REP, loc)
    check_field(s1rep, U8_MAX, SRC1_REP, loc)
    lanes = 256 // esize
    epb = 32 // esize
    if repeats > 0:
        check_dst_blk_stride(dblk, top, epb, loc)
    check_operand(st, dst, dst_len, reach(counter, top, lanes, repeats, total, dblk, drep, epb), DST, loc)
    check_operand(st, s0, s0_len, reach(counter, top, lanes, repeats, total, s0blk, s0rep, epb), SRC0, loc)
    check_operand(st, s1, s1_len, reach(counter, top, lanes, repeats, total, s1blk, s1rep, epb), SRC1, loc)
    return counter, lo, hi, repeats, total, top, every


@instruction
def unary_plan(st, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
               dblk, sblk, drep, srep, dst_esize, src_esize, loc):
    """Check a level-0 instruction with UnaryRepeatParams (uint16 block, uint8 repeat strides).

    ``dst_esize`` and ``src_esize`` differ for instructions that change the
    element width (axpy half -> float); lanes per repeat follow the wider type.
    """
    esize = max(dst_esize, src_esize)
    counter, lo, hi, repeats, total, top, every = plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                                                        repeat, esize, loc)
    check_field(dblk, U16_MAX, DST_BLK, loc)
    check_field(sblk, U16_MAX, SRC_BLK, loc)
    check_field(drep, U8_MAX, DST_REP, loc)
    check_field(srep, U8_MAX, SRC_REP, loc)
    lanes = 256 // esize
    if repeats > 0:
        check_dst_blk_stride(dblk, top, 32 // dst_esize, loc)
    check_operand(st, dst, dst_len, reach(counter, top, lanes, repeats, total, dblk, drep, 32 // dst_esize),
                  DST, loc)
    check_operand(st, src, src_len, reach(counter, top, lanes, repeats, total, sblk, srep, 32 // src_esize),
                  SRC, loc)
    return counter, lo, hi, repeats, total, top, every


@instruction
def lane_table(lo, hi, lanes):
    """The mask as one bool per lane, cheaper to test in a loop than the bits."""
    on = np.empty(lanes, np.bool_)
    for e in range(lanes):
        on[e] = lane_on(lo, hi, e)
    return on


@instruction
def dense_runs(counter, repeats, total, top, lanes):
    """The lanes of an unmasked, default-stride instruction as ``(runs, length, stride)``.

    With block stride 1 and repeat stride 8 every operand's lanes are
    consecutive elements, so the instruction is ``runs`` contiguous runs of
    ``length`` elements, ``stride`` elements apart: the loops then run as fast
    as the count form.
    """
    if counter:
        return 1, total, 0
    if top == lanes:
        return 1, repeats * lanes, 0
    return repeats, top, lanes


@instruction
def count_form_done(st):
    """What a count-form instruction leaves in the mask registers on A2.

    The library runs it as ``set_mask_count(); set_vector_mask(0, count); op;
    set_mask_norm(); set_vector_mask(-1, -1)``, so afterwards the mask is in
    normal mode with every lane enabled, whatever it held before.
    """
    st[S.MASK_MODE] = 0
    st[S.MASK_LO] = -1
    st[S.MASK_HI] = -1


# --------------------------------------------------------------------------- mask register instructions

@instruction
def set_mask_count(st, loc):
    st[S.MASK_MODE] = 1


@instruction
def set_mask_norm(st, loc):
    st[S.MASK_MODE] = 0


@instruction
def set_vector_mask(st, lo, hi, loc):
    st[S.MASK_LO] = lo
    st[S.MASK_HI] = hi


@instruction
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


@instruction
def reset_mask(st, loc):
    st[S.MASK_LO] = -1
    st[S.MASK_HI] = -1
