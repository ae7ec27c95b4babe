"""Data movement into the cube's memories: GM -> L1 with ND -> NZ, L1 -> L0A/L0B, InitConstValue.

Fractals and formats (Ascend C ``LoadData``/``Mmad``/ND2NZ documentation):

* a fractal is 512 bytes: 16 rows of one 32-byte C0 block, i.e. 16 x 32
  (8-bit), 16 x 16 (16-bit) or 16 x 8 (32-bit) elements on the A side and the
  transposed shape on the B side;
* NZ (L1, L0C): fractals column-major, row-major inside; ZZ (L0A): fractals
  row-major, row-major inside; ZN (L0B): fractals row-major, column-major
  inside.

``data_copy(l1, gm, Nd2NzParams(nd_num, n_value, d_value, src_nd_matrix_stride,
src_d_value, dst_nz_c0_stride, dst_nz_n_stride, dst_nz_matrix_stride))``
moves, for each of ``nd_num`` matrices and each of its ``n_value`` rows, the
row's ``d_value`` elements as 32-byte blocks: block ``k`` of row ``j`` lands at
``j * dst_nz_n_stride + k * dst_nz_c0_stride`` C0 blocks from the matrix
start, and a row whose bytes are not a multiple of 32 is padded with zeros to
the block end.  Source offsets (``src_nd_matrix_stride`` between matrices,
``src_d_value`` between rows) and ``dst_nz_matrix_stride`` are in elements.

``load_data(dst, src, LoadData2DParams(start_index, repeat_times, src_stride,
sid, dst_gap, if_transpose, addr_mode))`` copies ``repeat_times`` fractals:
repeat ``r`` reads fractal ``start_index + r * src_stride`` of the source and
writes fractal ``r * (1 + dst_gap)`` of the destination; ``if_transpose``
transposes each 16 x 16 fractal (16-bit types, L1 -> L0 only, as documented).
``sid`` and ``addr_mode`` are reserved and ignored.

Assumptions (not stated by the documentation; see docs/cube.md):

* ``LoadData2DParamsV2`` (documented for the 950 series) is taken as a copy
  of an ``m_step`` x ``k_step`` block of a column-major fractal grid whose
  columns are ``src_stride`` (source) and ``dst_stride`` (destination)
  fractals tall, starting at fractal (``m_start_position``,
  ``k_start_position``) of the source;
* ``load_data_with_transpose`` for 32-bit types joins two adjacent 16 x 8
  fractals side by side into a 16 x 16 square, and for 8-bit types two stacked
  16 x 32 fractals into a 32 x 32 square; the transposed square is split
  into its left/right (32-bit) or top/bottom (8-bit) halves.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..language.enums import Hardware
from . import atomic
from . import cube_common as cc
from .common import memmove, transpose_square
from .datamove import check_gm, check_gm_size
from .fault import Fault, register

F_TRANSPOSE_TYPE = 900
F_NZ2ND_D = 901
F_NOT_EMULATED = 902

# the mode fields refuse_above checks at run time (their value was not a compile-time constant)
REFUSED = ("DataCopyCO12DstParams.channel_split", "DataCopyCO12DstParams.clip_relu_pre",
           "DataCopyCO12DstParams.eltwise_op", "DataCopyCO12DstParams.relu_pre", "DataCopyEnhancedParams.is_relu_in",
           "LoadData3DParamsV2.en_transpose", "LoadData2DParams.if_transpose of load_data_with_sparse",
           "DataCopyCO12DstParams.quant_pre (a vector mode)", "DataCopyEnhancedParams.block_mode",
           "DataCopyEnhancedParams.deq_scale", "DataCopyEnhancedParams.pad_mode_in")

register({
    F_TRANSPOSE_TYPE: (errors.ParamRangeError,
                       lambda a, b, c, env: f"load_data with if_transpose=True needs a 16-bit element type "
                                            f"(the hardware transposes 16 x 16 fractals only); this one has "
                                            f"{a}-byte elements (use load_data_with_transpose)"),
    F_NOT_EMULATED: (errors.ParamRangeError,
                     lambda a, b, c, env: f"{REFUSED[c] if 0 <= c < len(REFUSED) else 'field'} = {a} is not emulated "
                                          f"(npuemu supports values up to {b}); see docs/cube.md"),
    F_NZ2ND_D: (errors.ParamRangeError,
                lambda a, b, c, env: f"Nz2NdParamsFull.d_value = {a} must be a multiple of 16 (the NZ source is "
                                     f"cut into 16-element columns)"),
})

FRACTAL = cc.FRACTAL
C0 = cc.C0_BYTES
U16 = 0xFFFF


@instruction
def refuse_above(value, limit, field, loc):
    """A mode field given at run time: values above ``limit`` select behaviour npuemu does not emulate."""
    if value > limit or value < 0:
        raise Fault(F_NOT_EMULATED, loc, value, limit, field)


# ---------------------------------------------------------------------------- GM -> L1, ND -> NZ


@instruction
def nd2nz(st, lm, g, dst, dst_len, rid, off, size, nd_num, n, d, src_mstride, src_d, c0_stride, n_stride,
          dst_mstride, esize, loc):
    """``data_copy(l1, gm, Nd2NzParams(...))`` (MTE2)."""
    cc.check_aic(st, loc)
    cc.check_param(nd_num, 0, 4095, 0, loc)
    cc.check_param(n, 0, 16384, 1, loc)
    cc.check_param(d, 0, U16, 2, loc)
    cc.check_param(src_mstride, 0, U16, 3, loc)
    cc.check_param(src_d, 1, U16, 4, loc)
    cc.check_param(c0_stride, 1, 16384, 5, loc)
    cc.check_param(n_stride, 1, 16384, 6, loc)
    cc.check_param(dst_mstride, 0, U16, 7, loc)
    cc.check_align(st, dst, Hardware.L1, C0, cc.DST, loc)
    if nd_num == 0 or n == 0 or d == 0:
        return
    row_bytes = d * esize
    nblk = (row_bytes + C0 - 1) // C0
    dst_end = ((nd_num - 1) * dst_mstride * esize + (n - 1) * n_stride * C0 + (nblk - 1) * c0_stride * C0 + C0)
    cc.check_extent(dst_end, dst_len * esize, cc.DST, loc)
    src_end = (nd_num - 1) * src_mstride * esize + (n - 1) * src_d * esize + row_bytes
    check_gm_size(size, (src_end + esize - 1) // esize, rid, off, esize, loc)
    check_gm(g, rid, off, src_end, loc)
    for i in range(nd_num):
        s_mat = off + i * src_mstride * esize
        d_mat = dst + i * dst_mstride * esize
        for j in range(n):
            s_row = s_mat + j * src_d * esize
            d_row = d_mat + j * n_stride * C0
            full = row_bytes // C0
            for k in range(full):       # whole blocks: a copy of constant size, which LLVM inlines
                memmove(lm, d_row + k * c0_stride * C0, g, s_row + k * C0, C0)
            if full < nblk:             # the partial last block, zero-padded
                nb = row_bytes - full * C0
                at = d_row + full * c0_stride * C0
                memmove(lm, at, g, s_row + full * C0, nb)
                lm[at + nb:at + C0] = 0


# ---------------------------------------------------------------------------- fractal copies


@njit(cache=True, inline="always")
def _copy_fractal(lm, t, s, transpose):
    """One 512-byte fractal from byte ``s`` to byte ``t``; ``transpose``: as a 16 x 16 b16 matrix."""
    if transpose:
        transpose_square(lm, t, 32, lm, s, 32, 16, 2)
    else:
        memmove(lm, t, lm, s, FRACTAL)


@instruction
def load2d(st, lm, dst, dst_len, dst_hw, src, src_len, src_hw, start, repeat, sstride, dgap, transpose,
           addr_mode, esize, loc):
    """``load_data(l0, l1, LoadData2DParams(...))`` (MTE1): one 512-byte fractal per repeat."""
    cc.check_aic(st, loc)
    cc.check_param(start, 0, U16, 8, loc)
    cc.check_param(repeat, 1, 255, 9, loc)
    cc.check_param(sstride, 0, U16, 10, loc)
    cc.check_param(dgap, 0, U16, 11, loc)
    cc.check_param(addr_mode, 0, 255, 12, loc)
    if transpose and esize != 2:
        raise Fault(F_TRANSPOSE_TYPE, loc, esize, 0, 0)
    _check_l0(st, dst, dst_hw, cc.DST, loc)
    _check_l0(st, src, src_hw, cc.SRC, loc)
    cc.check_extent((start + (repeat - 1) * sstride + 1) * FRACTAL, src_len * esize, cc.SRC, loc)
    cc.check_extent((repeat - 1) * (1 + dgap) * FRACTAL + FRACTAL, dst_len * esize, cc.DST, loc)
    if not transpose and sstride == 1 and dgap == 0:     # consecutive fractals to consecutive fractals
        memmove(lm, dst, lm, src + start * FRACTAL, repeat * FRACTAL)
        return
    for r in range(repeat):
        _copy_fractal(lm, dst + r * (1 + dgap) * FRACTAL, src + (start + r * sstride) * FRACTAL, transpose)


@instruction
def load2d_v2(st, lm, dst, dst_len, dst_hw, src, src_len, src_hw, m_start, k_start, m_step, k_step, sstride,
              dstride, transpose, esize, loc):
    """``load_data(l0, l1, LoadData2DParamsV2(...))``: an ``m_step`` x ``k_step`` block of fractals."""
    cc.check_aic(st, loc)
    cc.check_param(m_start, 0, 0xFFFFFFFF, 13, loc)
    cc.check_param(k_start, 0, 0xFFFFFFFF, 14, loc)
    cc.check_param(m_step, 0, U16, 15, loc)
    cc.check_param(k_step, 0, U16, 16, loc)
    cc.check_param(sstride, 0, 0x7FFFFFFF, 10, loc)
    cc.check_param(dstride, 0, U16, 17, loc)
    if transpose and esize != 2:
        raise Fault(F_TRANSPOSE_TYPE, loc, esize, 0, 0)
    _check_l0(st, dst, dst_hw, cc.DST, loc)
    _check_l0(st, src, src_hw, cc.SRC, loc)
    if m_step == 0 or k_step == 0:
        return
    cc.check_extent(((k_start + k_step - 1) * sstride + m_start + m_step) * FRACTAL, src_len * esize, cc.SRC,
                    loc)
    cc.check_extent(((k_step - 1) * dstride + m_step) * FRACTAL, dst_len * esize, cc.DST, loc)
    for kk in range(k_step):
        for mm in range(m_step):
            _copy_fractal(lm, dst + (kk * dstride + mm) * FRACTAL,
                          src + ((k_start + kk) * sstride + m_start + mm) * FRACTAL, transpose)


@instruction
def load2d_transpose(st, lm, dst, dst_len, dst_hw, src, src_len, src_hw, start, repeat, sstride, dgap, fgap,
                     addr_mode, esize, loc):
    """``load_data_with_transpose(l0, l1, LoadData2dTransposeParams(...))``: one square per repeat."""
    cc.check_aic(st, loc)
    cc.check_param(start, 0, U16, 8, loc)
    cc.check_param(repeat, 0, 255, 9, loc)
    cc.check_param(sstride, 0, U16, 10, loc)
    cc.check_param(dgap, 0, U16, 11, loc)
    cc.check_param(fgap, 0, U16, 18, loc)
    cc.check_param(addr_mode, 0, 255, 12, loc)
    _check_l0(st, dst, dst_hw, cc.DST, loc)
    _check_l0(st, src, src_hw, cc.SRC, loc)
    if repeat == 0:
        return
    nfrac = 1 if esize == 2 else 2            # fractals per square
    square = nfrac * FRACTAL
    cc.check_extent((start + (repeat - 1) * sstride + 1) * square, src_len * esize, cc.SRC, loc)
    last_frac = (repeat - 1) * (1 + dgap) + (nfrac - 1) * (1 + fgap)
    cc.check_extent((last_frac + 1) * FRACTAL, dst_len * esize, cc.DST, loc)
    if esize == 4:
        _load_transpose_b32(lm, dst, src, start, repeat, sstride, dgap, fgap)
        return
    sq = np.empty(2 * FRACTAL, np.uint8)
    for r in range(repeat):
        s = src + (start + r * sstride) * square
        first = dst + r * (1 + dgap) * FRACTAL
        if esize == 2:                   # one 16 x 16 fractal
            transpose_square(lm, first, 32, lm, s, 32, 16, 2)
        else:                            # [F0; F1] is a 32 x 32 square; its transpose's top and bottom halves
            transpose_square(sq, 0, 32, lm, s, 32, 32, 1)
            memmove(lm, first, sq, 0, FRACTAL)
            memmove(lm, first + (1 + fgap) * FRACTAL, sq, FRACTAL, FRACTAL)


@njit(cache=True)
def _load_transpose_b32(lm, dst, src, start, repeat, sstride, dgap, fgap):
    """The 32-bit case of :func:`load2d_transpose` (byte addresses)."""
    for r in range(repeat):
        s = src + (start + r * sstride) * 2 * FRACTAL
        left = dst + r * (1 + dgap) * FRACTAL
        right = left + (1 + fgap) * FRACTAL
        # element (a, b) of the square [F0 | F1] goes to (b, a): the halves of the result are the
        # transposed 8 x 8 blocks of F0 and F1 (F0 is columns 0-7 of the square, rows 0-7 then 8-15)
        transpose_square(lm, left, 32, lm, s, 32, 8, 4)
        transpose_square(lm, left + 256, 32, lm, s + FRACTAL, 32, 8, 4)
        transpose_square(lm, right, 32, lm, s + 256, 32, 8, 4)
        transpose_square(lm, right + 256, 32, lm, s + FRACTAL + 256, 32, 8, 4)


@njit(cache=True, inline="always")
def _check_l0(st, addr, hw, role, loc):
    """L0A/L0B operands are 512-byte aligned, L1 operands 32-byte aligned."""
    if hw == Hardware.L0A or hw == Hardware.L0B:
        cc.check_align(st, addr, hw, FRACTAL, role, loc)
    else:
        cc.check_align(st, addr, hw, C0, role, loc)


# ---------------------------------------------------------------------------- GM -> L1/L0 load2d


@instruction
def load2d_gm(st, lm, g, dst, dst_len, dst_hw, rid, off, size, start, repeat, sstride, dgap, esize, loc):
    """``load_data(local, gm, LoadData2DParams(...))`` (MTE2): fractal copies from GM, no transpose."""
    cc.check_aic(st, loc)
    cc.check_param(start, 0, U16, 8, loc)
    cc.check_param(repeat, 1, 255, 9, loc)
    cc.check_param(sstride, 0, U16, 10, loc)
    cc.check_param(dgap, 0, U16, 11, loc)
    _check_l0(st, dst, dst_hw, cc.DST, loc)
    src_end = (start + (repeat - 1) * sstride + 1) * FRACTAL
    check_gm_size(size, src_end // esize, rid, off, esize, loc)
    check_gm(g, rid, off, src_end, loc)
    cc.check_extent((repeat - 1) * (1 + dgap) * FRACTAL + FRACTAL, dst_len * esize, cc.DST, loc)
    for r in range(repeat):
        memmove(lm, dst + r * (1 + dgap) * FRACTAL, g, off + (start + r * sstride) * FRACTAL, FRACTAL)


# ---------------------------------------------------------------------------- InitConstValue


@instruction
def init_const(st, lm, dst, dst_len, dst_hw, repeat, block_num, dgap, bits, esize, loc):
    """``init_const_value(dst, InitConstValueParams(...))`` (MTE1): ``bits`` is the value's raw element bits."""
    cc.check_aic(st, loc)
    cc.check_param(repeat, 0, 32767, 9, loc)
    cc.check_param(block_num, 0, 32767, 19, loc)
    cc.check_param(dgap, 0, 32767, 11, loc)
    _check_l0(st, dst, dst_hw, cc.DST, loc)
    if repeat == 0 or block_num == 0:
        return
    unit = FRACTAL if (dst_hw == Hardware.L0A or dst_hw == Hardware.L0B) else C0
    run = block_num * unit
    step = run + dgap * unit
    cc.check_extent((repeat - 1) * step + run, dst_len * esize, cc.DST, loc)
    pattern = np.empty(esize, np.uint8)
    for e in range(esize):
        pattern[e] = (bits >> (8 * e)) & 0xFF
    for r in range(repeat):
        base = dst + r * step
        for i in range(run):
            lm[base + i] = pattern[i % esize]


