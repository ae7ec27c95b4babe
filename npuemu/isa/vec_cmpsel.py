"""Compare and select: bit masks from element comparisons, and element selection by bit masks.

What the hardware computes (Ascend C 比较与选择 pages, the Atlas A2 library
sources and the CCE intrinsic docs; assumptions are marked *assumed*):

* ``compare`` writes one bit per element, little-endian: element ``i`` is bit
  ``i % 8`` of byte ``i // 8``.  Each repeat writes its 128 (float16) or 64
  (float32, int32) bits contiguously after the previous repeat's: the
  destination strides of ``repeat_params`` do not apply to a bit vector.
  On Atlas A2 the ``mask`` of the level-0 forms is a reserved parameter: every
  lane of every repeat is compared, whatever the mask or mask mode.
* The count form needs ``count * sizeof(T)`` to be a multiple of 256 bytes (the
  library issues whole repeats and would silently drop a tail).
* int32 sources support only ``CMPMODE.EQ``.  NaN compares as IEEE 754 says.
* The register form ``compare(src0, src1, cmp_mode, mask, repeat_params)``
  runs one repeat under the mask and leaves its bits in the 128-bit CMPMASK
  register (masked-off lanes give 0, *assumed*); ``get_cmp_mask`` copies the
  register to 16 bytes of UB and ``set_cmp_mask`` loads it from there, both
  16-byte aligned (the docs ask for a 128-byte ``get_cmp_mask`` destination;
  npuemu needs the 16 bytes it writes).
* ``select`` takes ``src0`` where the selection bit is 1 and ``src1`` where it is
  0.  ``VSEL_CMPMASK_SPR``: every repeat uses selection bits ``0 .. lanes - 1``
  (held in CMPMASK).  ``VSEL_TENSOR_SCALAR_MODE`` (``src1`` is a scalar) and
  ``VSEL_TENSOR_TENSOR_MODE``: repeat ``r`` uses bits ``r * lanes ..``, i.e. the
  mask is consumed continuously (*assumed* to be independent of the strides).
  Masked-off lanes keep the destination; ``sel_mask`` is 32-byte aligned like
  every vector operand.  As on the hardware, the tensor forms go through
  CMPMASK: mode 0 loads the selection bits into it (the 64 bits of a float32
  repeat, upper half zero), mode 1 the scalar (replicated), mode 2 the
  selection tensor's UB address (replicated uint32); the register forms read
  it back.  The count form of ``select`` leaves the vector mask register in
  normal mode with every lane enabled, as the library does.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..numerics.half import f16_to_f32, f32_to_f16
from . import state as S
from .common import BLOCK, check_aligned, check_count
from .fault import Fault, register
from .vmask import F_REPEAT, check_stride, count_form_done, element, extent, lane_on, resolve

# storage kinds of compared/selected elements
KIND_F16 = 0
KIND_F32 = 1
KIND_I32 = 2

# CMPMODE
LT, GT, EQ, LE, GE, NE = 0, 1, 2, 3, 4, 5

# SelMode
SEL_CMPMASK = 0
SEL_SCALAR = 1
SEL_TENSOR = 2

UB = 1                # Hardware.UB
U8_MAX = 255
U16_MAX = 65535

F_CMP_COUNT = 600
F_CMP_MODE = 601
F_SEL_MODE = 602
F_CMPMASK_ADDR = 603
F_SEL_BITS = 604

register({
    F_CMP_COUNT: (errors.AlignmentError,
                  lambda a, b, c, env: f"compare with a count needs count * sizeof(T) to be a multiple of 256 "
                                       f"bytes; {a} elements are {a * b} bytes"),
    F_CMP_MODE: (errors.ParamRangeError,
                 lambda a, b, c, env: f"comparison mode {a} is not a CMPMODE"
                                      + (" (int32 supports only CMPMODE.EQ)" if b else "")),
    F_SEL_MODE: (errors.ParamRangeError,
                 lambda a, b, c, env: f"selection mode {a} is not a SelMode"),
    F_CMPMASK_ADDR: (errors.BoundsError,
                     lambda a, b, c, env: f"VSEL_TENSOR_TENSOR_MODE reads {b} selection bytes at UB address {a} "
                                          f"(taken from the CMPMASK register), outside the {c}-byte UB"),
    F_SEL_BITS: (errors.BoundsError,
                 lambda a, b, c, env: f"select needs {a} selection bits ({(a + 7) // 8} bytes) but sel_mask "
                                      f"holds {b} bytes"),
})


# --------------------------------------------------------------------------- element access

@njit(cache=True, inline="always")
def _views(lm):
    return lm.view(np.uint16), lm.view(np.float32), lm.view(np.int32)


@njit(cache=True, inline="always")
def _get(h, f, i, addr, kind):
    """Element at byte ``addr`` as float64 (exact for float16, float32 and int32).

    ``h``, ``f`` and ``i`` are uint16, float32 and int32 views of the local memory.
    """
    if kind == KIND_F16:
        return np.float64(f16_to_f32(h[addr >> 1]))
    if kind == KIND_F32:
        return np.float64(f[addr >> 2])
    return np.float64(i[addr >> 2])


@njit(cache=True, inline="always")
def _as_kind(x, kind):
    """A scalar operand converted to the element type (float16 / float32 rounding), as float64."""
    if kind == KIND_F16:
        return np.float64(f16_to_f32(f32_to_f16(np.float32(x))))
    if kind == KIND_F32:
        return np.float64(np.float32(x))
    return np.float64(np.int64(x))


@njit(cache=True, inline="always")
def _test(a, b, mode):
    if mode == LT:
        return a < b
    if mode == GT:
        return a > b
    if mode == EQ:
        return a == b
    if mode == LE:
        return a <= b
    if mode == GE:
        return a >= b
    return a != b


@njit(cache=True, inline="always")
def _esize(kind):
    return 2 if kind == KIND_F16 else 4


@njit(cache=True)
def _check_mode(mode, kind, loc):
    if mode < 0 or mode > 5 or (kind == KIND_I32 and mode != EQ):
        raise Fault(F_CMP_MODE, loc, mode, 1 if kind == KIND_I32 else 0, 0)


@njit(cache=True, inline="always")
def _bit(lm, base, i):
    return (lm[base + (i >> 3)] >> (i & 7)) & 1


# --------------------------------------------------------------------------- compare

@instruction
def compare(lm, kind, mode, dst, dst_nbytes, src0, src0_len, src1, src1_len, scalar, use_scalar, repeat,
            s0_blk, s1_blk, s0_rep, s1_rep, loc):
    """Level-0 ``compare`` / ``compare_scalar``: ``repeat`` full repeats, bits packed into ``dst``."""
    esize = _esize(kind)
    lanes = 256 // esize
    epb = 32 // esize
    _check_mode(mode, kind, loc)
    if repeat < 0 or repeat > U8_MAX:
        raise Fault(F_REPEAT, loc, repeat, 0, 0)
    check_stride(s0_blk, U16_MAX, loc)
    check_stride(s0_rep, U16_MAX, loc)
    if not use_scalar:
        check_stride(s1_blk, U16_MAX, loc)
        check_stride(s1_rep, U16_MAX, loc)
    check_aligned(dst, BLOCK, 1, loc)
    check_aligned(src0, BLOCK, 1, loc)
    if not use_scalar:
        check_aligned(src1, BLOCK, 1, loc)
    if repeat == 0:
        return
    check_count(extent(repeat, lanes, s0_blk, s0_rep, epb), src0_len, loc)
    if not use_scalar:
        check_count(extent(repeat, lanes, s1_blk, s1_rep, epb), src1_len, loc)
    check_count(repeat * lanes // 8, dst_nbytes, loc)
    b = _as_kind(scalar, kind)
    h, f, iv = _views(lm)
    out = np.zeros(repeat * lanes // 8, np.uint8)
    for r in range(repeat):
        for e in range(lanes):
            a = _get(h, f, iv, src0 + element(r, e, s0_blk, s0_rep, epb) * esize, kind)
            if not use_scalar:
                b = _get(h, f, iv, src1 + element(r, e, s1_blk, s1_rep, epb) * esize, kind)
            if _test(a, b, mode):
                i = r * lanes + e
                out[i >> 3] |= np.uint8(1 << (i & 7))
    lm[dst:dst + out.size] = out


@instruction
def compare_count(lm, kind, mode, dst, dst_nbytes, src0, src0_len, src1, src1_len, scalar, use_scalar, count,
                  loc):
    """``compare(dst, src0, src1, cmp_mode, count)`` / ``compare_scalar(..., count)``."""
    esize = _esize(kind)
    lanes = 256 // esize
    _check_mode(mode, kind, loc)
    check_count(count, src0_len, loc)
    if not use_scalar:
        check_count(count, src1_len, loc)
    if count * esize % 256 != 0:
        raise Fault(F_CMP_COUNT, loc, count, esize, 0)
    compare(lm, kind, mode, dst, dst_nbytes, src0, src0_len, src1, src1_len, scalar, use_scalar,
            count // lanes, np.int64(1), np.int64(1), np.int64(8), np.int64(8), loc)


@instruction
def compare_to_cmpmask(lm, st, kind, mode, src0, src0_len, src1, src1_len, is_set_mask, mask_is_bits, mask_lo,
                       mask_hi, s0_blk, s1_blk, s0_rep, s1_rep, loc):
    """Register form ``compare(src0, src1, cmp_mode, mask, repeat_params)``: one repeat into CMPMASK."""
    esize = _esize(kind)
    lanes = 256 // esize
    epb = 32 // esize
    _check_mode(mode, kind, loc)
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              np.int64(1), esize, loc)
    check_stride(s0_blk, U16_MAX, loc)
    check_stride(s1_blk, U16_MAX, loc)
    check_aligned(src0, BLOCK, 1, loc)
    check_aligned(src1, BLOCK, 1, loc)
    end = 0
    for e in range(lanes):
        on = e < total if counter else lane_on(lo, hi, e)
        if on:
            end = element(0, e, s0_blk, s0_rep, epb) + 1
    check_count(end, src0_len, loc)
    end = 0
    for e in range(lanes):
        on = e < total if counter else lane_on(lo, hi, e)
        if on:
            end = element(0, e, s1_blk, s1_rep, epb) + 1
    check_count(end, src1_len, loc)
    bits_lo = np.uint64(0)
    bits_hi = np.uint64(0)
    h, f, iv = _views(lm)
    for e in range(lanes):
        on = e < total if counter else lane_on(lo, hi, e)
        if not on:
            continue
        a = _get(h, f, iv, src0 + element(0, e, s0_blk, s0_rep, epb) * esize, kind)
        b = _get(h, f, iv, src1 + element(0, e, s1_blk, s1_rep, epb) * esize, kind)
        if _test(a, b, mode):
            if e < 64:
                bits_lo |= np.uint64(1) << np.uint64(e)
            else:
                bits_hi |= np.uint64(1) << np.uint64(e - 64)
    st[S.CMPMASK_LO] = np.int64(bits_lo)
    st[S.CMPMASK_HI] = np.int64(bits_hi)


@njit(cache=True, inline="always")
def _word(lm, addr):
    w = np.uint64(0)
    for k in range(8):
        w |= np.uint64(lm[addr + k]) << np.uint64(8 * k)
    return w


@instruction
def set_cmp_mask(lm, st, src, src_nbytes, loc):
    """``set_cmp_mask(src)``: CMPMASK = the 16 bytes at ``src``."""
    check_aligned(src, 16, 1, loc)
    check_count(16, src_nbytes, loc)
    st[S.CMPMASK_LO] = np.int64(_word(lm, src))
    st[S.CMPMASK_HI] = np.int64(_word(lm, src + 8))


@instruction
def get_cmp_mask(lm, st, dst, dst_nbytes, loc):
    """``get_cmp_mask(dst)``: the 16 bytes at ``dst`` = CMPMASK."""
    check_aligned(dst, 16, 1, loc)
    check_count(16, dst_nbytes, loc)
    lo = np.uint64(st[S.CMPMASK_LO])
    hi = np.uint64(st[S.CMPMASK_HI])
    for k in range(8):
        lm[dst + k] = np.uint8((lo >> np.uint64(8 * k)) & np.uint64(0xFF))
        lm[dst + 8 + k] = np.uint8((hi >> np.uint64(8 * k)) & np.uint64(0xFF))


# --------------------------------------------------------------------------- select

@njit(cache=True, inline="always")
def _replicate(value, nbits):
    """A ``nbits``-bit value repeated across 64 bits."""
    w = np.uint64(0)
    for k in range(64 // nbits):
        w |= np.uint64(value) << np.uint64(k * nbits)
    return w


@njit(cache=True)
def _load_cmpmask(lm, st, kind, mode, sel, sel_nbytes, scalar, loc):
    """What a tensor-form select puts into CMPMASK before it runs (see the module docstring)."""
    if mode == SEL_CMPMASK:
        lanes = 256 // _esize(kind)
        if sel_nbytes < lanes // 8:
            raise Fault(F_SEL_BITS, loc, lanes, sel_nbytes, 0)
        st[S.CMPMASK_LO] = np.int64(_word(lm, sel))
        st[S.CMPMASK_HI] = np.int64(_word(lm, sel + 8)) if lanes == 128 else 0
    elif mode == SEL_SCALAR:
        if kind == KIND_F16:
            w = _replicate(f32_to_f16(np.float32(scalar)), 16)
        else:
            w = _replicate(np.float32(scalar).view(np.uint32), 32)
        st[S.CMPMASK_LO] = np.int64(w)
        st[S.CMPMASK_HI] = np.int64(w)
    else:
        w = _replicate(sel - st[S.SEG_BASE + UB], 32)
        st[S.CMPMASK_LO] = np.int64(w)
        st[S.CMPMASK_HI] = np.int64(w)


@njit(cache=True)
def _sel_source(lm, st, sel, sel_nbytes, nbits, loc):
    """Absolute address of the selection bits of mode 2 (from CMPMASK), checked for ``nbits`` bits."""
    rel = np.int64(np.uint64(st[S.CMPMASK_LO]) & np.uint64(0xFFFFFFFF))
    need = (nbits + 7) // 8
    if sel >= 0:
        if need > sel_nbytes:
            raise Fault(F_SEL_BITS, loc, nbits, sel_nbytes, 0)
        return sel
    size = st[S.SEG_SIZE + UB]
    if rel + need > size:
        raise Fault(F_CMPMASK_ADDR, loc, rel, need, size)
    return st[S.SEG_BASE + UB] + rel


@njit(cache=True)
def _scalar_from_cmpmask(st, kind):
    lo = np.uint64(st[S.CMPMASK_LO])
    if kind == KIND_F16:
        return np.float64(f16_to_f32(np.uint16(lo & np.uint64(0xFFFF))))
    return np.float64(np.uint32(lo & np.uint64(0xFFFFFFFF)).view(np.float32))


@njit(cache=True, inline="always")
def _put(h, f, addr, value, kind):
    if kind == KIND_F16:
        h[addr >> 1] = f32_to_f16(np.float32(value))
    else:
        f[addr >> 2] = np.float32(value)


@instruction
def select(lm, st, kind, mode, dst, dst_len, sel, sel_nbytes, src0, src0_len, src1, src1_len, scalar,
           load_cmpmask, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, d_blk, s0_blk, s1_blk, d_rep,
           s0_rep, s1_rep, loc):
    """Level-0 ``select`` (and its register forms, ``load_cmpmask == 0``; ``sel == -1`` then)."""
    esize = _esize(kind)
    lanes = 256 // esize
    epb = 32 // esize
    if mode < 0 or mode > 2:
        raise Fault(F_SEL_MODE, loc, mode, 0, 0)
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    for s in (d_blk, s0_blk, s1_blk, d_rep, s0_rep, s1_rep):
        check_stride(s, U8_MAX, loc)
    check_aligned(dst, BLOCK, 1, loc)
    check_aligned(src0, BLOCK, 1, loc)
    if mode != SEL_SCALAR:
        check_aligned(src1, BLOCK, 1, loc)
    if sel >= 0:
        check_aligned(sel, BLOCK, 1, loc)
    d_end = 0
    s0_end = 0
    s1_end = 0
    bits_end = 0
    for r in range(repeats):
        for e in range(lanes - 1, -1, -1):
            if (r * lanes + e < total) if counter else lane_on(lo, hi, e):
                d_end = max(d_end, element(r, e, d_blk, d_rep, epb) + 1)
                s0_end = max(s0_end, element(r, e, s0_blk, s0_rep, epb) + 1)
                s1_end = max(s1_end, element(r, e, s1_blk, s1_rep, epb) + 1)
                bits_end = r * lanes + e + 1
                break
    if d_end > 0:
        check_count(d_end, dst_len, loc)
        check_count(s0_end, src0_len, loc)
        if mode != SEL_SCALAR:
            check_count(s1_end, src1_len, loc)
    bits = 0
    if mode == SEL_SCALAR and d_end > 0:
        if sel < 0:
            raise Fault(F_SEL_BITS, loc, bits_end, 0, 0)
        if (bits_end + 7) // 8 > sel_nbytes:
            raise Fault(F_SEL_BITS, loc, bits_end, sel_nbytes, 0)
        bits = sel
    if load_cmpmask:
        _load_cmpmask(lm, st, kind, mode, sel, sel_nbytes, scalar, loc)
    if d_end == 0:
        return
    if mode == SEL_TENSOR:
        bits = _sel_source(lm, st, sel, sel_nbytes, bits_end, loc)
    b = _scalar_from_cmpmask(st, kind) if mode == SEL_SCALAR else np.float64(0.0)
    spr_lo = np.uint64(st[S.CMPMASK_LO])
    spr_hi = np.uint64(st[S.CMPMASK_HI])
    h, f, iv = _views(lm)
    for r in range(repeats):
        for e in range(lanes):
            if not ((r * lanes + e < total) if counter else lane_on(lo, hi, e)):
                continue
            if mode == SEL_CMPMASK:
                take0 = lane_on(spr_lo, spr_hi, e)
            else:
                take0 = _bit(lm, bits, r * lanes + e) != 0
            if take0:
                v = _get(h, f, iv, src0 + element(r, e, s0_blk, s0_rep, epb) * esize, kind)
            elif mode == SEL_SCALAR:
                v = b
            else:
                v = _get(h, f, iv, src1 + element(r, e, s1_blk, s1_rep, epb) * esize, kind)
            _put(h, f, dst + element(r, e, d_blk, d_rep, epb) * esize, v, kind)


@instruction
def select_count(lm, st, kind, mode, dst, dst_len, sel, sel_nbytes, src0, src0_len, src1, src1_len, scalar,
                 count, loc):
    """``select(dst, sel_mask, src0, src1, sel_mode, count)``: the first ``count`` elements.

    Runs in counter mode and, like the library, leaves the mask register in normal mode with every lane
    enabled.
    """
    esize = _esize(kind)
    lanes = 256 // esize
    if mode < 0 or mode > 2:
        raise Fault(F_SEL_MODE, loc, mode, 0, 0)
    check_count(count, dst_len, loc)
    check_count(count, src0_len, loc)
    if mode != SEL_SCALAR:
        check_count(count, src1_len, loc)
    check_aligned(dst, BLOCK, 1, loc)
    check_aligned(src0, BLOCK, 1, loc)
    check_aligned(sel, BLOCK, 1, loc)
    if mode != SEL_SCALAR:
        check_aligned(src1, BLOCK, 1, loc)
    if mode != SEL_CMPMASK and (count + 7) // 8 > sel_nbytes:
        raise Fault(F_SEL_BITS, loc, count, sel_nbytes, 0)
    _load_cmpmask(lm, st, kind, mode, sel, sel_nbytes, scalar, loc)
    b = _scalar_from_cmpmask(st, kind)
    spr_lo = np.uint64(st[S.CMPMASK_LO])
    spr_hi = np.uint64(st[S.CMPMASK_HI])
    h, f, iv = _views(lm)
    for k in range(count):
        if mode == SEL_CMPMASK:
            take0 = lane_on(spr_lo, spr_hi, k % lanes)
        else:
            take0 = _bit(lm, sel, k) != 0
        if take0:
            v = _get(h, f, iv, src0 + k * esize, kind)
        elif mode == SEL_SCALAR:
            v = b
        else:
            v = _get(h, f, iv, src1 + k * esize, kind)
        _put(h, f, dst + k * esize, v, kind)
    count_form_done(st)
