"""``mmad``: the cube's matrix multiply-accumulate, L0A (ZZ) x L0B (ZN) -> L0C (NZ).

Layouts (Ascend C ``Mmad``): with ``k0 = 32 / sizeof(input)`` (32 for int8,
16 for half/bfloat16, 8 for float), ``M1 = ceil(m / 16)``, ``K1 = ceil(k /
k0)``, ``N1 = ceil(n / 16)``:

* A, fractal (mi, ki) of 16 x k0 elements at fractal index ``mi * K1 + ki``,
  row-major inside; when ``m == 1`` (GEMV) A is read as a plain vector of
  ``k`` elements instead;
* B, fractal (ki, ni) of k0 x 16 elements at index ``ki * N1 + ni``,
  column-major inside (element (kk, nn) at ``nn * k0 + kk``);
* C, fractal (mi, ni) of 16 x 16 float32/int32 at index ``ni * M1 + mi``,
  row-major inside.

Elements of A past ``k`` (the K padding of the last fractal) are ignored, as
on hardware; padded rows and columns of whole fractals are computed like the
others (the cube works on whole 16 x 16 blocks) except in GEMV mode, where
only row 0 of C is written.

``cmatrix_init_val`` starts C from 0; otherwise ``cmatrix_source`` starts it
from the bias table (C2: one row of n values added to every row) or from the
current L0C contents (accumulation).  The bias overload takes the source from
the bias tensor's position: C2 (row vector) or CO1 (an NZ matrix laid out like
C).

Numerics (not bit-exact with the hardware, whose internal summation order is
not documented):

* int8 x int8 -> int32: exact (products and sums are exact in float64 for
  k <= 4095, then converted; accumulation into L0C wraps as int32);
* float16/bfloat16 -> float32: every product is exact in float32; the k
  products are summed in float32 by the BLAS kernel (NumPy ``matmul``) in its
  own order; the sum is then added to C in float32;
* float32 -> float32: float32 BLAS; with ``set_hf32_mode(True)`` both inputs
  are first rounded to HF32 (assumed: 1 sign, 8 exponent, 11 mantissa bits;
  round to nearest even, or half away from zero after
  ``set_hf32_trans_mode(True)``).

The multiply runs as a NumPy ``matmul`` called through ``numba.objmode``:
compiled code gathers the fractals into dense matrices of raw elements (slice
copies, O(mk + kn)), NumPy converts them to float32 (float64 for int8; its
float16 conversion is vectorised) and BLAS does the O(mnk) work.  A launch
whose cores run in parallel holds BLAS at one thread
(:mod:`npuemu.runtime.blas_threads`).
"""
from __future__ import annotations

import numpy as np
from numba import njit, objmode, types
from numba.extending import overload

from .linkage import instruction
from ..language.enums import Hardware
from . import cube_common as cc
from . import state as S

# input kinds
IN_S8 = 0
IN_F16 = 1
IN_BF16 = 2
IN_F32 = 3

# bias operand kinds
BIAS_NONE = 0
BIAS_TABLE = 1          # C2: one row of n values
BIAS_MATRIX = 2         # CO1: an NZ matrix like C

ST_HF32_MODE = S.HF32_MODE
ST_HF32_TRANS = S.HF32_TRANS

MAX_DIM = 4095
L0C_ALIGN = 1024        # 256 float32/int32 elements
BIAS_ALIGN = 128


@instruction
def set_hf32_mode(st, mode, loc):
    """``set_hf32_mode(mode)``: later float32 mmads round their inputs to HF32 while it is set."""
    st[ST_HF32_MODE] = 1 if mode else 0


@instruction
def set_hf32_trans_mode(st, mode, loc):
    """``set_hf32_trans_mode(mode)``: HF32 rounding, nearest even (False) or half away from zero (True)."""
    st[ST_HF32_TRANS] = 1 if mode else 0


@njit(cache=True, inline="always")
def _hf32(x, away):
    """float32 ``x`` rounded to 11 mantissa bits (NaN and infinities unchanged)."""
    u = np.int64(np.float32(x).view(np.uint32))
    if (u & 0x7F800000) == 0x7F800000:
        return np.float32(x)
    if away:
        u = (u + 0x800) & 0xFFFFF000
    else:
        u = (u + 0x7FF + ((u >> 12) & 1)) & 0xFFFFF000
    return np.uint32(u).view(np.float32)


