"""Bilinear interpolation: ``bilinear_interpolation`` (Ascend C BilinearInterpolation, A2/A3, float16).

What the instruction computes (the BilinearInterpolation page; on Atlas A2/A3
the library builds it from ``gatherb``, ``brcb``, ``mul``, ``add`` and
``adds`` in ``shared_tmp_buffer``, and npuemu follows those steps, so the
numerics and the scratch contents are the library's).  With ``R = h_repeat *
v_repeat`` horizontal iterations in all, ``r = i * h_repeat + q`` the
``q``-th horizontal iteration of vertical iteration ``i``, and lane ``e``
(0..127) in DataBlock ``j = e // 16`` at element ``k = e % 16``:

1. gather: ``G[r][j]`` is the 32-byte block at byte ``src0_offset[8r + j]``
   of ``src0`` (a byte offset from ``src0``'s start, a multiple of 32);
   the blocks go to the first ``R * 256`` bytes of the scratch.
2. broadcast: each of the first ``(len(src1) // 8) * 8`` elements of
   ``src1`` fills one 32-byte block of the scratch after the gathered ones.
3. products, every lane (the mask does not apply here):
   ``P[r][e] = f16(w * G[r][j][k])`` with ``w = src1[r]``
   (``repeat_mode=False``) or ``src1[8r + j]`` (``True``).
4. sums, lanes of the mask: ``S = P[i*h][e]``, then for ``q = 1 .. h-1``
   ``S = f16(P[i*h + q][e] + S)`` (rounded after every addition, in order).
5. write, lanes of the mask: ``dst[(i * rep + j * dst_blk_stride) * 16 + k]
   = f16(S + 0)`` with ``rep = v_r_offset * 2 // 32`` blocks.  The ``+ 0``
   is the library's ``adds`` copy, so a sum of -0 is written as +0.
   Lanes outside the mask keep ``dst``.

float16 arithmetic is done in float32 and rounded to nearest even: a product
of two halves is exact in float32, and a sum rounded twice (float32, then
float16) equals the correctly rounded one since 24 >= 2 * 11 + 2.

Afterwards the mask register is in normal mode and holds ``mask`` (the
library's last two steps set it).

Checks: operands 32-byte aligned in UB; ``h_repeat``, ``v_repeat`` 0..255 and
their product at most 255 (the library holds it in a uint8; *assumed* an
error rather than a silent wrap), ``h_repeat >= 1`` when ``v_repeat >= 1``
(with none the library would copy out scratch nobody wrote); ``v_r_offset``
0..65535 with ``v_r_offset * 2 // 32`` at most 255 (the repeat stride of the
final ``adds`` is a uint8; a ``v_r_offset`` that is not a multiple of 16 is cut
down to whole blocks, as the library does); ``dst_blk_stride`` 0..65535, 0
only while the mask stays within one DataBlock; ``src0_offset`` holds ``8R``
offsets, each a multiple of 32 selecting a block inside ``src0``; the
broadcast part of ``src1`` covers every weight read; ``shared_tmp_buffer``
holds ``R * 256 + (len(src1) // 8) * 256`` bytes; ``dst`` holds every
element written.
"""
from __future__ import annotations

import numpy as np

from .. import errors
from ..numerics import half as H
from . import state as S
from . import vmask as V
from .fault import Fault, register
from .linkage import instruction

F_REPEATS = 1800
F_NO_H_REPEAT = 1801
F_V_R_OFFSET = 1802
F_OFFSETS_SHORT = 1803
F_WEIGHTS_SHORT = 1804
F_TMP_SHORT = 1805
F_OFFSET_ALIGN = 1806
F_OFFSET_OOB = 1807
F_ALIGN = 1808
F_DST_BLK = 1809

_NAMES = ("src0_offset", "shared_tmp_buffer")

register({
    F_REPEATS: (errors.ParamRangeError,
                lambda a, b, c, env: f"bilinear_interpolation: h_repeat {a} and v_repeat {b} must each be 0..255 "
                                     f"and their product at most 255 (the library counts the iterations in a "
                                     f"uint8)"),
    F_NO_H_REPEAT: (errors.ParamRangeError,
                    lambda a, b, c, env: f"bilinear_interpolation: v_repeat is {a} but h_repeat is 0; every "
                                         f"vertical iteration needs at least one horizontal iteration"),
    F_V_R_OFFSET: (errors.ParamRangeError,
                   lambda a, b, c, env: f"bilinear_interpolation: v_r_offset {a} elements is outside 0..65535 or "
                                        f"more than 255 blocks ({b}) between vertical iterations"),
    F_OFFSETS_SHORT: (errors.BoundsError,
                      lambda a, b, c, env: f"bilinear_interpolation: src0_offset holds {b} offsets; "
                                           f"h_repeat * v_repeat = {c} iterations read 8 each ({a})"),
    F_WEIGHTS_SHORT: (errors.BoundsError,
                      lambda a, b, c, env: f"bilinear_interpolation: the iterations read src1 weights up to index "
                                           f"{a - 1}, but src1 holds {b} elements of which only the first {c} "
                                           f"(a multiple of 8) are broadcast"),
    F_TMP_SHORT: (errors.BoundsError,
                  lambda a, b, c, env: f"bilinear_interpolation: shared_tmp_buffer holds {b} bytes; it needs {a} "
                                       f"(h_repeat * v_repeat * 256 + (src1 length // 8) * 256)"),
    F_OFFSET_ALIGN: (errors.AlignmentError,
                     lambda a, b, c, env: f"bilinear_interpolation: src0_offset[{a}] = {b} is not a multiple of "
                                          f"32 (each offset selects a DataBlock of src0, in bytes)"),
    F_OFFSET_OOB: (errors.BoundsError,
                   lambda a, b, c, env: f"bilinear_interpolation: src0_offset[{a}] = {b} selects a block past the "
                                        f"end of src0 ({c} bytes)"),
    F_ALIGN: (errors.AlignmentError,
              lambda a, b, c, env: f"bilinear_interpolation: {_NAMES[b]} starts at UB byte {a}, which is not "
                                   f"32-byte aligned"),
    F_DST_BLK: (errors.ParamRangeError,
                lambda a, b, c, env: f"bilinear_interpolation: dst_blk_stride {a} is outside 0..65535"),
})


