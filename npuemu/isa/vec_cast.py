"""Type conversion between UB tensors (``Cast``).

Two instructions serve every supported (source, destination) pair:
:func:`cast` (the count form: the first ``count`` elements) and
:func:`cast_l0` (the level-0 form: mask, repeats and ``UnaryRepeatParams``
strides).  The pair arrives as a code (:data:`PAIRS`), the rounding mode as an
``asc.RoundMode`` value; the frontend has already rejected the pairs and modes
the hardware lacks.  Keeping the pair a runtime argument means Numba compiles
the conversion machinery once instead of once per pair.

Elements are read as their raw storage -- float32 as uint32 bits, float16 and
bfloat16 as uint16 bits, integers sign- or zero-extended -- and converted by
:func:`convert` with the arithmetic of :mod:`npuemu.numerics.rounding`;
round-to-nearest-even narrowing to float16 and bfloat16 takes the faster
:mod:`npuemu.numerics.half` path, which gives the same bits.

Hardware rules (Ascend C ``Cast``, Atlas A2):

* A repeat covers 256 bytes of the *wider* operand: 64 lanes when either type
  is 32-bit, 128 when both are 16-bit, 32 for 64-bit types.  The narrower
  operand's lane ``e`` lives in its own 32-byte blocks of ``32 // sizeof``
  elements, so a contiguous float16 -> float32 cast uses ``src_rep_stride`` 4
  and ``dst_rep_stride`` 8.  The mask is read for the wider type.
* The count form runs in counter mode and afterwards leaves the mask register
  in normal mode with every lane enabled, as the library code does.
* Operands must be 32-byte aligned in UB; what an instruction touches must lie
  inside the operand's tensor.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from ..numerics import half as H
from ..numerics import rounding as R
from . import vmask as V
from .common import load_raw, store_raw

# Constants handed to other compiled functions are int64/bool_ scalars, not Python literals:
# Numba compiles a callee once per distinct literal argument.
_I8_LO, _I8_HI = np.int64(-(1 << 7)), np.int64((1 << 7) - 1)
_U8_LO, _U8_HI = np.int64(0), np.int64((1 << 8) - 1)
_I16_LO, _I16_HI = np.int64(-(1 << 15)), np.int64((1 << 15) - 1)
_I32_LO, _I32_HI = np.int64(-(1 << 31)), np.int64((1 << 31) - 1)
_I64_LO, _I64_HI = np.int64(-(1 << 63)), np.int64((1 << 63) - 1)
_NO_SAT = np.bool_(False)       # vector Cast runs in the cores' default Inf/NaN mode

# pair codes
(F16_F32, BF16_F32, I8_F16, U8_F16, I16_F16, I16_F32, F16_I8, F16_U8, F16_I16, F16_I32, BF16_I32,
 F32_F16, F32_BF16, F32_F32, F32_I16, F32_I32, F32_I64, I32_F32, I32_I16, I32_I64, I64_F32, I64_I32) = range(22)

# (source, destination) isa dtype suffixes -> pair code
PAIRS = {
    ("f16", "f32"): F16_F32, ("bf16", "f32"): BF16_F32, ("i8", "f16"): I8_F16, ("u8", "f16"): U8_F16,
    ("i16", "f16"): I16_F16, ("i16", "f32"): I16_F32, ("f16", "i8"): F16_I8, ("f16", "u8"): F16_U8,
    ("f16", "i16"): F16_I16, ("f16", "i32"): F16_I32, ("bf16", "i32"): BF16_I32, ("f32", "f16"): F32_F16,
    ("f32", "bf16"): F32_BF16, ("f32", "f32"): F32_F32, ("f32", "i16"): F32_I16, ("f32", "i32"): F32_I32,
    ("f32", "i64"): F32_I64, ("i32", "f32"): I32_F32, ("i32", "i16"): I32_I16, ("i32", "i64"): I32_I64,
    ("i64", "f32"): I64_F32, ("i64", "i32"): I64_I32,
}

_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "i8": 1, "u8": 1, "i16": 2, "i32": 4, "i64": 8}
_SIGNED = {"i8", "i16", "i32", "i64"}
# per pair code: source size, destination size, source is a signed integer
SRC_SIZE = np.array([_SIZE[s] for s, _ in PAIRS], np.int64)
DST_SIZE = np.array([_SIZE[d] for _, d in PAIRS], np.int64)
SRC_SIGNED = np.array([s in _SIGNED for s, _ in PAIRS], np.bool_)
assert list(PAIRS.values()) == list(range(len(PAIRS)))


# --------------------------------------------------------------------------- one element


@instruction
def convert(code, x, mode):
    """Conversion ``code`` of one element: ``x`` is its storage (int64), the result the destination's.

    Float sources arrive as their bits; integer sources as their value.  The
    result is the destination's bits (floats) or value (integers) as int64.
    """
    if code == F32_F16:
        if mode == R.RINT or mode == R.NONE:
            return np.int64(H.f32_to_f16(np.uint32(x).view(np.float32)))
        return np.int64(R.f32_to_f16(x, mode, _NO_SAT))
    if code == F32_BF16:
        if mode == R.RINT:
            return np.int64(H.f32_to_bf16(np.uint32(x).view(np.float32)))
        return np.int64(R.f32_to_bf16(x, mode, _NO_SAT))
    if code == F16_F32:
        return np.int64(np.float32(H.f16_to_f32(np.uint16(x))).view(np.uint32))
    if code == BF16_F32:
        return x << 16
    if code == F32_F32:
        return np.int64(R.round_integral(x, mode, R.F32_M, R.F32_E))
    if code == F32_I32:
        return R.float_to_int(x, mode, R.F32_M, R.F32_E, _I32_LO, _I32_HI)
    if code == F32_I16:
        return R.float_to_int(x, mode, R.F32_M, R.F32_E, _I16_LO, _I16_HI)
    if code == F32_I64:
        return R.float_to_int(x, mode, R.F32_M, R.F32_E, _I64_LO, _I64_HI)
    if code == F16_I32:
        return R.float_to_int(x, mode, R.F16_M, R.F16_E, _I32_LO, _I32_HI)
    if code == F16_I16:
        return R.float_to_int(x, mode, R.F16_M, R.F16_E, _I16_LO, _I16_HI)
    if code == F16_I8:
        return R.float_to_int(x, mode, R.F16_M, R.F16_E, _I8_LO, _I8_HI)
    if code == F16_U8:
        return R.float_to_int(x, mode, R.F16_M, R.F16_E, _U8_LO, _U8_HI)
    if code == BF16_I32:
        return R.float_to_int(x, mode, R.BF16_M, R.BF16_E, _I32_LO, _I32_HI)
    if code == I32_F32 or code == I64_F32:
        return np.int64(R.int_to_float(x, mode, R.F32_M, R.F32_E))
    if code == I16_F32:
        return np.int64(np.float32(x).view(np.uint32))      # exact: |x| < 2**24
    if code == I8_F16 or code == U8_F16 or code == I16_F16:
        return np.int64(R.int_to_float(x, mode, R.F16_M, R.F16_E))
    if code == I32_I16:
        return R.saturate(x, _I16_LO, _I16_HI)
    if code == I64_I32:
        return R.saturate(x, _I32_LO, _I32_HI)
    return x                                                   # I32_I64: widening is exact


# --------------------------------------------------------------------------- the instructions


@instruction
def cast(st, lm, dst, dst_len, src, src_len, code, mode, count, loc):
    """Count form: the first ``count`` elements of ``src`` converted into ``dst``."""
    s_es, d_es, signed = SRC_SIZE[code], DST_SIZE[code], SRC_SIGNED[code]
    V.check_count(count, loc)
    V.check_operand(st, dst, dst_len, count, V.DST, loc)
    V.check_operand(st, src, src_len, count, V.SRC, loc)
    if not _fast_cast(lm, dst, src, code, mode, count):
        for i in range(count):
            store_raw(lm, dst + i * d_es, d_es, convert(code, load_raw(lm, src + i * s_es, s_es, signed), mode))
    V.count_form_done(st)


@njit(cache=True)
def _fast_cast(lm, dst, src, code, mode, count):
    """Typed loops for the conversions kernels use most (LLVM vectorises them); False if none applies.

    Each uses the same conversion :func:`convert` uses for that pair, so the bits are identical.
    """
    if code == F16_F32:
        s16 = lm[src:src + 2 * count].view(np.uint16)
        d32 = lm[dst:dst + 4 * count].view(np.float32)
        for i in range(count):
            d32[i] = H.f16_to_f32(s16[i])
        return True
    if code == BF16_F32:
        s16 = lm[src:src + 2 * count].view(np.uint16)
        d32 = lm[dst:dst + 4 * count].view(np.uint32)
        for i in range(count):
            d32[i] = np.uint32(s16[i]) << np.uint32(16)
        return True
    if code == F32_F16 and (mode == R.RINT or mode == R.NONE):
        s32 = lm[src:src + 4 * count].view(np.float32)
        d16 = lm[dst:dst + 2 * count].view(np.uint16)
        for i in range(count):
            d16[i] = H.f32_to_f16(s32[i])
        return True
    if code == F32_BF16 and mode == R.RINT:
        s32 = lm[src:src + 4 * count].view(np.float32)
        d16 = lm[dst:dst + 2 * count].view(np.uint16)
        for i in range(count):
            d16[i] = H.f32_to_bf16(s32[i])
        return True
    return False


@njit(cache=True, inline="always")
def operand_reach(counter, top, lanes, repeats, total, blk, rep, epb):
    """One past the farthest element a level-0 operand is touched at (any block stride).

    ``vmask.reach`` takes the highest lane as the farthest, which holds for
    block strides of 1 or more; with a block stride of 0 every lane folds into
    the first block of its repeat.
    """
    if blk != 0:
        return V.reach(counter, top, lanes, repeats, total, blk, rep, epb)
    if repeats <= 0 or top <= 0:
        return 0
    if not counter:
        return (repeats - 1) * rep * epb + min(top, epb)
    far = (repeats - 1) * rep * epb + min(total - (repeats - 1) * lanes, epb)    # the last, partial repeat
    if repeats > 1:
        far = max(far, (repeats - 2) * rep * epb + min(lanes, epb))
    return far


@instruction
def cast_l0(st, lm, dst, dst_len, src, src_len, code, mode, is_set_mask, mask_is_bits, mask_lo, mask_hi,
            repeat, dst_blk, src_blk, dst_rep, src_rep, loc):
    """Level-0 form: ``repeat`` repeats of the lanes the mask enables, with block/repeat strides."""
    s_es, d_es, signed = SRC_SIZE[code], DST_SIZE[code], SRC_SIGNED[code]
    wide = max(s_es, d_es)          # lanes and mask follow the wider type
    lanes = 256 // wide
    s_epb, d_epb = 32 // s_es, 32 // d_es
    counter, lo, hi, repeats, total = V.resolve(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, wide, loc)
    V.check_field(dst_blk, V.U16_MAX, V.DST_BLK, loc)
    V.check_field(src_blk, V.U16_MAX, V.SRC_BLK, loc)
    V.check_field(dst_rep, V.U8_MAX, V.DST_REP, loc)
    V.check_field(src_rep, V.U8_MAX, V.SRC_REP, loc)
    top = V.lanes_used(counter, lo, hi, lanes, total)
    V.check_dst_blk_stride(dst_blk, top, d_epb, loc)
    V.check_operand(st, dst, dst_len, operand_reach(counter, top, lanes, repeats, total, dst_blk, dst_rep, d_epb),
                    V.DST, loc)
    V.check_operand(st, src, src_len, operand_reach(counter, top, lanes, repeats, total, src_blk, src_rep, s_epb),
                    V.SRC, loc)
    every = counter or V.all_lanes(lo, hi, lanes)
    for r in range(repeats):
        n = lanes
        if counter and r == repeats - 1:
            n = total - r * lanes
        for e in range(n):
            if every or V.lane_on(lo, hi, e):
                x = load_raw(lm, src + V.element(r, e, src_blk, src_rep, s_epb) * s_es, s_es, signed)
                store_raw(lm, dst + V.element(r, e, dst_blk, dst_rep, d_epb) * d_es, d_es, convert(code, x, mode))
