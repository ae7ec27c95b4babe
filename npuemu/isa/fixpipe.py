"""``fixpipe``: L0C (CO1, NZ) -> GM or L1, with NZ -> ND, quantisation and ReLU on the fly (PIPE_FIX).

Geometry (``FixpipeParamsV220``, Ascend C ``Fixpipe``): the source is an NZ
matrix of ``m_size`` x ``n_size`` float32/int32 elements whose 16-wide
fractal columns start ``src_stride`` rows of 16 elements apart (``m_size``
rounded up to 16 for a dense tile); element (r, c) is at element
``(c // 16) * src_stride * 16 + r * 16 + c % 16``.

* ND output (``CFG_ROW_MAJOR``, GM only): row ``r`` of matrix ``i`` starts at
  element ``i * dst_nd_stride + r * dst_stride``; ``nd_num`` matrices
  ``src_nd_stride`` 16 x 16 fractals apart in L0C.
* NZ output (``CFG_NZ``; always for L1): fractal column ``j`` starts
  ``j * dst_stride`` 32-byte blocks from the destination, each row of 16
  elements follows the previous one; ``n_size`` must be a multiple of 16.

Conversions (``QuantModes``), then ``relu_en``:

=============  ===========  ==========  ============================================
quant_pre      L0C          output      value
=============  ===========  ==========  ============================================
NoQuant        float32      float32     unchanged (GM only)
NoQuant        int32        int32       unchanged (GM only)
F322F16        float32      float16     round to nearest even
F322BF16       float32      bfloat16    round to nearest even
DEQF16         int32        float16     float32(x) * scale, rounded to nearest even
VDEQF16        int32        float16     as DEQF16 with the scale of column c
QF322B8_PRE    float32      int8/uint8  x * scale + offset, rounded, saturated
VQF322B8_PRE   float32      int8/uint8  as QF322B8_PRE, per column
REQ8           int32        int8/uint8  float32(x) * scale + offset, rounded, saturated
VREQ8          int32        int8/uint8  as REQ8, per column
=============  ===========  ==========  ============================================

The scalar scale is ``deq_scalar``'s low 32 bits read as a float32 (the
documented ``SetFixpipePreQuantFlag`` encoding); the per-column scales are
uint64 words of the same encoding in the L1 ``cbuf_workspace`` tensor, one per
output column.  As documented, the hardware keeps only 10 mantissa bits of a
scale: the low 13 bits are cleared before use.

Assumptions (not stated by the documentation; see docs/cube.md): the 8-bit
offset is the 9-bit signed field at bits 37-45 of the quantisation word (the
``SetDeqScale`` layout), added after scaling; 8-bit results round to nearest
even and saturate to the output type; ReLU applies to the converted value
(before the offset for 8-bit outputs); int32 -> float32 conversion before
scaling rounds to nearest even.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .linkage import instruction
from .. import errors
from ..language.enums import Hardware, QuantModes, enum_name
from ..numerics.half import f32_to_bf16, f32_to_f16
from . import atomic
from . import cube_common as cc
from .datamove import check_gm, check_gm_size
from .fault import Fault, register
from .common import copy_items
from .mmad import dense_c, settle_l0c
from . import state as S

F_COMBO = 960
F_NZ_N = 961
F_DST_STRIDE = 962

# element kinds of the L0C source and of the output
K_F32 = 0
K_I32 = 1
K_F16 = 2
K_BF16 = 3
K_S8 = 4
K_U8 = 5
KIND_NAMES = ("float32", "int32", "float16", "bfloat16", "int8", "uint8")
KIND_SIZE = (4, 4, 2, 2, 1, 1)

ST_PRE_QUANT = S.FIX_PRE_QUANT    # the scalar quantisation register (set_fix_pipe_pre_quant_flag)

SRC_ALIGN = 64
SCALE_MASK = 0xFFFFE000     # the hardware keeps 10 mantissa bits of a scale

register({
    F_COMBO: (errors.ParamRangeError,
              lambda a, b, c, env: f"quant_pre {_mode_name(a)} cannot convert {KIND_NAMES[b >> 4]} in L0C to "
                                   f"{KIND_NAMES[b & 15]} ({('GM', 'L1')[c]} destination); see the QuantModes "
                                   f"table in docs/cube.md"),
    F_NZ_N: (errors.ParamRangeError,
             lambda a, b, c, env: f"n_size = {a}: an NZ destination needs a multiple of 16"),
    F_DST_STRIDE: (errors.ParamRangeError,
                   lambda a, b, c, env: "dst_stride must not be 0"),
})


def _mode_name(a: int) -> str:
    return enum_name(QuantModes, a, "{}")


NOQ = int(QuantModes.NoQuant)
F322F16 = int(QuantModes.F322F16)
F322BF16 = int(QuantModes.F322BF16)
DEQF16 = int(QuantModes.DEQF16)
VDEQF16 = int(QuantModes.VDEQF16)
QF322B8 = int(QuantModes.QF322B8_PRE)
VQF322B8 = int(QuantModes.VQF322B8_PRE)
REQ8 = int(QuantModes.REQ8)
VREQ8 = int(QuantModes.VREQ8)


@instruction
def set_pre_quant(st, config, loc):
    """``set_fix_pipe_pre_quant_flag(config)``: the scalar quantisation word."""
    st[ST_PRE_QUANT] = config


@njit(cache=True, inline="always")
def valid_combo(mode, src_kind, out_kind, to_l1):
    """Whether ``quant_pre`` converts ``src_kind`` to ``out_kind`` (the documented A2/A3 table)."""
    b8 = out_kind == K_S8 or out_kind == K_U8
    if src_kind == K_F32:
        if mode == NOQ:
            return out_kind == K_F32 and not to_l1
        if mode == F322F16:
            return out_kind == K_F16
        if mode == F322BF16:
            return out_kind == K_BF16
        return (mode == QF322B8 or mode == VQF322B8) and b8
    if mode == NOQ:
        return out_kind == K_I32 and not to_l1
    if mode == DEQF16 or mode == VDEQF16:
        return out_kind == K_F16
    return (mode == REQ8 or mode == VREQ8) and b8


@njit(cache=True, inline="always")
def _scale(word):
    return np.uint32(word & SCALE_MASK).view(np.float32)


@njit(cache=True, inline="always")
def _offset(word):
    o = (word >> 37) & 0x1FF
    return o - 512 if o >= 256 else o


@instruction
def fixpipe(st, lm, out, dst, dst_len, to_l1, rid, size, src, src_len, scales, scales_len, src_kind, out_kind,
            n_size, m_size, src_stride, dst_stride, mode, deq_scalar, nd_num, src_nd_stride, dst_nd_stride, relu,
            unit_flag, nz_out, akind, loc):
    """``fixpipe(dst, src[, cbuf_workspace], FixpipeParamsV220(...), config)``.

    ``out`` is the destination byte array (a GM region, or ``lm`` for L1) and
    ``dst`` the byte offset in it; ``dst_len``/``size`` the destination's
    length/set_global_buffer size in elements (-1: unbounded); ``scales`` the
    absolute lm address of the per-column scales (-1: none); ``akind`` the AtomicDtype of the output
    type (-1: none) for the core's atomic mode: then the rows are built in a staging buffer and combined
    into GM element by element (:mod:`npuemu.isa.atomic`).
    """
    cc.check_aic(st, loc)
    cc.check_param(n_size, 0, 4095, 24, loc)
    cc.check_param(m_size, 0, 65535, 25, loc)
    cc.check_param(src_stride, 0, 65535, 26, loc)
    cc.check_param(dst_stride, 0, 0xFFFFFFFF, 27, loc)
    cc.check_param(nd_num, 0, 65535, 28, loc)
    cc.check_param(src_nd_stride, 0, 65535, 29, loc)
    cc.check_param(dst_nd_stride, 0, 0xFFFFFFFF, 30, loc)
    cc.check_param(unit_flag, 0, 3, 23, loc)
    if not valid_combo(mode, src_kind, out_kind, to_l1):
        raise Fault(F_COMBO, loc, mode, (src_kind << 4) | out_kind, 1 if to_l1 else 0)
    cc.check_align(st, src, Hardware.L0C, SRC_ALIGN, cc.SRC, loc)
    if to_l1:
        cc.check_align(st, dst, Hardware.L1, 32, cc.DST, loc)
    if nz_out and n_size % 16 != 0:
        raise Fault(F_NZ_N, loc, n_size, 0, 0)
    if n_size == 0 or m_size == 0 or nd_num == 0:
        return
    if dst_stride == 0:
        raise Fault(F_DST_STRIDE, loc, 0, 0, 0)
    vector = mode == VDEQF16 or mode == VQF322B8 or mode == VREQ8
    if vector:
        if scales < 0:
            raise Fault(cc.F_EXTENT, loc, n_size * 8, 0, cc.SCALES)
        cc.check_align(st, scales, Hardware.L1, 32, cc.SCALES, loc)
        cc.check_extent(n_size * 8, scales_len * 8, cc.SCALES, loc)
    oes = KIND_SIZE[out_kind]
    n1 = (n_size + 15) // 16
    # source extent (elements): the last matrix's last column's last row
    src_end = (nd_num - 1) * src_nd_stride * 256 + (n1 - 1) * src_stride * 16 + (m_size - 1) * 16 + 16
    cc.check_extent(src_end * 4, src_len * 4, cc.SRC, loc)
    if nz_out:
        dst_end = ((nd_num - 1) * dst_nd_stride * oes + (n1 - 1) * dst_stride * 32 + m_size * 16 * oes)
    else:
        dst_end = ((nd_num - 1) * dst_nd_stride + (m_size - 1) * dst_stride + n_size) * oes
    if to_l1:
        cc.check_extent(dst_end, dst_len * oes, cc.DST, loc)
    else:
        check_gm_size(size, (dst_end + oes - 1) // oes, rid, dst, oes, loc)
        check_gm(out, rid, dst, dst_end, loc)
    staged = not to_l1 and atomic.active(st, akind, loc)
    gm, gm_at = out, dst
    if staged:
        out, dst = np.empty(dst_end, np.uint8), 0
    # the common case: float32 to float32/float16/bfloat16 ND rows, perhaps straight from the product
    rows = not nz_out and src_kind == K_F32 and (mode == NOQ or mode == F322F16 or mode == F322BF16)
    dense = dense_c(st, lm, src, src_stride, m_size, n_size, nd_num) if rows else np.empty((0, 0), np.float32)
    if dense.size == 0:
        settle_l0c(st, lm, loc)
    word = deq_scalar
    st[ST_PRE_QUANT] = word
    scale = _scale(word)
    offset = np.float32(_offset(word))
    col_scale = np.empty(n_size, np.float32)
    col_offset = np.empty(n_size, np.float32)
    for c in range(n_size):
        w = word
        if vector:
            a = scales + c * 8
            w = np.int64(lm[a:a + 8].view(np.int64)[0])
        col_scale[c] = _scale(w) if vector else scale
        col_offset[c] = np.float32(_offset(w)) if vector else offset
    srcf = lm[src:src + src_len * 4].view(np.float32)
    srci = lm[src:src + src_len * 4].view(np.int32)
    if rows:
        for i in range(nd_num):
            at = dst + i * dst_nd_stride * oes
            sbase = i * src_nd_stride * 256
            if out_kind == K_F32:
                _float_rows(out, at, dst_stride, srcf, dense, sbase, src_stride, m_size, n_size, relu,
                            np.float32, 4)
            elif out_kind == K_F16:
                _float_rows(out, at, dst_stride, srcf, dense, sbase, src_stride, m_size, n_size, relu,
                            np.uint16, 2)
            else:
                _float_rows(out, at, dst_stride, srcf, dense, sbase, src_stride, m_size, n_size, relu,
                            np.int16, 2)
        if staged:
            _combine(st, gm, gm_at, out, nz_out, n_size, m_size, dst_stride, nd_num, dst_nd_stride, oes)
        return
    vals = np.empty(n_size, np.float32)
    ivals = np.empty(n_size, np.int32)
    for i in range(nd_num):
        sbase = i * src_nd_stride * 256
        for r in range(m_size):
            # gather row r of matrix i: 16 consecutive elements from each fractal column
            for c1 in range(n1):
                e = sbase + c1 * src_stride * 16 + r * 16
                w = min(16, n_size - c1 * 16)
                if src_kind == K_F32:
                    _copy_run(vals, c1 * 16, srcf, e, w)
                else:
                    _copy_run(ivals, c1 * 16, srci, e, w)
            if nz_out:
                row_off = dst + i * dst_nd_stride * oes + r * 16 * oes
            else:
                row_off = dst + (i * dst_nd_stride + r * dst_stride) * oes
            _emit_row(out, row_off, nz_out, dst_stride, vals, ivals, n_size, src_kind, out_kind, mode, relu,
                      col_scale, col_offset)
    if staged:
        _combine(st, gm, gm_at, out, nz_out, n_size, m_size, dst_stride, nd_num, dst_nd_stride, oes)


@njit(cache=True)
def _combine(st, gm, at, staged, nz_out, n_size, m_size, dst_stride, nd_num, dst_nd_stride, oes):
    """Combine what the fixpipe wrote into ``staged`` (its bytes from 0) into ``gm`` from byte ``at``,
    element run by element run, under the atomic lock, so bytes it skips stay untouched."""
    atomic.lock(st)
    for i in range(nd_num):
        for r in range(m_size):
            if nz_out:
                row = i * dst_nd_stride * oes + r * 16 * oes
                for c1 in range((n_size + 15) // 16):
                    p = row + c1 * dst_stride * 32
                    atomic.combine(st, gm, at + p, staged, p, min(16, n_size - c1 * 16) * oes)
            else:
                p = (i * dst_nd_stride + r * dst_stride) * oes
                atomic.combine(st, gm, at + p, staged, p, n_size * oes)
    atomic.end(st)


@njit(cache=True, inline="always")
def _pos(nz_out, row_off, c, dst_stride, oes):
    """Byte position of column ``c`` of a row starting at ``row_off``."""
    if nz_out:
        return row_off + (c // 16) * dst_stride * 32 + (c % 16) * oes
    return row_off + c * oes


@njit(cache=True, inline="always")
def _copy_run(dst, at, src, frm, n):
    # through 1-D slices: an explicit loop, which LLVM vectorises (a slice assignment costs far more)
    d = dst[at:at + n]
    s = src[frm:frm + n]
    for j in range(n):
        d[j] = s[j]


@njit(cache=True)
def _float_rows(out, at, dst_stride, srcf, dense, sbase, src_stride, m_size, n_size, relu, out_type, es):
    """float32 rows to ND rows of ``out_type`` (float32, or float16 / bfloat16 bits read as uint16 / int16)
    ``dst_stride`` elements apart from byte ``at`` of ``out``, with ReLU: from ``dense`` (see
    :func:`npuemu.isa.mmad.dense_c`) unless it is empty, else from the NZ matrix at ``srcf[sbase:]``;
    ``es`` is the size of ``out_type``."""
    o = out[at:at + ((m_size - 1) * dst_stride + n_size) * es].view(out_type)
    if dense.size:
        for r in range(m_size):
            _row_out(o, r * dst_stride, dense, r * dense.shape[1], n_size, relu)
        return
    for r in range(m_size):
        for c1 in range((n_size + 15) // 16):
            _row_out(o, r * dst_stride + c1 * 16, srcf, sbase + c1 * src_stride * 16 + r * 16,
                     min(16, n_size - c1 * 16), relu)


def _row_out(o, at, src, frm, n, relu):
    """``n`` float32 values of ``src`` (flat, from ``frm``) to ``o`` from ``at``, with ReLU, as ``o``'s
    element type (see :func:`_out_bits`)."""
    raise NotImplementedError("_row_out is only callable from compiled code")


@overload(_row_out, inline="always")
def _row_out_impl(o, at, src, frm, n, relu):
    if o.dtype != src.dtype:
        return lambda o, at, src, frm, n, relu: _convert_run(o, at, src, frm, n, relu)

    def copy(o, at, src, frm, n, relu):
        if relu:
            _convert_run(o, at, src, frm, n, relu)
        else:
            copy_items(o, at, src, frm, n)
    return copy


@njit(cache=True, inline="always")
def _convert_run(o, at, src, frm, n, relu):
    # through 1-D slices and loops over range(): no negative-index checks, so LLVM vectorises
    d = o[at:at + n]
    s = src.reshape(-1)[frm:frm + n]
    for j in range(n):
        d[j] = _out_bits(_relu(s[j], relu), d)


def _out_bits(x, like):
    """float32 ``x`` as an element of the array ``like``: float32 itself, float16 bits (uint16) or bfloat16
    bits (int16), rounded to nearest even."""
    raise NotImplementedError("_out_bits is only callable from compiled code")


@overload(_out_bits, inline="always")
def _out_bits_impl(x, like):
    if like.dtype == types.uint16:
        return lambda x, like: f32_to_f16(x)
    if like.dtype == types.int16:
        return lambda x, like: np.int16(f32_to_bf16(x))
    return lambda x, like: x


@njit(cache=True)
def _emit_row(out, row_off, nz_out, dst_stride, vals, ivals, n, src_kind, out_kind, mode, relu, col_scale,
              col_offset):
    oes = KIND_SIZE[out_kind]
    for c in range(n):
        at = _pos(nz_out, row_off, c, dst_stride, oes)
        if out_kind == K_I32:
            v = ivals[c]
            if relu and v < 0:
                v = np.int32(0)
            _store(out, at, np.int64(v), 4)
            continue
        if src_kind == K_F32:
            x = vals[c]
        else:
            x = np.float32(ivals[c])
        if mode == DEQF16 or mode == VDEQF16 or mode == QF322B8 or mode == VQF322B8 or mode == REQ8 \
                or mode == VREQ8:
            x = np.float32(x * col_scale[c])
        if relu and x < 0:
            x = np.float32(0.0)
        if out_kind == K_F32:
            _store(out, at, np.int64(np.float32(x).view(np.uint32)), 4)
        elif out_kind == K_F16:
            _store(out, at, np.int64(f32_to_f16(x)), 2)
        elif out_kind == K_BF16:
            _store(out, at, np.int64(f32_to_bf16(x)), 2)
        else:
            y = np.float32(x + col_offset[c])
            if y != y:
                q = 0.0
            else:
                q = np.rint(np.float64(y))
            lo = -128.0 if out_kind == K_S8 else 0.0
            hi = 127.0 if out_kind == K_S8 else 255.0
            q = min(max(q, lo), hi)
            out[at] = np.uint8(np.int64(q) & 0xFF)


@njit(cache=True, inline="always")
def _relu(x, on):
    """ReLU as the fixpipe applies it: negative values become +0; NaN and -0.0 pass."""
    return np.float32(0.0) if on and x < 0 else x


@njit(cache=True, inline="always")
def _store(out, at, bits, size):
    for b in range(size):
        out[at + b] = np.uint8((bits >> (8 * b)) & 0xFF)
