"""Gather: collect elements (``gather``) or 32-byte blocks (``gatherb``) of a UB tensor by byte offsets.

What the hardware computes (Ascend C Gather / Gatherb pages and the Atlas A2
library sources; assumptions are marked *assumed*):

* ``gather``: element ``i`` of the result is the element at byte
  ``src_base + src_offset[i]`` of ``src``.  Offsets are uint32 byte offsets and,
  like ``src_base``, must be multiples of the element size.  Elements are moved
  as raw bits, so every 16- and 32-bit type behaves the same.
* Level-0 ``gather``: repeat ``r`` handles 256 bytes of results; lane ``e``
  takes offset ``src_offset[r * lanes + e]`` (the offsets are consumed
  contiguously, *assumed*) and writes ``dst[r * dst_rep_stride * epb + e]``
  (``dst_rep_stride`` in 32-byte blocks).  Masked-off lanes keep ``dst``.
* ``gatherb``: repeat ``r`` copies 8 blocks of 32 bytes; block ``k`` comes from
  byte ``offset[r * 8 + k]`` of ``src0`` (a multiple of 32) and goes to block
  ``r * dst_rep_stride + k * dst_blk_stride`` of ``dst``.
* Each repeat reads all its sources before writing (so ``dst`` may alias
  ``src`` repeat by repeat).
* The count form is the library's full repeats plus one tail repeat, each
  with a continuous mask written to the mask register; the tail's mask (or a
  full one) stays there afterwards.  (The library computes the number of full
  repeats as a uint8, so on the hardware a count above 255 repeats loses its
  upper repeats; npuemu gathers all ``count`` elements.)

npuemu checks every gathered address against ``src`` (the hardware would read
whatever UB holds there).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import state as S
from .common import BLOCK, check_aligned, check_count, memmove
from .fault import Fault, register
from .vmask import F_REPEAT, bits_from_count, check_stride, lane_on, resolve

U8_MAX = 255
U16_MAX = 65535
U32_MAX = 0xFFFFFFFF

F_OFF_ALIGN = 650
F_OFF_OOB = 651
F_BASE_RANGE = 652
F_BASE_ALIGN = 653

register({
    F_OFF_ALIGN: (errors.AlignmentError,
                  lambda a, b, c, env: f"offset {a} is {b} bytes, not a multiple of {c} (the gathered unit)"),
    F_OFF_OOB: (errors.BoundsError,
                lambda a, b, c, env: f"offset {a} selects bytes from {b} on, past the end of src ({c} bytes)"),
    F_BASE_RANGE: (errors.ParamRangeError,
                   lambda a, b, c, env: f"src_base {a} is outside the uint32 range"),
    F_BASE_ALIGN: (errors.AlignmentError,
                   lambda a, b, c, env: f"src_base {a} is not a multiple of the element size {b}"),
})


@njit(cache=True)
def _offset(u, off, index, unit, base, src_nbytes, loc):
    """Byte position in ``src`` that offset ``index`` (of the uint32 tensor at ``off``) selects, checked."""
    o = np.int64(u[(off >> 2) + index])
    if o % unit != 0:
        raise Fault(F_OFF_ALIGN, loc, index, o, unit)
    start = base + o
    if start + unit > src_nbytes:
        raise Fault(F_OFF_OOB, loc, index, start, src_nbytes)
    return start


@instruction
def gather(lm, st, esize, dst, dst_len, src, src_len, off, off_len, base, use_count, count, is_set_mask,
           mask_is_bits, mask_lo, mask_hi, repeat, dst_rep, loc):
    """``gather``: count form (``use_count``) or level-0 form (mask, ``repeat``, ``dst_rep``)."""
    lanes = 256 // esize
    epb = 32 // esize
    if use_count:
        counter, lo, hi, repeats, total = True, np.uint64(0), np.uint64(0), (count + lanes - 1) // lanes, count
        check_count(count, dst_len, loc)
    else:
        counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                                  repeat, esize, loc)
        check_stride(dst_rep, U16_MAX, loc)
    if base < 0 or base > U32_MAX:
        raise Fault(F_BASE_RANGE, loc, base, 0, 0)
    if base % esize != 0:
        raise Fault(F_BASE_ALIGN, loc, base, esize, 0)
    check_aligned(dst, BLOCK, 1, loc)
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(off, BLOCK, 1, loc)
    u = lm.view(np.uint32)
    src_nbytes = src_len * esize
    # pass 1: check every active lane's offset slot, source and destination before moving anything
    dst_end = 0
    off_end = 0
    for r in range(repeats):
        for e in range(lanes):
            if not ((r * lanes + e < total) if counter else lane_on(lo, hi, e)):
                continue
            off_end = max(off_end, r * lanes + e + 1)
            dst_end = max(dst_end, r * dst_rep * epb + e + 1 if not use_count else r * lanes + e + 1)
    check_count(off_end, off_len, loc)
    check_count(dst_end, dst_len, loc)
    for r in range(repeats):
        for e in range(lanes):
            if (r * lanes + e < total) if counter else lane_on(lo, hi, e):
                _offset(u, off, r * lanes + e, esize, base, src_nbytes, loc)
    # pass 2: move, one repeat at a time
    buf = np.empty(256, np.uint8)
    for r in range(repeats):
        for e in range(lanes):
            if (r * lanes + e < total) if counter else lane_on(lo, hi, e):
                a = src + base + np.int64(u[(off >> 2) + r * lanes + e])
                memmove(buf, e * esize, lm, a, esize)
        for e in range(lanes):
            if (r * lanes + e < total) if counter else lane_on(lo, hi, e):
                d = dst + ((r * lanes + e) if use_count else (r * dst_rep * epb + e)) * esize
                memmove(lm, d, buf, e * esize, esize)
    if use_count and count > 0:
        # the library issues full repeats and then the tail, each with a continuous mask it leaves behind
        tail = count % lanes
        mlo, mhi = bits_from_count(tail if tail else lanes)
        st[S.MASK_LO] = np.int64(mlo)
        st[S.MASK_HI] = np.int64(mhi)


@instruction
def gatherb(lm, esize, dst, dst_len, src, src_len, off, off_len, repeat, dst_blk, dst_rep, loc):
    """``gatherb``: repeat ``r`` copies the 32-byte blocks at ``src + offset[8r + k]``, k = 0..7."""
    if repeat < 0 or repeat > U8_MAX:
        raise Fault(F_REPEAT, loc, repeat, 0, 0)
    check_stride(dst_blk, U8_MAX, loc)
    check_stride(dst_rep, U8_MAX, loc)
    check_aligned(dst, BLOCK, 1, loc)
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(off, BLOCK, 1, loc)
    if repeat == 0:
        return
    epb = 32 // esize
    check_count(8 * repeat, off_len, loc)
    check_count(((repeat - 1) * dst_rep + 7 * dst_blk + 1) * epb, dst_len, loc)
    u = lm.view(np.uint32)
    src_nbytes = src_len * esize
    for i in range(8 * repeat):
        _offset(u, off, i, np.int64(BLOCK), np.int64(0), src_nbytes, loc)
    buf = np.empty(256, np.uint8)
    for r in range(repeat):
        for k in range(8):
            a = src + np.int64(u[(off >> 2) + 8 * r + k])
            memmove(buf, 32 * k, lm, a, 32)
        for k in range(8):
            d = dst + (r * dst_rep + k * dst_blk) * BLOCK
            memmove(lm, d, buf, 32 * k, 32)