@instruction
def bilinear(st, lm, dst, dst_len, s0, s0_len, off, off_len, s1, s1_len, tmp, tmp_len, mask_is_bits, mask_lo,
             mask_hi, h, mode, dblk, vro, v, loc):
    """``bilinear_interpolation``: float16 operands, uint32 offsets, uint8 scratch (steps in the module doc)."""
    ub = st[S.SEG_BASE + V.UB]
    if h < 0 or h > 255 or v < 0 or v > 255 or h * v > 255:
        raise Fault(F_REPEATS, loc, h, v, 0)
    if v > 0 and h == 0:
        raise Fault(F_NO_H_REPEAT, loc, v, 0, 0)
    if vro < 0 or vro > 65535 or vro * 2 // 32 > 255:
        raise Fault(F_V_R_OFFSET, loc, vro, vro * 2 // 32, 0)
    if dblk < 0 or dblk > 65535:
        raise Fault(F_DST_BLK, loc, dblk, 0, 0)
    lo, hi = V.explicit_mask(mask_is_bits, mask_lo, mask_hi, 128, loc)
    rep = vro * 2 // 32
    nrep = h * v
    top = V.lanes_used(False, lo, hi, 128, 0)
    V.check_dst_blk_stride(dblk, top, 16, loc)
    far = 0 if v == 0 or top == 0 else V.reach(False, top, 128, v, 0, dblk, rep, 16)
    V.check_operand(st, dst, dst_len, far, V.DST, loc)
    V.check_operand(st, s0, s0_len, 0, V.SRC0, loc)
    V.check_operand(st, s1, s1_len, 0, V.SRC1, loc)
    if (off - ub) % 32 != 0:
        raise Fault(F_ALIGN, loc, off - ub, 0, 0)
    if (tmp - ub) % 32 != 0:
        raise Fault(F_ALIGN, loc, tmp - ub, 1, 0)
    if 8 * nrep > off_len:
        raise Fault(F_OFFSETS_SHORT, loc, 8 * nrep, off_len, nrep)
    weights = s1_len // 8 * 8
    need_w = 0 if nrep == 0 else (nrep if mode == 0 else 8 * nrep)
    if need_w > weights:
        raise Fault(F_WEIGHTS_SHORT, loc, need_w, s1_len, weights)
    need_tmp = nrep * 256 + weights * 32
    if need_tmp > tmp_len:
        raise Fault(F_TMP_SHORT, loc, need_tmp, tmp_len, 0)
    u32 = lm.view(np.uint32)
    for i in range(8 * nrep):
        o = np.int64(u32[(off >> 2) + i])
        if o % 32 != 0:
            raise Fault(F_OFFSET_ALIGN, loc, i, o, 0)
        if o + 32 > s0_len * 2:
            raise Fault(F_OFFSET_OOB, loc, i, o, s0_len * 2)
    if nrep == 0:
        return
    u16 = lm.view(np.uint16)
    g = tmp >> 1                       # the gathered blocks, then the products, in half-word units
    b = g + nrep * 128                 # the broadcast weights
    # 1. gather
    for i in range(8 * nrep):
        src = (s0 + np.int64(u32[(off >> 2) + i])) >> 1
        for k in range(16):
            u16[g + 16 * i + k] = u16[src + k]
    # 2. broadcast
    for i in range(weights):
        w = u16[(s1 >> 1) + i]
        for k in range(16):
            u16[b + 16 * i + k] = w
    # 3. products, every lane
    for r in range(nrep):
        for e in range(128):
            blk = r if mode == 0 else 8 * r + e // 16
            p = H.f16_to_f32(u16[b + 16 * blk + e % 16]) * H.f16_to_f32(u16[g + 128 * r + e])
            u16[g + 128 * r + e] = H.f32_to_f16(p)
    # 4. sums into each vertical iteration's first product, 5. the masked copy to dst
    for i in range(v):
        acc = g + 128 * i * h
        for q in range(1, h):
            for e in range(128):
                if V.lane_on(lo, hi, e):
                    s = H.f16_to_f32(u16[acc + 128 * q + e]) + H.f16_to_f32(u16[acc + e])
                    u16[acc + e] = H.f32_to_f16(s)
        for e in range(128):
            if V.lane_on(lo, hi, e):
                x = H.f16_to_f32(u16[acc + e]) + np.float32(0.0)
                u16[(dst >> 1) + (i * rep + (e // 16) * dblk) * 16 + e % 16] = H.f32_to_f16(x)
    st[S.MASK_MODE] = 0
    st[S.MASK_LO] = np.int64(lo)
    st[S.MASK_HI] = np.int64(hi)