@instruction
def mmad(st, lm, dst, dst_len, fm, fm_len, flt, flt_len, bias, bias_len, bias_kind, m, n, k, unit_flag,
         cmatrix_source, init_val, kind, loc):
    """``mmad(dst, fm, filter[, bias], MmadParams(m, n, k, unit_flag, cmatrix_source, cmatrix_init_val))``.

    Lengths are in elements; ``kind`` is the input kind (``IN_*``), ``bias_kind``
    a ``BIAS_*`` value (with the bias overload, ``init_val``/``cmatrix_source``
    are ignored, as documented).
    """
    cc.check_aic(st, loc)
    cc.check_param(m, 0, MAX_DIM, 20, loc)
    cc.check_param(n, 0, MAX_DIM, 21, loc)
    cc.check_param(k, 0, MAX_DIM, 22, loc)
    cc.check_param(unit_flag, 0, 3, 23, loc)
    cc.check_align(st, dst, Hardware.L0C, L0C_ALIGN, cc.DST, loc)
    cc.check_align(st, fm, Hardware.L0A, cc.FRACTAL, cc.FM, loc)
    cc.check_align(st, flt, Hardware.L0B, cc.FRACTAL, cc.FILTER, loc)
    if bias_kind == BIAS_TABLE:
        cc.check_align(st, bias, Hardware.BIAS, BIAS_ALIGN, cc.BIAS, loc)
    elif bias_kind == BIAS_MATRIX:
        cc.check_align(st, bias, Hardware.L0C, BIAS_ALIGN, cc.BIAS, loc)
    if m == 0 or n == 0 or k == 0:
        return
    esize = 1 if kind == IN_S8 else (4 if kind == IN_F32 else 2)
    k0 = 32 // esize
    gemv = m == 1
    m1 = 1 if gemv else (m + 15) // 16
    k1 = (k + k0 - 1) // k0
    n1 = (n + 15) // 16
    cbytes = m1 * n1 * 1024
    cc.check_extent(k * esize if gemv else m1 * k1 * cc.FRACTAL, fm_len * esize, cc.FM, loc)
    cc.check_extent(k1 * n1 * cc.FRACTAL, flt_len * esize, cc.FILTER, loc)
    cc.check_extent(cbytes, dst_len * 4, cc.DST, loc)
    if bias_kind == BIAS_TABLE:
        cc.check_extent(n1 * 64, bias_len * 4, cc.BIAS, loc)
    elif bias_kind == BIAS_MATRIX:
        cc.check_extent(cbytes, bias_len * 4, cc.BIAS, loc)
    # where C starts from: 0, a bias-table row, an NZ matrix (the current C when accumulating)
    if bias_kind == BIAS_TABLE:
        src_kind, src = BIAS_TABLE, bias
    elif bias_kind == BIAS_MATRIX:
        src_kind, src = BIAS_MATRIX, bias
    elif init_val:
        src_kind, src = BIAS_NONE, dst
    elif cmatrix_source:
        src_kind, src = BIAS_TABLE, st[16 + Hardware.BIAS]
    else:
        src_kind, src = BIAS_MATRIX, dst
    if kind == IN_S8:
        _mmad_s8(lm, dst, fm, flt, src, src_kind, m1, k1, n1, k, gemv)
    else:
        hf32 = kind == IN_F32 and st[ST_HF32_MODE] != 0
        _mmad_float(lm, dst, fm, flt, src, src_kind, m1, k1, n1, k, gemv, kind, hf32, st[ST_HF32_TRANS] != 0)


@njit(cache=True)
def _dense(v, fm, flt, m1, k1, n1, k, gemv, k0):
    """A as a dense (m1*16) x k matrix and B^T as a dense (n1*16) x k one, raw elements of ``v``.

    ``v`` is local memory viewed as the input's element type (bits for the
    floating-point kinds); ``fm``/``flt`` are element offsets.  A fractal row
    of A and a fractal column of B (stored column-major) are ``k0``
    consecutive elements, so both gathers are runs of slice copies.
    """
    a = np.zeros((m1 * 16, k), v.dtype)
    bt = np.empty((n1 * 16, k), v.dtype)
    fractal = 16 * k0
    if gemv:
        a[0, :] = v[fm:fm + k]
    else:
        for mi in range(m1):
            for ki in range(k1):
                f = fm + (mi * k1 + ki) * fractal
                w = min(k0, k - ki * k0)
                for r in range(16):
                    a[mi * 16 + r, ki * k0:ki * k0 + w] = v[f + r * k0:f + r * k0 + w]
    for ki in range(k1):
        h = min(k0, k - ki * k0)
        for ni in range(n1):
            f = flt + (ki * n1 + ni) * fractal
            for c in range(16):
                bt[ni * 16 + c, ki * k0:ki * k0 + h] = v[f + c * k0:f + c * k0 + h]
    return a, bt


