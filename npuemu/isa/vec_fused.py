"""Compound vector instructions: multiply-add, add/sub + ReLU + conversion, multiply + conversion, dequantisation.

Ascend C's 复合计算 (compound computation) APIs on Atlas A2/A3.  One
instruction, :func:`fused` (and :func:`fused_l0` for the mask/repeat form),
serves every (operation, data types) combination, named by a code
(:data:`CODES`); :func:`cast_deq` and :func:`cast_deq_l0` are the int16 ->
8-bit dequantisation, :func:`set_deq_scale`, :func:`set_deq_scale_cfg` and
:func:`set_vdeq` set the DEQSCALE register it and ``add_deq_relu`` read.

What each computes (``a``, ``b`` the elements of src0, src1; ``d`` of dst):

========================  ============================  ================================
instruction               result                        data types (source -> dst)
========================  ============================  ================================
``fused_mul_add``         ``a * d + b``                 f16, f32
``fused_mul_add_relu``    ``max(a * d + b, 0)``         f16, f32
``mul_add_dst``           ``a * b + d``                 f16, f32, f16 -> f32
``add_relu_cast``         ``cast(max(a + b, 0))``       f16 -> i8, f32 -> f16, i16 -> i8
``sub_relu_cast``         ``cast(max(a - b, 0))``       f16 -> i8, f32 -> f16, i16 -> i8
``mul_cast``              ``cast(a * b)``               f16 -> i8, f16 -> u8
``add_deq_relu``          ``max(deq(a + b), 0)``        i32 -> f16
``cast_deq``              ``cast(a * scale + offset)``  i16 -> i8 / u8
========================  ============================  ================================

Numerics (sources: the Ascend C "复合计算" overview and the pages of each API;
the A2 library code for data types and strides):

* Rounding: each step rounds to its operands' type, as the separate
  instructions would.  The overview states that compound instructions "do
  not improve precision" when sources and destination share a type, and do
  when the destination is wider (half sources, float destination, as
  ``mul_add_dst`` f16 -> f32 and ``axpy``).  So ``fused_mul_add`` on float16
  rounds ``a * d`` to float16 and then the sum to float16 (two roundings, not
  an IEEE fused multiply-add); on float32 likewise in float32.  For
  ``mul_add_dst`` f16 -> f32 the float16 product is exact in float32 and only
  the sum rounds.  (*assumed* where the documents are silent: that "no
  precision gain" means exactly the rounding of the separate instructions.)
* The conversions of ``add_relu_cast``, ``sub_relu_cast`` and ``mul_cast``
  are CAST_NONE -- round to nearest, ties to even -- and saturate on overflow
  (documented: float -> half gives at most 65504, int8/uint8 clamp).  NaN
  converts to 0 (*assumed*, as the saturation mode of the numerics defines
  it).  int16 sums wrap to 16 bits before the ReLU, as ``add_relu`` does.
* ``add_deq_relu``: the int32 sum (wrapping) times the float16 scale of the
  DEQSCALE register (``set_deq_scale(scale)``), rounded once to float16 (the
  product of an int32 and a float16 is exact before it), saturating at 65504
  (*assumed*, as the CastDequant family saturates), then the ReLU.
* ``cast_deq`` (DEQSCALE from ``set_deq_scale(scale, offset, sign_mode)``, or
  from the 16 configurations ``set_deq_scale(vdeq, vdeq_info)`` wrote to UB):
  ``a * M + offset`` computed exactly, where ``M`` is ``scale`` cut to the
  register's (1, 8, 10) format (the low 13 mantissa bits dropped, *assumed*
  truncation) and ``offset`` the signed 9-bit field, rounded to the nearest
  integer (ties to even, *assumed*: the int32 variant documents RINT) and
  saturated to int8 when ``sign_mode`` is set, else to uint8.  With
  ``is_vec_deq`` lane ``e`` uses configuration ``e % 16`` of the 128-byte
  table (the configurations repeat cyclically over each DataBlock's 16
  elements).  The 8-bit results of a DataBlock of 16 sources fill half of
  one 32-byte DataBlock of dst: bytes 16..31 when ``half_block`` (the
  ``..b8h`` instruction), bytes 0..15 otherwise; the other half keeps its
  bytes.  So dst uses the source's block layout (strides in 32-byte units).

Lanes follow the wider type (64 when an operand is 32-bit, else 128); the
narrower operand's lane ``e`` is element ``e`` of its own 32-byte blocks, as
in ``cast``.  Each repeat reads all its operands before writing, so dst may
alias a source.  The count forms are the library's counter-mode calls with
contiguous operands and leave the mask register in normal mode, all lanes.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..numerics import half as H
from ..numerics import rounding as R
from . import state as S
from . import vmask as V
from .common import load_raw, store_raw
from .fault import Fault, register

(FMA_F16, FMA_F32, FMAR_F16, FMAR_F32, MAD_F16, MAD_F32, MAD_F16_F32, ARC_F16_I8, ARC_F32_F16, ARC_I16_I8,
 SRC_F16_I8, SRC_F32_F16, SRC_I16_I8, MC_F16_I8, MC_F16_U8, ADR_I32_F16) = range(16)

# (instruction, source isa suffix, destination isa suffix) -> code
CODES = {
    ("fused_mul_add", "f16", "f16"): FMA_F16, ("fused_mul_add", "f32", "f32"): FMA_F32,
    ("fused_mul_add_relu", "f16", "f16"): FMAR_F16, ("fused_mul_add_relu", "f32", "f32"): FMAR_F32,
    ("mul_add_dst", "f16", "f16"): MAD_F16, ("mul_add_dst", "f32", "f32"): MAD_F32,
    ("mul_add_dst", "f16", "f32"): MAD_F16_F32,
    ("add_relu_cast", "f16", "i8"): ARC_F16_I8, ("add_relu_cast", "f32", "f16"): ARC_F32_F16,
    ("add_relu_cast", "i16", "i8"): ARC_I16_I8,
    ("sub_relu_cast", "f16", "i8"): SRC_F16_I8, ("sub_relu_cast", "f32", "f16"): SRC_F32_F16,
    ("sub_relu_cast", "i16", "i8"): SRC_I16_I8,
    ("mul_cast", "f16", "i8"): MC_F16_I8, ("mul_cast", "f16", "u8"): MC_F16_U8,
    ("add_deq_relu", "i32", "f16"): ADR_I32_F16,
}
assert sorted(CODES.values()) == list(range(len(CODES)))
_SIZE = {"f16": 2, "f32": 4, "i8": 1, "u8": 1, "i16": 2, "i32": 4}
_BY_CODE = {c: (s, d) for (_, s, d), c in CODES.items()}
SRC_SIZE = np.array([_SIZE[_BY_CODE[c][0]] for c in range(len(CODES))], np.int64)
DST_SIZE = np.array([_SIZE[_BY_CODE[c][1]] for c in range(len(CODES))], np.int64)
SRC_SIGNED = np.array([_BY_CODE[c][0] in ("i16", "i32") for c in range(len(CODES))], np.bool_)
READS_DST = np.array([c in (FMA_F16, FMA_F32, FMAR_F16, FMAR_F32, MAD_F16, MAD_F32, MAD_F16_F32)
                      for c in range(len(CODES))], np.bool_)

F_VDEQ_RANGE = 660
F_VDEQ_ALIGN = 661
F_VDEQ_SHORT = 662

register({
    F_VDEQ_RANGE: (errors.BoundsError,
                   lambda a, b, c, env: f"the DEQSCALE register points at UB byte {a}: the 128-byte vdeq table "
                                        f"there ends past UB's {b} bytes (set_deq_scale(vdeq, vdeq_info) first)"),
    F_VDEQ_ALIGN: (errors.AlignmentError,
                   lambda a, b, c, env: f"vdeq starts at UB byte {a}, which is not 32-byte aligned"),
    F_VDEQ_SHORT: (errors.BoundsError,
                   lambda a, b, c, env: f"vdeq holds {a} uint64 elements; the table needs 16 (128 bytes)"),
})

_I8_LO, _I8_HI = np.int64(-128), np.int64(127)
_U8_LO, _U8_HI = np.int64(0), np.int64(255)
_RINT = np.int64(R.RINT)
_SAT = np.bool_(True)


@njit(cache=True, inline="always")
def _f32(bits):
    return np.uint32(bits).view(np.float32)


@njit(cache=True, inline="always")
def _f32_bits(x):
    return np.int64(np.float32(x).view(np.uint32))


@njit(cache=True, inline="always")
def _h(bits):
    return H.f16_to_f32(np.uint16(bits))


@njit(cache=True, inline="always")
def _h_bits(x):
    """float32 -> float16 bits, nearest even (exact when ``x`` came from float16 arithmetic done in float32)."""
    return np.int64(H.f32_to_f16(np.float32(x)))


@njit(cache=True, inline="always")
def _relu(x):
    return x if x > 0 or x != x else np.float32(0.0)


@njit(cache=True, inline="always")
def _to_i8(x, lo, hi):
    """A float32 rounded to nearest even and saturated to [lo, hi]; NaN gives 0."""
    return R.float_to_int(_f32_bits(x), _RINT, R.F32_M, R.F32_E, lo, hi)


@njit(cache=True)
def lane(code, a, b, d, deq):
    """One lane: ``a``, ``b`` the raw source elements, ``d`` the raw old destination; the raw result."""
    if code == FMA_F16 or code == FMAR_F16:
        r = _h(_h_bits(_h(a) * _h(d))) + _h(b)
        if code == FMAR_F16:
            r = _relu(r)
        return _h_bits(r)
    if code == FMA_F32 or code == FMAR_F32:
        r = np.float32(np.float32(_f32(a) * _f32(d)) + _f32(b))
        if code == FMAR_F32:
            r = _relu(r)
        return _f32_bits(r)
    if code == MAD_F16:
        return _h_bits(_h(_h_bits(_h(a) * _h(b))) + _h(d))
    if code == MAD_F32:
        return _f32_bits(np.float32(np.float32(_f32(a) * _f32(b)) + _f32(d)))
    if code == MAD_F16_F32:
        return _f32_bits(np.float32(_h(a) * _h(b)) + _f32(d))      # the product of two halves is exact
    if code == ARC_F16_I8 or code == SRC_F16_I8:
        s = _h(b) if code == ARC_F16_I8 else -_h(b)
        return _to_i8(_relu(_h(_h_bits(_h(a) + s))), _I8_LO, _I8_HI)
    if code == ARC_F32_F16 or code == SRC_F32_F16:
        s = _f32(a) + _f32(b) if code == ARC_F32_F16 else _f32(a) - _f32(b)
        return np.int64(R.f32_to_f16(_f32_bits(_relu(np.float32(s))), _RINT, _SAT))
    if code == ARC_I16_I8 or code == SRC_I16_I8:
        s = np.int16(a + b) if code == ARC_I16_I8 else np.int16(a - b)
        return R.saturate(np.int64(max(s, 0)), _I8_LO, _I8_HI)
    if code == MC_F16_I8 or code == MC_F16_U8:
        p = _h(_h_bits(_h(a) * _h(b)))
        if code == MC_F16_I8:
            return _to_i8(p, _I8_LO, _I8_HI)
        return _to_i8(p, _U8_LO, _U8_HI)
    # ADR_I32_F16: relu(deq(a + b)), deq = the int32 times the register's float16 scale, rounded once
    s = np.int64(np.int32(a + b))
    cls, sneg, smag, sexp = R.decode(np.uint64(deq & 0xFFFF), R.F16_M, R.F16_E)
    if cls == R.NAN:
        return np.int64(0)
    neg = (s < 0) != sneg
    if cls == R.INF:
        mag = np.uint64(0) if s == 0 else np.uint64(1) << np.uint64(62)
        sexp = 0
    else:
        mag = np.uint64(abs(s)) * smag
    bits = np.int64(R.round_float(neg, mag, sexp, _RINT, R.F16_M, R.F16_E, _SAT))
    if neg and mag != np.uint64(0):
        return np.int64(0)                                           # the ReLU
    return bits & 0x7FFF                                             # +0 for a zero product


@instruction
def fused(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, code, count, loc):
    """Count form: the first ``count`` elements of each operand, contiguous."""
    s_es, d_es, signed = SRC_SIZE[code], DST_SIZE[code], SRC_SIGNED[code]
    V.check_count(count, loc)
    V.check_operand(st, dst, dst_len, count, V.DST, loc)
    V.check_operand(st, s0, s0_len, count, V.SRC0, loc)
    V.check_operand(st, s1, s1_len, count, V.SRC1, loc)
    deq = st[S.DEQSCALE]
    for i in range(count):
        a = load_raw(lm, s0 + i * s_es, s_es, signed)
        b = load_raw(lm, s1 + i * s_es, s_es, signed)
        d = load_raw(lm, dst + i * d_es, d_es, False) if READS_DST[code] else np.int64(0)
        store_raw(lm, dst + i * d_es, d_es, lane(code, a, b, d, deq))
    V.count_form_done(st)


@instruction
def fused_l0(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, code, is_set_mask, mask_is_bits, mask_lo, mask_hi,
             repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep, loc):
    """Level-0 form: the mask's lanes of ``repeat`` repeats, BinaryRepeatParams strides (32-byte units)."""
    s_es, d_es, signed = SRC_SIZE[code], DST_SIZE[code], SRC_SIGNED[code]
    wide = max(s_es, d_es)
    lanes = 256 // wide
    s_epb, d_epb = 32 // s_es, 32 // d_es
    counter, lo, hi, repeats, total = V.resolve(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, wide, loc)
    for value, which in ((dblk, V.DST_BLK), (s0blk, V.SRC0_BLK), (s1blk, V.SRC1_BLK), (drep, V.DST_REP),
                         (s0rep, V.SRC0_REP), (s1rep, V.SRC1_REP)):
        V.check_field(value, V.U8_MAX, which, loc)
    top = V.lanes_used(counter, lo, hi, lanes, total)
    V.check_dst_blk_stride(dblk, top, d_epb, loc)
    V.check_operand(st, dst, dst_len, _reach(counter, top, lanes, repeats, total, dblk, drep, d_epb), V.DST, loc)
    V.check_operand(st, s0, s0_len, _reach(counter, top, lanes, repeats, total, s0blk, s0rep, s_epb), V.SRC0, loc)
    V.check_operand(st, s1, s1_len, _reach(counter, top, lanes, repeats, total, s1blk, s1rep, s_epb), V.SRC1, loc)
    every = counter or V.all_lanes(lo, hi, lanes)
    deq = st[S.DEQSCALE]
    out = np.empty(lanes, np.int64)
    for r in range(repeats):
        n = total - r * lanes if counter and r == repeats - 1 else lanes
        for e in range(n):                       # read the whole repeat first: dst may alias a source
            if every or V.lane_on(lo, hi, e):
                a = load_raw(lm, s0 + V.element(r, e, s0blk, s0rep, s_epb) * s_es, s_es, signed)
                b = load_raw(lm, s1 + V.element(r, e, s1blk, s1rep, s_epb) * s_es, s_es, signed)
                d = np.int64(0)
                if READS_DST[code]:
                    d = load_raw(lm, dst + V.element(r, e, dblk, drep, d_epb) * d_es, d_es, False)
                out[e] = lane(code, a, b, d, deq)
        for e in range(n):
            if every or V.lane_on(lo, hi, e):
                store_raw(lm, dst + V.element(r, e, dblk, drep, d_epb) * d_es, d_es, out[e])