# ---------------------------------------------------------------------------- L1 -> BiasTable


@instruction
def l1_to_bt(st, lm, dst, dst_len, src, src_len, count, blen, sgap, dgap, esize, loc):
    """``data_copy(c2, l1, DataCopyParams(count, blen, sgap, dgap))`` (MTE1, ``copy_cbuf_to_bt``).

    ``blen`` is in 64-byte units, the source gap in 32-byte and the destination
    gap in 64-byte units; a count or length of 0 copies nothing.
    """
    cc.check_aic(st, loc)
    cc.check_param(count, 0, 4095, 31, loc)
    cc.check_param(blen, 0, U16, 32, loc)
    cc.check_param(sgap, 0, U16, 10, loc)
    cc.check_param(dgap, 0, U16, 11, loc)
    cc.check_align(st, dst, Hardware.BIAS, 64, cc.DST, loc)
    cc.check_align(st, src, Hardware.L1, C0, cc.SRC, loc)
    if count == 0 or blen == 0:
        return
    nb = blen * 64
    sstep = nb + sgap * C0
    dstep = nb + dgap * 64
    cc.check_extent((count - 1) * sstep + nb, src_len * esize, cc.SRC, loc)
    cc.check_extent((count - 1) * dstep + nb, dst_len * esize, cc.DST, loc)
    for i in range(count):
        memmove(lm, dst + i * dstep, lm, src + i * sstep, nb)


