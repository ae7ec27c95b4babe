"""Load3Dv2 (img2col): an L1 feature map -> a block of its image-to-column matrix in L0A (MTE1).

Layouts (Ascend C ``LoadData`` Load3Dv2, Atlas A2/A3):

* the feature map in L1 is C1HWC0: channel ``c`` of pixel (h, w) is element
  ``((c // C0 * l1_h + h) * l1_w + w) * C0 + c % C0``, C0 = 32 bytes of
  elements (16 half, 8 float, 32 int8);
* the image-to-column matrix has one row per output position ``m = oh * Wo +
  ow`` (``Wo = (l1_w + pad_left + pad_right - dil_w * (filter_w - 1) - 1) //
  stride_w + 1``) and one column per (c1, kh, kw, c0): column ``k = ((c1 *
  filter_h + kh) * filter_w + kw) * C0 + c0`` (assumed: the order of the
  FRACTAL_Z weights it is multiplied with);
* element (m, k) is the feature map at ``ih = oh * stride_h - pad_top + kh *
  dil_h``, ``iw = ow * stride_w - pad_left + kw * dil_w``, or the padding value
  where that lies outside it;
* the ``m_extension`` x ``k_extension`` block from (``m_start_pt``,
  ``k_start_pt``) lands in L0A as ZZ fractals (16 rows x C0, row-major
  fractals, row-major inside).

Registers: the padding value (``set_load_data_padding_value``; a Load3Dv2
call sets it from its own ``pad_value`` first, as Ascend C's default
``IsResetLoad3dConfig`` does), the L1 boundary (``set_load_data_boundary``,
bytes; reads at or past it wrap to the start of L1, assumed modulo the
boundary) and the repeat (``set_load_data_repeat``).  Assumed where the
documentation is silent: ``channel_size``, ``k_start_pt`` and
``k_extension`` are multiples of C0 and ``m_extension`` of 16 (whole fractals);
repeat ``r`` moves the window by ``r * repeat_stride`` x 16 rows (mode 0) or x
C0 columns (mode 1) and writes its block right after the previous one;
``repeat_time`` 0 moves nothing.

Fault codes 2100-2109.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from ..language.enums import Hardware
from ..numerics.half import f32_to_bf16, f32_to_f16
from . import cube_common as cc
from . import state as S
from .common import memmove
from .fault import Fault, register
from .linkage import instruction

F_WHOLE = 2100
F_BOUNDARY_START = 2101
F_NO_OUTPUT = 2102

_WHOLE_WHAT = ("channel_size", "k_start_pt", "k_extension", "m_extension")

register({
    F_WHOLE: (errors.ParamRangeError,
              lambda a, b, c, env: f"Load3Dv2 {_WHOLE_WHAT[c]} = {a} must be a multiple of {b} (npuemu moves whole "
                                   f"fractals and C0 channel blocks of 32 bytes)"),
    F_BOUNDARY_START: (errors.ParamRangeError,
                       lambda a, b, c, env: f"the Load3Dv2 source starts at byte {a} of L1, outside the boundary of "
                                            f"{b} bytes set by set_load_data_boundary (the start must lie inside it)"),
    F_NO_OUTPUT: (errors.ParamRangeError,
                  lambda a, b, c, env: f"the Load3Dv2 window does not fit the padded feature map: the output is "
                                       f"{a} x {b} positions"),
})

# element kinds of the padding conversion
K_INT = 0
K_F16 = 1
K_BF16 = 2
K_F32 = 3


@instruction
def set_padding(st, value, is_float, loc):
    """``set_load_data_padding_value(value)``: ``value`` is an int, or float32 bits when ``is_float``."""
    st[S.LOAD3D_PAD] = value
    st[S.LOAD3D_PAD_KIND] = 2 if is_float else 1


@instruction
def set_boundary(st, boundary, loc):
    """``set_load_data_boundary(boundary)``: 0 or [1024, 2**32 - 1] bytes (documented minimum), 32-byte units."""
    if boundary != 0:
        cc.check_param(boundary, 1024, 0xFFFFFFFF, 52, loc)
    st[S.LOAD3D_BOUNDARY] = boundary


@instruction
def set_repeat(st, time, stride, mode, loc):
    """``set_load_data_repeat(LoadDataRepeatParam(repeat_time, repeat_stride, repeat_mode))``."""
    cc.check_param(time, 0, 255, 49, loc)
    cc.check_param(stride, 0, 0xFFFF, 50, loc)
    cc.check_param(mode, 0, 1, 51, loc)
    st[S.LOAD3D_REPEAT] = time | (stride << 8) | (mode << 24) | (1 << 32)


@njit(cache=True)
def _pad_pattern(st, kind, esize):
    """32 bytes holding C0 copies of the padding value converted to the element type."""
    v = st[S.LOAD3D_PAD]
    is_float = st[S.LOAD3D_PAD_KIND] == 2
    f = np.uint32(v & 0xFFFFFFFF).view(np.float32) if is_float else np.float32(v)
    if kind == K_F16:
        bits = np.int64(f32_to_f16(f))
    elif kind == K_BF16:
        bits = np.int64(f32_to_bf16(f))
    elif kind == K_F32:
        bits = np.int64(np.float32(f).view(np.uint32))
    else:
        bits = np.int64(f) if is_float else v
    out = np.empty(32, np.uint8)
    for i in range(32):
        out[i] = np.uint8((bits >> (8 * (i % esize))) & 0xFF)
    return out


@njit(cache=True)
def _check_whole(value, unit, which, loc):
    if value % unit != 0:
        raise Fault(F_WHOLE, loc, value, unit, which)


@instruction
def load3d_v2(st, lm, dst, dst_len, src, src_len, pad_l, pad_r, pad_t, pad_b, l1_h, l1_w, channel, k_ext, m_ext,
              k_start, m_start, stride_w, stride_h, filter_w, filter_h, dil_w, dil_h, kind, esize, loc):
    """``load_data(a2, a1, LoadData3DParamsV2(...))`` after the rule has loaded the padding register."""
    cc.check_aic(st, loc)
    for p in (pad_l, pad_r, pad_t, pad_b):
        cc.check_param(p, 0, 255, 53, loc)
    cc.check_param(l1_h, 1, 0xFFFF, 36, loc)
    cc.check_param(l1_w, 1, 0xFFFF, 37, loc)
    cc.check_param(channel, 1, 0xFFFF, 38, loc)
    cc.check_param(k_ext, 1, 0xFFFF, 39, loc)
    cc.check_param(m_ext, 1, 0xFFFF, 40, loc)
    cc.check_param(k_start, 0, 0xFFFF, 41, loc)
    cc.check_param(m_start, 0, 0xFFFF, 42, loc)
    cc.check_param(stride_w, 1, 63, 43, loc)
    cc.check_param(stride_h, 1, 63, 44, loc)
    cc.check_param(filter_w, 1, 511, 45, loc)
    cc.check_param(filter_h, 1, 511, 46, loc)
    cc.check_param(dil_w, 1, 255, 47, loc)
    cc.check_param(dil_h, 1, 255, 48, loc)
    c0 = 32 // esize
    _check_whole(channel, c0, 0, loc)
    _check_whole(k_start, c0, 1, loc)
    _check_whole(k_ext, c0, 2, loc)
    _check_whole(m_ext, 16, 3, loc)
    cc.check_align(st, dst, Hardware.L0A, cc.FRACTAL, cc.DST, loc)
    cc.check_align(st, src, Hardware.L1, cc.C0_BYTES, cc.SRC, loc)
    wo = (l1_w + pad_l + pad_r - dil_w * (filter_w - 1) - 1) // stride_w + 1
    ho = (l1_h + pad_t + pad_b - dil_h * (filter_h - 1) - 1) // stride_h + 1
    if wo < 1 or ho < 1:
        raise Fault(F_NO_OUTPUT, loc, max(ho, 0), max(wo, 0), 0)
    l1_base = st[S.SEG_BASE + Hardware.L1]
    boundary = st[S.LOAD3D_BOUNDARY]
    if boundary > 0 and src - l1_base >= boundary:
        raise Fault(F_BOUNDARY_START, loc, src - l1_base, boundary, 0)
    if boundary == 0:          # the feature map the parameters describe lies inside the source tensor
        cc.check_extent(channel * l1_h * l1_w * esize, src_len * esize, cc.SRC, loc)
    rep = st[S.LOAD3D_REPEAT]
    times = (rep & 0xFF) if rep != 0 else 1
    rstride = (rep >> 8) & 0xFFFF
    rmode = (rep >> 24) & 0xFF
    block = m_ext * k_ext * esize
    cc.check_extent(times * block, dst_len * esize, cc.DST, loc)
    pad = _pad_pattern(st, kind, esize)
    kb_n = k_ext // c0
    for r in range(times):
        m0 = m_start + (r * rstride * 16 if rmode == 0 else 0)
        k0 = k_start + (r * rstride * c0 if rmode == 1 else 0)
        _window(lm, dst + r * block, src, l1_base, boundary, pad, m0, k0, m_ext, kb_n, wo, l1_h, l1_w, pad_l, pad_t,
                stride_w, stride_h, filter_w, filter_h, dil_w, dil_h, c0)


@njit(cache=True)
def _window(lm, dst, src, l1_base, boundary, pad, m0, k0, m_ext, kb_n, wo, l1_h, l1_w, pad_l, pad_t, stride_w,
            stride_h, filter_w, filter_h, dil_w, dil_h, c0):
    """One block: 32 bytes (C0 channels of one pixel, or padding) per (row, column block)."""
    taps = filter_h * filter_w
    for mm in range(m_ext):
        m = m0 + mm
        oh = m // wo
        ow = m % wo
        row = dst + (mm // 16) * kb_n * cc.FRACTAL + (mm % 16) * cc.C0_BYTES
        for kb in range(kb_n):
            kblk = k0 // c0 + kb
            c1 = kblk // taps
            tap = kblk % taps
            ih = oh * stride_h - pad_t + (tap // filter_w) * dil_h
            iw = ow * stride_w - pad_l + (tap % filter_w) * dil_w
            at = row + kb * cc.FRACTAL
            if ih < 0 or ih >= l1_h or iw < 0 or iw >= l1_w:
                memmove(lm, at, pad, 0, 32)
                continue
            s = src + ((c1 * l1_h + ih) * l1_w + iw) * 32
            if boundary > 0 and s - l1_base >= boundary:
                s = l1_base + (s - l1_base) % boundary
            memmove(lm, at, lm, s, 32)