@njit(cache=True, inline="always")
def _reach(counter, top, lanes, repeats, total, blk, rep, epb):
    """One past the farthest element an operand is touched at (a block stride of 0 folds every block)."""
    if blk != 0:
        return V.reach(counter, top, lanes, repeats, total, blk, rep, epb)
    if repeats <= 0 or top <= 0:
        return 0
    return (repeats - 1) * rep * epb + min(top, epb)


# --------------------------------------------------------------------------- dequantisation (cast_deq)


@njit(cache=True)
def deq_config(st, lm, vec, e, loc):
    """The 64-bit configuration lane ``e`` uses: the register itself, or entry ``e % 16`` of the vdeq table."""
    reg = st[S.DEQSCALE]
    if not vec:
        return reg
    base = st[S.SEG_BASE + V.UB]
    off = (reg & 0x3FFF) << 5
    size = st[S.SEG_SIZE + V.UB]
    if off + 128 > size:
        raise Fault(F_VDEQ_RANGE, loc, off, size, 0)
    return load_raw(lm, base + off + 8 * (e % 16), 8, False)


@njit(cache=True)
def deq_b8(x, cfg):
    """int16 ``x`` dequantised by configuration ``cfg`` (scale bits 0-31, offset 37-45, sign mode 46)."""
    bits = np.int64(cfg & 0xFFFFE000)                 # the (1, 8, 10) scale: low 13 mantissa bits dropped
    offset = (cfg >> 37) & 0x1FF
    if offset >= 256:
        offset -= 512
    signed = ((cfg >> 46) & 1) != 0
    lo, hi = (_I8_LO, _I8_HI) if signed else (_U8_LO, _U8_HI)
    v = np.float64(x) * np.float64(_f32(bits)) + np.float64(offset)   # exact: 16 x 11 significant bits
    if v != v:
        return np.int64(0)
    if v >= hi:
        return hi
    if v <= lo:
        return lo
    return np.int64(np.rint(v))


