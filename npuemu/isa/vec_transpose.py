"""Transposition: ``transpose`` (16 x 16 and NCHW <-> NHWC) and ``trans_data_to_5hd`` (VNCHWCONV).

What the hardware computes (Ascend C Transpose and TransDataTo5HD pages;
assumptions are marked *assumed*):

* ``transpose(dst, src)`` and ``TRANSPOSE_ND2ND_B16``: ``dst[j * 16 + i] =
  src[i * 16 + j]`` over one 16 x 16 matrix of 16-bit elements (512 bytes);
  ``dst`` may be ``src`` (documented).  ND2ND_B16 takes ``h_size = w_size =
  16`` ("固定传入16"); npuemu rejects other sizes.
* ``TRANSPOSE_NCHW2NHWC`` / ``TRANSPOSE_NHWC2NCHW``: the permutation of an
  ``[n, c, h, w]`` / ``[n, h, w, c]`` array.  Ranges (documented): ``n`` 0..65535,
  ``c`` 0..4095, ``h * w`` 0..4095 and ``h * w * sizeof(T)`` a multiple of 32.
  On A2/A3 the library needs ``shared_tmp_buffer`` of ``(c + 2) * h0 * w0 *
  sizeof(T)`` (NCHW2NHWC) or ``(2c + 1) * h0 * w0 * sizeof(T)`` (NHWC2NCHW)
  bytes, ``h0 = 32`` for 8-bit data else 16, ``w0 = 32 / sizeof(T)``;
  ``dst`` must not overlap ``src`` (documented).  npuemu also refuses a
  scratch tensor that overlaps ``src`` or ``dst`` (*assumed*: the library
  writes it while both are live) and leaves its contents unchanged (on the
  hardware they are unspecified afterwards).  ``TRANSPOSE_TYPE_NONE`` does
  nothing (documented: "API不做任何处理").
* ``trans_data_to_5hd``: repeat ``r`` reads the 32-byte blocks at
  ``src_list[k] + r * src_rep_stride * 32`` and writes those at ``dst_list[k] +
  r * dst_rep_stride * 32``, k = 0..15; with ``repeat_times == 1`` the one
  repeat is at ``+ rep_stride * 32`` (documented: set the strides to 0 to
  start at the lists).  16-bit: ``dst[i][k] = src[k][i]``; 32-bit:
  ``dst[2i][k] = src[k][i]`` and ``dst[2i + 1][k] = src[8 + k][i]`` for i < 8,
  k < 8 (the page's int32 example); 8-bit: ``dst[i][k + 16 * dst_high_half] =
  src[k][i + 16 * src_high_half]``, the other half of each destination block
  unchanged (the page's int8 example).  Each repeat reads its 16 blocks
  before writing (*assumed*).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from . import state as S
from . import vmask as vm
from .common import memmove
from .fault import Fault, register
from .linkage import instruction

F_HW = 1750
F_SHAPE = 1751
F_TMP = 1752
F_OVERLAP = 1753
F_REPEAT = 1754
F_ADDR = 1755

ND2ND_B16 = 10
NCHW2NHWC = 11
NHWC2NCHW = 12

_NAMES = {ND2ND_B16: "TRANSPOSE_ND2ND_B16", NCHW2NHWC: "TRANSPOSE_NCHW2NHWC", NHWC2NCHW: "TRANSPOSE_NHWC2NCHW"}
_SHAPE = ("n_size", "c_size", "h_size * w_size", "h_size", "w_size")
_OPERANDS = ("dst and src", "shared_tmp_buffer and src", "shared_tmp_buffer and dst")

register({
    F_HW: (errors.AlignmentError,
           lambda a, b, c, env: f"h_size * w_size * sizeof(T) = {a} bytes is not a multiple of 32 (required by "
                                f"the NCHW/NHWC conversions)"),
    F_SHAPE: (errors.ParamRangeError,
              lambda a, b, c, env: (f"TransposeParamsExt.{_SHAPE[c]} = {a} is out of range [0, {b}]" if c < 3 else
                                    f"TransposeParamsExt.{_SHAPE[c]} = {a}: TRANSPOSE_ND2ND_B16 transposes one "
                                    f"16 x 16 matrix and takes h_size = w_size = 16")),
    F_TMP: (errors.BoundsError,
            lambda a, b, c, env: f"shared_tmp_buffer holds {a} bytes; {_NAMES.get(c, c)} with these sizes needs "
                                 f"{b} (Ascend C: (c_size + 2) or (2 * c_size + 1) blocks of h0 * w0 * sizeof(T))"),
    F_OVERLAP: (errors.OverlapError,
                lambda a, b, c, env: f"{_OPERANDS[c]} overlap (UB bytes {a} and {b}); the NCHW/NHWC conversions "
                                     f"need them disjoint"),
    F_REPEAT: (errors.ParamRangeError,
               lambda a, b, c, env: f"TransDataTo5HDParams.{('repeat_times', 'dst_rep_stride', 'src_rep_stride')[c]}"
                                    f" = {a} is out of range [0, {b}]"),
    F_ADDR: (errors.BoundsError,
             lambda a, b, c, env: f"{('dst_list', 'src_list')[c // 16]}[{c % 16}]: repeat {b} touches the 32-byte "
                                  f"block at UB byte {a}, outside its tensor"),
})


@njit(cache=True)
def _overlap(a, alen, b, blen, which, loc):
    if a < b + blen and b < a + alen and alen > 0 and blen > 0:
        raise Fault(F_OVERLAP, loc, a, b, which)


@njit(cache=True)
def _t16(lm, dst, src):
    """The 16 x 16 transpose of 2-byte elements at byte addresses ``src`` -> ``dst`` (may be equal)."""
    a = lm[src:src + 512].view(np.uint16).copy()
    d = lm[dst:dst + 512].view(np.uint16)
    for i in range(16):
        for j in range(16):
            d[j * 16 + i] = a[i * 16 + j]


@instruction
def transpose16(st, lm, dst, dst_len, src, src_len, loc):
    """``transpose(dst, src)``: one 16 x 16 matrix of 16-bit elements."""
    vm.check_operand(st, dst, dst_len, 256, vm.DST, loc)
    vm.check_operand(st, src, src_len, 256, vm.SRC, loc)
    _t16(lm, dst, src)


def make_transpose_ext(storage):
    """The extended ``transpose`` for one element width."""
    esize = np.dtype(storage).itemsize
    block = (32 if esize == 1 else 16) * (32 // esize) * esize      # h0 * w0 * sizeof(T)

    @instruction
    def run(st, lm, dst, dst_len, src, src_len, tmp, tmp_len, n, c, h, w, kind, loc):
        if kind == ND2ND_B16:
            if h != 16:
                raise Fault(F_SHAPE, loc, h, 16, 3)
            if w != 16:
                raise Fault(F_SHAPE, loc, w, 16, 4)
            vm.check_operand(st, dst, dst_len, 256, vm.DST, loc)
            vm.check_operand(st, src, src_len, 256, vm.SRC, loc)
            _t16(lm, dst, src)
            return
        if kind != NCHW2NHWC and kind != NHWC2NCHW:     # TRANSPOSE_TYPE_NONE
            return
        if n < 0 or n > 65535:
            raise Fault(F_SHAPE, loc, n, 65535, 0)
        if c < 0 or c > 4095:
            raise Fault(F_SHAPE, loc, c, 4095, 1)
        if h < 0 or w < 0 or h * w > 4095:
            raise Fault(F_SHAPE, loc, h * w, 4095, 2)
        hw = h * w
        if hw * esize % 32 != 0:
            raise Fault(F_HW, loc, hw * esize, 0, 0)
        need = (c + 2) * block if kind == NCHW2NHWC else (2 * c + 1) * block
        if tmp_len < need:
            raise Fault(F_TMP, loc, tmp_len, need, kind)
        total = n * c * hw
        vm.check_operand(st, dst, dst_len, total, vm.DST, loc)
        vm.check_operand(st, src, src_len, total, vm.SRC, loc)
        _overlap(dst, total * esize, src, total * esize, 0, loc)
        _overlap(tmp, need, src, total * esize, 1, loc)
        _overlap(tmp, need, dst, total * esize, 2, loc)
        a = lm[src:src + total * esize].view(storage)
        d = lm[dst:dst + total * esize].view(storage)
        for b in range(n):
            base = b * c * hw
            for ch in range(c):
                for p in range(hw):
                    if kind == NCHW2NHWC:
                        d[base + p * c + ch] = a[base + ch * hw + p]
                    else:
                        d[base + ch * hw + p] = a[base + p * c + ch]

    return run


transpose_ext_b8 = make_transpose_ext(np.uint8)
transpose_ext_b16 = make_transpose_ext(np.uint16)
transpose_ext_b32 = make_transpose_ext(np.uint32)


# --------------------------------------------------------------------------- trans_data_to_5hd

@njit(cache=True)
def block_offset(r, repeat, stride):
    """Byte offset of repeat ``r``'s block from its list entry (one repeat alone is at one stride)."""
    return (stride if repeat == 1 else r * stride) * 32