@njit(cache=True)
def _round_hf32(x, away):
    """Round every element of the float32 bits ``x`` to HF32, in place."""
    flat = x.reshape(-1)
    for i in range(flat.size):
        flat[i] = np.float32(_hf32(np.uint32(flat[i]).view(np.float32), away)).view(np.uint32)


@njit(cache=True)
def _product_float(a, bt, kind, out):
    """``out = A @ B`` in float32 from raw float16/bfloat16/float32 bits (NumPy converts and multiplies)."""
    with objmode():
        if kind == IN_F16:
            fa, fb = a.view(np.float16).astype(np.float32), bt.view(np.float16).astype(np.float32)
        elif kind == IN_BF16:
            fa = (a.astype(np.uint32) << np.uint32(16)).view(np.float32)
            fb = (bt.astype(np.uint32) << np.uint32(16)).view(np.float32)
        else:
            fa, fb = a.view(np.float32), bt.view(np.float32)
        np.matmul(fa, fb.T, out=out)


@njit(cache=True)
def _product_s8(a, bt, out):
    """``out = A @ B`` from int8 operands, exact in float64 (|sum| < 2**26 for k <= 4095)."""
    with objmode():
        np.matmul(a.astype(np.float64), bt.astype(np.float64).T, out=out)


@njit(cache=True)
def _mmad_float(lm, dst, fm, flt, src, src_kind, m1, k1, n1, k, gemv, kind, hf32, away):
    p = np.empty((m1 * 16, n1 * 16), np.float32)
    if kind == IN_F32:
        a32, bt32 = _dense(lm.view(np.uint32), fm // 4, flt // 4, m1, k1, n1, k, gemv, 8)
        if hf32:
            _round_hf32(a32, away)
            _round_hf32(bt32, away)
        _product_float(a32, bt32, kind, p)
    else:
        a16, bt16 = _dense(lm.view(np.uint16), fm // 2, flt // 2, m1, k1, n1, k, gemv, 16)
        _product_float(a16, bt16, kind, p)
    _store_c(lm.view(np.float32), dst // 4, src // 4, src_kind, p, m1, n1, gemv)


@njit(cache=True)
def _mmad_s8(lm, dst, fm, flt, src, src_kind, m1, k1, n1, k, gemv):
    a, bt = _dense(lm.view(np.int8), fm, flt, m1, k1, n1, k, gemv, 32)
    p = np.empty((m1 * 16, n1 * 16), np.float64)
    _product_s8(a, bt, p)
    _store_c(lm.view(np.int32), dst // 4, src // 4, src_kind, p, m1, n1, gemv)


def _in_c(start, prod, cw):
    """``start + prod`` (just ``prod`` when ``start`` is None) as an element of C's array ``cw``.

    float32 C: a float32 sum; int32 C: an int64 sum wrapped around to int32.
    """
    raise NotImplementedError("_in_c is only callable from compiled code")


@overload(_in_c, inline="always")
def _in_c_impl(start, prod, cw):
    wrap = cw.dtype == types.int32
    if isinstance(start, types.NoneType):          # no start value: the product alone
        if wrap:
            return lambda start, prod, cw: np.int32(np.uint32(np.int64(prod) & 0xFFFFFFFF))
        return lambda start, prod, cw: np.float32(prod)
    if wrap:
        return lambda start, prod, cw: np.int32(np.uint32((np.int64(start) + np.int64(prod)) & 0xFFFFFFFF))
    return lambda start, prod, cw: np.float32(start + prod)


@njit(cache=True)
def _store_c(cw, dst, src, src_kind, p, m1, n1, gemv):
    """C (NZ, from element ``dst`` of ``cw``) = its start value (per ``src_kind``) + the dense product ``p``."""
    rows = 1 if gemv else 16
    for mi in range(m1):
        for ni in range(n1):
            base = (ni * m1 + mi) * 256
            for r in range(rows):
                pr = p[mi * 16 + r, ni * 16:ni * 16 + 16]
                o = base + r * 16
                for c in range(16):
                    if src_kind == BIAS_MATRIX:
                        cw[dst + o + c] = _in_c(cw[src + o + c], pr[c], cw)
                    elif src_kind == BIAS_TABLE:
                        cw[dst + o + c] = _in_c(cw[src + ni * 16 + c], pr[c], cw)
                    else:
                        cw[dst + o + c] = _in_c(None, pr[c], cw)