@njit(cache=True, inline="always")
def _deq_dst(r, e, blk, rep, half):
    """Byte of dst that source lane ``e`` of repeat ``r`` lands in: half of the lane's DataBlock."""
    return (r * rep + (e // 16) * blk) * 32 + half * 16 + e % 16


@instruction
def cast_deq(st, lm, dst, dst_len, src, src_len, vec, half, count, loc):
    """Count form: the first ``count`` int16 elements; dst keeps the source's block layout (see above)."""
    V.check_count(count, loc)
    need = 0 if count == 0 else _deq_dst(0, count - 1, 1, 8, half) + 1
    V.check_operand(st, dst, dst_len, need, V.DST, loc)
    V.check_operand(st, src, src_len, count, V.SRC, loc)
    for i in range(count):
        x = load_raw(lm, src + 2 * i, 2, True)
        lm[dst + _deq_dst(0, i, 1, 8, half)] = np.uint8(deq_b8(x, deq_config(st, lm, vec, i, loc)) & 0xFF)
    V.count_form_done(st)


@instruction
def cast_deq_l0(st, lm, dst, dst_len, src, src_len, vec, half, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                repeat, dblk, sblk, drep, srep, loc):
    """Level-0 form (UnaryRepeatParams strides): 128 int16 lanes a repeat, 8-bit results in half blocks."""
    counter, lo, hi, repeats, total = V.resolve(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, 2, loc)
    V.check_field(dblk, V.U16_MAX, V.DST_BLK, loc)
    V.check_field(sblk, V.U16_MAX, V.SRC_BLK, loc)
    V.check_field(drep, V.U8_MAX, V.DST_REP, loc)
    V.check_field(srep, V.U8_MAX, V.SRC_REP, loc)
    top = V.lanes_used(counter, lo, hi, 128, total)
    V.check_dst_blk_stride(dblk, top, 16, loc)
    V.check_operand(st, src, src_len, _reach(counter, top, 128, repeats, total, sblk, srep, 16), V.SRC, loc)
    # dst in bytes: the source's blocks with 32 one-byte elements each (only half of each is written)
    far = _reach(counter, top, 128, repeats, total, dblk, drep, 16)
    need = 0 if far == 0 else ((far - 1) // 16) * 32 + half * 16 + (far - 1) % 16 + 1
    V.check_operand(st, dst, dst_len, need, V.DST, loc)
    every = counter or V.all_lanes(lo, hi, 128)
    out = np.empty(128, np.uint8)
    for r in range(repeats):
        n = total - r * 128 if counter and r == repeats - 1 else 128
        for e in range(n):
            if every or V.lane_on(lo, hi, e):
                x = load_raw(lm, src + 2 * V.element(r, e, sblk, srep, 16), 2, True)
                out[e] = np.uint8(deq_b8(x, deq_config(st, lm, vec, e, loc)) & 0xFF)
        for e in range(n):
            if every or V.lane_on(lo, hi, e):
                lm[dst + _deq_dst(r, e, dblk, drep, half)] = out[e]


# --------------------------------------------------------------------------- the DEQSCALE register


@instruction
def set_deq_scale(st, scale):
    """``set_deq_scale(scale)``: the float16 scale of ``add_deq_relu`` (bits 0-15), rounded to nearest even."""
    st[S.DEQSCALE] = np.int64(H.f32_to_f16(np.float32(scale)))


@instruction
def set_deq_scale_cfg(st, scale, offset, sign_mode):
    """``set_deq_scale(scale, offset, sign_mode)``: ``cast_deq``'s configuration."""
    st[S.DEQSCALE] = make_config(scale, offset, sign_mode)


@njit(cache=True)
def make_config(scale, offset, sign_mode):
    """The 64-bit DEQSCALE configuration: float32 scale bits, 9-bit offset at bit 37, sign mode at bit 46."""
    return (np.int64(sign_mode != 0) << 46) | ((np.int64(offset) & 0x1FF) << 37) | _f32_bits(scale)


@instruction
def set_vdeq(st, lm, vdeq, vdeq_len, scales, offsets, signs, loc):
    """``set_deq_scale(vdeq, vdeq_info)``: 16 configurations into ``vdeq`` (uint64), its address into DEQSCALE."""
    off = vdeq - st[S.SEG_BASE + V.UB]
    if off % 32 != 0:
        raise Fault(F_VDEQ_ALIGN, loc, off, 0, 0)
    if vdeq_len < 16:
        raise Fault(F_VDEQ_SHORT, loc, vdeq_len, 0, 0)
    for i in range(16):
        store_raw(lm, vdeq + 8 * i, 8, make_config(scales[i], offsets[i], signs[i]))
    st[S.DEQSCALE] = off >> 5