# ---------------------------------------------------------------------------- UB (NZ) -> GM (ND)


@instruction
def nz2nd(st, lm, g, rid, off, size, src, src_len, nd_num, n, d, src_mstride, src_nstride, dst_dstride,
          dst_mstride, esize, akind, loc):
    """``data_copy(gm, ub, Nz2NdParamsFull(...))`` (MTE3).

    Element (r, c) of NZ matrix ``i`` is at element ``i * src_nd_matrix_stride * 256 +
    (c // 16) * src_n_stride * 16 + r * 16 + c % 16`` of the source and goes to
    element ``i * dst_nd_matrix_stride + r * dst_d_stride + c`` of GM.  With the
    core's atomic mode on (``isa/atomic.py``; ``akind`` is the elements'
    AtomicDtype) each element is combined with GM's, as for every MTE3 copy.
    """
    cc.check_param(nd_num, 0, 4095, 0, loc)
    cc.check_param(n, 1, 8192, 1, loc)
    cc.check_param(d, 1, 8192, 2, loc)
    cc.check_param(src_mstride, 1, 512, 3, loc)
    cc.check_param(src_nstride, 0, 4096, 33, loc)
    cc.check_param(dst_dstride, 1, U16, 34, loc)
    cc.check_param(dst_mstride, 1, U16, 35, loc)
    if d % 16 != 0:
        raise Fault(F_NZ2ND_D, loc, d, 0, 0)
    cc.check_align(st, src, Hardware.UB, C0, cc.SRC, loc)
    if nd_num == 0:
        return
    d1 = d // 16
    src_end = ((nd_num - 1) * src_mstride * 256 + (d1 - 1) * src_nstride * 16 + (n - 1) * 16 + 16) * esize
    cc.check_extent(src_end, src_len * esize, cc.SRC, loc)
    dst_end = ((nd_num - 1) * dst_mstride + (n - 1) * dst_dstride + d) * esize
    check_gm_size(size, dst_end // esize, rid, off, esize, loc)
    check_gm(g, rid, off, dst_end, loc)
    run = 16 * esize
    atomic_on = atomic.begin(st, akind, loc)
    for i in range(nd_num):
        for j in range(d1):
            s_col = src + (i * src_mstride * 256 + j * src_nstride * 16) * esize
            d_col = off + (i * dst_mstride + j * 16) * esize
            for r in range(n):          # one 16-element row of the column per destination row
                if atomic_on:
                    atomic.combine(st, g, d_col + r * dst_dstride * esize, lm, s_col + r * run, run)
                else:
                    memmove(g, d_col + r * dst_dstride * esize, lm, s_col + r * run, run)
    if atomic_on:
        atomic.end(st)