@njit(cache=True)
def _check_list(st, addrs, lens, repeat, stride, esize, first, loc):
    """Every block a list entry touches lies in its tensor (``lens`` in elements) and starts 32-byte aligned."""
    for k in range(16):
        vm.check_operand(st, addrs[k], lens[k], 0, vm.DST if first == 0 else vm.SRC, loc)
        if repeat > 0:
            last = block_offset(repeat - 1, repeat, stride)
            if last + 32 > lens[k] * esize:
                off = addrs[k] - st[S.SEG_BASE + vm.UB] + last
                raise Fault(F_ADDR, loc, off, repeat - 1, first + k)


@instruction
def trans_data_to_5hd(st, lm, esize, dsts, dst_lens, srcs, src_lens, dst_high, src_high, repeat, drep, srep, loc):
    """VNCHWCONV over ``repeat`` repeats; ``dsts``/``srcs`` are 16 absolute byte addresses each."""
    if repeat < 0 or repeat > 255:
        raise Fault(F_REPEAT, loc, repeat, 255, 0)
    if drep < 0 or drep > 65535:
        raise Fault(F_REPEAT, loc, drep, 65535, 1)
    if srep < 0 or srep > 65535:
        raise Fault(F_REPEAT, loc, srep, 65535, 2)
    _check_list(st, dsts, dst_lens, repeat, drep, esize, 0, loc)
    _check_list(st, srcs, src_lens, repeat, srep, esize, 16, loc)
    buf = np.empty(512, np.uint8)
    for r in range(repeat):
        for k in range(16):
            memmove(buf, 32 * k, lm, srcs[k] + block_offset(r, repeat, srep), 32)
        if esize == 2:
            for i in range(16):
                d = dsts[i] + block_offset(r, repeat, drep)
                for k in range(16):
                    lm[d + 2 * k] = buf[32 * k + 2 * i]
                    lm[d + 2 * k + 1] = buf[32 * k + 2 * i + 1]
        elif esize == 4:
            for i in range(8):
                for half in range(2):
                    d = dsts[2 * i + half] + block_offset(r, repeat, drep)
                    for k in range(8):
                        memmove(lm, d + 4 * k, buf, 32 * (8 * half + k) + 4 * i, 4)
        else:
            for i in range(16):
                d = dsts[i] + block_offset(r, repeat, drep) + 16 * dst_high
                for k in range(16):
                    lm[d + k] = buf[32 * k + i + 16 * src_high]
