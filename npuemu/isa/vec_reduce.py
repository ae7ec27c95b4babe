"""Reduction instructions and the ``reduce_sum/max/min`` routines built on them.

What the hardware computes (Ascend C 归约计算 pages and the Atlas A2 library
sources; assumptions are marked *assumed*):

* **Sums are pairwise binary trees.**  Within one repeat lanes ``2i`` and
  ``2i + 1`` are added, then neighbouring results, and so on until one value
  is left.  The tree always spans all 128 (float16) or 64 (float32) lanes;
  masked-off lanes enter it as 0.  ``block_reduce_sum`` runs the same tree
  over the 16 or 8 lanes of each 32-byte block.
* **float16 sums round and saturate at every step.**  Each partial sum is
  rounded to float16, and one that overflows is stored as +-65504 instead of
  inf: ``[60000, 60000, -30000, 100]`` sums to 65504 + (-29900), which the
  docs give in decimal as 35604 and float16 holds as 65504 - 29904 = 35600,
  rounded (ties to even) to 35584.
  *Assumed*: the clamp is symmetric (-65504 for negative overflow), and an
  infinite or NaN *input* propagates (only finite overflow saturates).
* **max/min pick the first extreme.**  Ties go to the lowest lane (the
  hardware returns "the first maximum"); NaN never compares greater or
  smaller, so it wins only as the first active lane (*assumed*).
  ``whole_reduce_max/min`` store value and in-repeat lane index as selected by
  ``ReduceOrder``; the index is written as uint16 (float16) or uint32
  (float32) bits in the destination slot, and always as uint32 for
  ``ORDER_ONLY_INDEX``.
* ``block_reduce_*``: 8 results per repeat, one per DataBlock; a block with no
  active lane yields 0 (sum), -inf / -65504 (max), +inf / 65504 (min).  The
  docs state these fill values for Atlas 200I/500 A2; npuemu applies them to
  Atlas A2 as well (*assumed*: the pair-reduce page says other products keep
  the destination in the analogous case, so A2 may do that instead).
* ``pair_reduce_sum``: ``lanes / 2`` results per repeat, ``src[2j] +
  src[2j + 1]``; a pair with one active lane passes it through (plus 0); a
  pair with none keeps the destination (documented for products other than
  Atlas 200I/500 A2).
* **reduce_sum (count form)**: a tree per repeat of 128/64 elements (the last
  one zero-padded), then the per-repeat sums are added *in order*
  (``acc = acc + r_i``, each step rounded like any other sum; *assumed*: the
  accumulator has the operand precision).  **Mask form**: per-repeat trees,
  then trees over groups of 128/64 per-repeat sums, until one value is left
  (the "binary tree across repeats" of the docs).
* **reduce_max/min**: the value and the element index of its first
  occurrence; with ``cal_index`` the index is stored in ``dst[1]`` as the raw
  bits of a uint16 (float16, so only its low 16 bits survive) or uint32.
  The mask form's index is the lane's element offset ``r * src_rep_stride *
  epb + lane``.

npuemu checks ``shared_tmp_buffer`` against the documented minimum size but
does not write intermediate results into it.  The count form of reduce_sum
leaves the mask register in normal mode with every lane enabled, as the
library does; reduce_max/min and the mask form of reduce_sum reprogram the
register on the hardware with internal masks, which npuemu does not model
(it leaves the register as it was).

The count forms of reduce_sum/max/min, the mask form's sums, and the sums of
whole/block_reduce whose destination does not overlap their source run
batched and vectorised in :mod:`npuemu.isa.reduce_tree`, with the bits of the
element-by-element code here (tests/test_reduce_speed_bits.py keeps that
code as its oracle); max/min of the level-0 and mask forms, pair_reduce_sum
and overlapping operands run element by element.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..numerics.half import f16_to_f32, f32_to_f16
from .common import BLOCK, check_aligned, check_count
from .fault import Fault, register
from .reduce_tree import first_extreme, level0_sums, sum_count, tree_sums
from .vmask import F_REPEAT, check_stride, count_form_done, element, explicit_mask, lane_on, resolve

OP_SUM = 0
OP_MAX = 1
OP_MIN = 2

# ReduceOrder
ORDER_VALUE_INDEX = 0
ORDER_INDEX_VALUE = 1
ORDER_ONLY_VALUE = 2
ORDER_ONLY_INDEX = 3

U8_MAX = 255
U16_MAX = 65535

F_ORDER = 500
F_TMP_SMALL = 501

register({
    F_ORDER: (errors.ParamRangeError,
              lambda a, b, c, env: f"ReduceOrder {a} is not one of ORDER_VALUE_INDEX, ORDER_INDEX_VALUE, "
                                   f"ORDER_ONLY_VALUE, ORDER_ONLY_INDEX"),
    F_TMP_SMALL: (errors.BoundsError,
                  lambda a, b, c, env: f"shared_tmp_buffer holds {a} elements; a reduction over {c} repeat(s) "
                                       f"needs at least {b} (the documented minimum size)"),
})

HALF_MAX = np.float32(65504.0)


# --------------------------------------------------------------------------- element access and arithmetic

@njit(cache=True, inline="always")
def _get(h, f, addr, half):
    """The float16 (``h``, uint16 view) or float32 (``f``) element at byte ``addr``, as float32."""
    if half:
        return f16_to_f32(h[addr >> 1])
    return f[addr >> 2]


@njit(cache=True, inline="always")
def _put(h, f, addr, value, half):
    if half:
        h[addr >> 1] = f32_to_f16(value)
    else:
        f[addr >> 2] = value


@njit(cache=True, inline="always")
def _put_index(h, u, addr, index, half):
    """Store ``index`` as the bits of a uint16 (float16 slots) or uint32 (float32 slots)."""
    if half:
        h[addr >> 1] = np.uint16(index & 0xFFFF)
    else:
        u[addr >> 2] = np.uint32(index & 0xFFFFFFFF)


@njit(cache=True, inline="always")
def add(a, b, half):
    """One adder step: float32 sum, or float16 sum rounded and saturated at +-65504."""
    s = a + b
    if half:
        r = f16_to_f32(f32_to_f16(s))
        if np.isinf(r) and np.isfinite(a) and np.isfinite(b):
            r = HALF_MAX if r > 0 else -HALF_MAX
        return r
    return s


@instruction
def tree_sum(buf, width, half):
    """Pairwise sum of ``buf[:width]`` (``width`` a power of two) in place; returns the total."""
    while width > 1:
        width //= 2
        for i in range(width):
            buf[i] = add(buf[2 * i], buf[2 * i + 1], half)
    return buf[0]


@njit(cache=True, inline="always")
def _better(v, best, op):
    """``v`` strictly beats ``best`` (ties keep the earlier element)."""
    if op == OP_MAX:
        return v > best
    return v < best


@njit(cache=True, inline="always")
def _fill(op, half):
    """Result of a block with no active lane."""
    if op == OP_SUM:
        return np.float32(0.0)
    big = HALF_MAX if half else np.float32(np.inf)
    return -big if op == OP_MAX else big


@njit(cache=True, inline="always")
def _active(counter, lo, hi, total, r, e, lanes):
    if counter:
        return r * lanes + e < total
    return lane_on(lo, hi, e)


@njit(cache=True, inline="always")
def _apart(a, a_bytes, b, b_bytes):
    """The byte ranges ``[a, a + a_bytes)`` and ``[b, b + b_bytes)`` do not overlap."""
    return a + a_bytes <= b or b + b_bytes <= a


@njit(cache=True)
def _src_end(counter, lo, hi, total, repeats, lanes, blk, rep, epb):
    """One past the largest element index an active lane reads (0 if none is active)."""
    end = 0
    for r in range(repeats):
        for e in range(lanes - 1, -1, -1):
            if _active(counter, lo, hi, total, r, e, lanes):
                end = max(end, element(r, e, blk, rep, epb) + 1)
                break
    return end


# --------------------------------------------------------------------------- whole_reduce_*

@instruction
def whole_reduce(lm, st, op, half, order, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo,
                 mask_hi, repeat, dst_rep, src_blk, src_rep, loc):
    """``whole_reduce_sum/max/min``: one result per repeat at ``dst + r * dst_rep`` slots."""
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    check_stride(dst_rep, U16_MAX, loc)
    check_stride(src_blk, U16_MAX, loc)
    check_stride(src_rep, U16_MAX, loc)
    if order < 0 or order > 3:
        raise Fault(F_ORDER, loc, order, 0, 0)
    check_aligned(src, BLOCK, 1, loc)
    # slot: the bytes one repeat's result occupies (the unit of dst_rep_stride)
    if op == OP_SUM or order == ORDER_ONLY_VALUE:
        slot = esize
    elif order == ORDER_ONLY_INDEX:
        slot = 4
    else:
        slot = 2 * esize
    check_aligned(dst, esize if op == OP_SUM else 2 * esize, 1, loc)
    end = _src_end(counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb)
    if end == 0:
        return
    check_count(end, src_len, loc)
    check_count(((repeats - 1) * dst_rep * slot + slot) // esize, dst_len, loc)

    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    u = lm.view(np.uint32)
    if op == OP_SUM and _apart(dst, (repeats - 1) * dst_rep * slot + slot, src, end * esize):
        sums = level0_sums(h, f, src // esize, counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb,
                           lanes, half)
        for r in range(repeats):
            _put(h, f, dst + r * dst_rep * slot, sums[r], half)
        return
    buf = np.zeros(lanes, np.float32)
    for r in range(repeats):
        out = dst + r * dst_rep * slot
        if op == OP_SUM:
            for e in range(lanes):
                if _active(counter, lo, hi, total, r, e, lanes):
                    buf[e] = _get(h, f, src + element(r, e, src_blk, src_rep, epb) * esize, half)
                else:
                    buf[e] = 0.0
            _put(h, f, out, tree_sum(buf, lanes, half), half)
            continue
        best = np.float32(0.0)
        where = -1
        for e in range(lanes):
            if _active(counter, lo, hi, total, r, e, lanes):
                v = _get(h, f, src + element(r, e, src_blk, src_rep, epb) * esize, half)
                if where < 0 or _better(v, best, op):
                    best = v
                    where = e
        if order == ORDER_VALUE_INDEX:
            _put(h, f, out, best, half)
            _put_index(h, u, out + esize, where, half)
        elif order == ORDER_INDEX_VALUE:
            _put_index(h, u, out, where, half)
            _put(h, f, out + esize, best, half)
        elif order == ORDER_ONLY_VALUE:
            _put(h, f, out, best, half)
        else:
            u[out >> 2] = np.uint32(where)


# --------------------------------------------------------------------------- block_reduce_* / pair_reduce_sum

@instruction
def block_reduce(lm, st, op, half, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                 repeat, dst_rep, src_blk, src_rep, loc):
    """``block_reduce_sum/max/min``: result ``k`` of repeat ``r`` at ``dst[r * dst_rep * 8 + k]``."""
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    check_stride(dst_rep, U16_MAX, loc)
    check_stride(src_blk, U16_MAX, loc)
    check_stride(src_rep, U16_MAX, loc)
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, 8 * esize, 1, loc)
    end = _src_end(counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb)
    if end == 0:
        return
    check_count(end, src_len, loc)
    check_count((repeats - 1) * dst_rep * 8 + 8, dst_len, loc)

    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    if op == OP_SUM and _apart(dst, ((repeats - 1) * dst_rep * 8 + 8) * esize, src, end * esize):
        # a block without an active lane sums +0s to the fill value +0
        sums = level0_sums(h, f, src // esize, counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb,
                           epb, half)
        for r in range(repeats):
            for k in range(8):
                _put(h, f, dst + ((r * dst_rep) * 8 + k) * esize, sums[r * 8 + k], half)
        return
    buf = np.zeros(epb, np.float32)
    for r in range(repeats):
        for k in range(8):
            seen = False
            best = _fill(op, half)
            for j in range(epb):
                e = k * epb + j
                if _active(counter, lo, hi, total, r, e, lanes):
                    v = _get(h, f, src + element(r, e, src_blk, src_rep, epb) * esize, half)
                    if op == OP_SUM:
                        buf[j] = v
                    elif not seen or _better(v, best, op):
                        best = v
                    seen = True
                else:
                    buf[j] = 0.0
            if op == OP_SUM and seen:
                best = tree_sum(buf, epb, half)
            _put(h, f, dst + ((r * dst_rep) * 8 + k) * esize, best, half)


@instruction
def pair_reduce_sum(lm, st, half, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                    repeat, dst_rep, src_blk, src_rep, loc):
    """``pair_reduce_sum``: ``dst[r * dst_rep * lanes/2 + j] = src[2j] + src[2j + 1]`` of repeat ``r``."""
    esize = 2 if half else 4
    lanes = 256 // esize
    half_lanes = lanes // 2
    epb = 32 // esize
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    check_stride(dst_rep, U16_MAX, loc)
    check_stride(src_blk, U16_MAX, loc)
    check_stride(src_rep, U16_MAX, loc)
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, BLOCK, 1, loc)
    end = _src_end(counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb)
    if end == 0:
        return
    check_count(end, src_len, loc)
    dst_end = 0
    for r in range(repeats):
        for j in range(half_lanes):
            if _active(counter, lo, hi, total, r, 2 * j, lanes) or \
                    _active(counter, lo, hi, total, r, 2 * j + 1, lanes):
                dst_end = max(dst_end, r * dst_rep * half_lanes + j + 1)
    check_count(dst_end, dst_len, loc)

    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    for r in range(repeats):
        for j in range(half_lanes):
            a_on = _active(counter, lo, hi, total, r, 2 * j, lanes)
            b_on = _active(counter, lo, hi, total, r, 2 * j + 1, lanes)
            if not (a_on or b_on):
                continue
            a = _get(h, f, src + element(r, 2 * j, src_blk, src_rep, epb) * esize, half) if a_on \
                else np.float32(0.0)
            b = _get(h, f, src + element(r, 2 * j + 1, src_blk, src_rep, epb) * esize, half) if b_on \
                else np.float32(0.0)
            _put(h, f, dst + (r * dst_rep * half_lanes + j) * esize, add(a, b, half), half)


# --------------------------------------------------------------------------- reduce_sum / reduce_max / reduce_min

@njit(cache=True, inline="always")
def _round_up(a, b):
    return (a + b - 1) // b * b


@instruction
def tmp_elements(op, cal_index, first_repeats, lanes, epb):
    """The documented minimum ``shared_tmp_buffer`` size, in elements."""
    if op == OP_SUM:
        return _round_up(first_repeats, epb)
    out1 = 2 * first_repeats
    if not cal_index:
        return _round_up(out1, epb)
    out2 = (out1 + lanes - 1) // lanes * 2
    out3 = (out2 + lanes - 1) // lanes * 2
    return _round_up(out1, epb) + _round_up(out2, epb) + _round_up(out3, epb)


@njit(cache=True)
def _check_tmp(op, cal_index, first_repeats, tmp, tmp_len, lanes, epb, loc):
    check_aligned(tmp, BLOCK, 1, loc)
    need = tmp_elements(op, cal_index, first_repeats, lanes, epb)
    if tmp_len < need:
        raise Fault(F_TMP_SMALL, loc, tmp_len, need, first_repeats)


@njit(cache=True, inline="always")
def _store_result(h, f, u, dst, value, index, with_index, half):
    esize = 2 if half else 4
    _put(h, f, dst, value, half)
    if with_index:
        _put_index(h, u, dst + esize, index, half)


@instruction
def reduce_count(lm, st, op, half, cal_index, dst, dst_len, src, src_len, tmp, tmp_len, count, loc):
    """``reduce_*(dst, src, shared_tmp_buffer, count[, cal_index])``: the first ``count`` elements.

    The sum runs in counter mode and, like the library, leaves the mask register in normal mode with
    every lane enabled.
    """
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    check_count(count, src_len, loc)
    if count == 0:
        return
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, esize, 1, loc)
    with_index = op != OP_SUM and cal_index != 0
    check_count(2 if with_index else 1, dst_len, loc)
    if op != OP_SUM:   # the Atlas A2 sum uses the hardware accumulator, not the buffer
        _check_tmp(op, cal_index != 0, max(count // lanes, 1), tmp, tmp_len, lanes, epb, loc)

    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    u = lm.view(np.uint32)
    if op == OP_SUM:
        acc = sum_count(h, f, src // esize, count, lanes, half)
        _store_result(h, f, u, dst, acc, 0, False, half)
        count_form_done(st)
        return
    best, where = first_extreme(h, f, src // esize, count, op == OP_MAX, half)
    _store_result(h, f, u, dst, best, where, with_index, half)


@instruction
def reduce_mask(lm, op, half, cal_index, dst, dst_len, src, src_len, tmp, tmp_len, mask_is_bits, mask_lo,
                mask_hi, repeat, src_rep, loc):
    """``reduce_*(dst, src, shared_tmp_buffer, mask, repeat_time, src_rep_stride[, cal_index])``."""
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    if repeat < 0 or repeat > U8_MAX:
        raise Fault(F_REPEAT, loc, repeat, 0, 0)
    check_stride(src_rep, U8_MAX, loc)
    lo, hi = explicit_mask(mask_is_bits != 0, mask_lo, mask_hi, lanes, loc)
    end = _src_end(np.bool_(False), lo, hi, np.int64(0), repeat, lanes, np.int64(1), src_rep, epb)
    if end == 0:
        return
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, esize, 1, loc)
    check_count(end, src_len, loc)
    with_index = op != OP_SUM and cal_index != 0
    check_count(2 if with_index else 1, dst_len, loc)
    _check_tmp(op, cal_index != 0, repeat, tmp, tmp_len, lanes, epb, loc)

    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    u = lm.view(np.uint32)
    if op == OP_SUM:
        # level 1: one tree per repeat; then trees over groups of `lanes` results until one is left
        vals = level0_sums(h, f, src // esize, False, lo, hi, 0, repeat, lanes, 1, src_rep, epb, lanes, half)
        n = repeat
        while n > 1:
            groups = (n + lanes - 1) // lanes
            padded = np.zeros(groups * lanes, np.float32)
            padded[:n] = vals[:n]
            vals = tree_sums(h, f, padded, 0, groups * lanes, lanes, np.empty(groups * lanes // 2, np.float32),
                             np.empty(groups * lanes // 4, np.float32), half, False)
            n = groups
        _store_result(h, f, u, dst, vals[0], 0, False, half)
        return
    best = np.float32(0.0)
    where = -1
    for r in range(repeat):
        for e in range(lanes):
            if lane_on(lo, hi, e):
                i = element(r, e, 1, src_rep, epb)
                v = _get(h, f, src + i * esize, half)
                if where < 0 or _better(v, best, op):
                    best = v
                    where = i
    _store_result(h, f, u, dst, best, where, with_index, half)
