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

Numerics (docs/cube.md, precision model; not the hardware's bits, whose
internal summation order is not documented, but one result on every path,
at any BLAS thread count, CPU count, check level and in debug mode):

* int8 x int8 -> int32: exact (products and sums are exact in float64, then
  converted; accumulation into L0C wraps as int32);
* float16/bfloat16/float32 -> float32: the inputs become float32 (exactly;
  float32 rounded to HF32 first with ``set_hf32_mode(True)``: assumed 1 sign,
  8 exponent, 11 mantissa bits, round to nearest even, or half away from zero
  after ``set_hf32_trans_mode(True)``).  Each mmad's K runs in blocks of
  :data:`K_BLOCK` rows; a block's product is one float32 BLAS product at one
  thread (in the BLAS kernel's order, which differs between CPU families:
  docs/cube.md), added to C with one float32 rounding.  C starts from its
  start value, or is the first block's product when it starts from 0.  So C
  is rounded after every mmad, as the cube accumulates in L0C.

Float C is kept dense.  The first float mmad into a C makes the product
buffer (an L0C-size matrix past the panels in the core's cube scratch) hold
C: its start value, or nothing when C starts from 0.  That mmad and every
later one that accumulates into the same C (same address, m and n) copy
their A and B operands into dense K-major panels (A^T and B; float16 and
bfloat16 become float32 on the way; each fractal is one block transposed in
registers) and add their product to the buffer at once (``cblas_sgemm``
with ``beta`` = 1, called directly when NumPy's BLAS is OpenBLAS, else NumPy
``matmul`` through ``numba.objmode``).  L0C itself is written only when
something else uses it (``fixpipe`` reading another layout, an mmad into
another C or from another start value, a dump or scalar access of a CO1
tensor: they call :func:`settle_l0c`); a ``fixpipe`` that reads C as mmad
laid it out takes the rows straight from the buffer (:func:`dense_c`), and
the next tile's first mmad overwrites the buffer without storing it.  A
GEMV, or a core without scratch, writes C to L0C at once.

int8 accumulation is deferred further: mmads into the same C collect their
operands in the panels and one float64 NumPy ``matmul`` over the whole K
runs when L0C is next used or the panels are full (int32 wrap-around
commutes with the sum, so this is exact).  Every launch of a kernel that
calls ``mmad`` holds BLAS at one thread (:mod:`npuemu.runtime.blas_threads`).
"""
from __future__ import annotations

import numpy as np
from numba import njit, objmode, types
from numba.extending import overload

from .common import transpose_square
from .linkage import instruction
from ..numerics.half import bf16_to_f32, f16_to_f32
from ..language.enums import Hardware
from . import cube_common as cc
from . import sgemm
from . import state as S

# input kinds
IN_S8 = 0
IN_F16 = 1
IN_BF16 = 2
IN_F32 = 3

# what L0C holds at PEND_DST (state.PEND_MODE)
PEND_NONE = 0           # nothing pending
PEND_START = 1          # int8: C's start value; the panels' product is still to be added
PEND_ZERO = 2           # int8: nothing yet: C is the panels' product
PEND_DENSE = 3          # float: nothing yet: C is the dense matrix in the product buffer

# bias operand kinds
BIAS_NONE = 0
BIAS_TABLE = 1          # C2: one row of n values
BIAS_MATRIX = 2         # CO1: an NZ matrix like C

ST_HF32_MODE = S.HF32_MODE
ST_HF32_TRANS = S.HF32_TRANS

MAX_DIM = 4095
L0C_ALIGN = 1024        # 256 float32/int32 elements
BIAS_ALIGN = 128
K_BLOCK = 256           # K rows per BLAS product (docs/cube.md, precision model)


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
    hf32 = kind == IN_F32 and st[ST_HF32_MODE] != 0
    away = st[ST_HF32_TRANS] != 0
    if kind == IN_S8:
        if not gemv and _appends(st, dst, src, src_kind, m1, n1, kind, k):
            _append(st, lm, fm, flt, m1, k1, n1, k)
            return
        settle_l0c(st, lm, loc)
        if not gemv and _begin(st, lm, dst, src, src_kind, m1, n1, kind, k):
            _append(st, lm, fm, flt, m1, k1, n1, k)
            return
        at, b = np.zeros((k, m1 * 16), np.int8), np.empty((k, n1 * 16), np.int8)
        _gather(lm.view(np.int8), fm, flt, m1, k1, n1, k, gemv, 32, at, b, 0)
        _store_c(lm.view(np.int32), dst // 4, src // 4, src_kind, _product_s8(at, b), m1, n1, gemv)
        return
    # float kinds: C is kept dense in the product buffer; this mmad's product is added to it now
    if not gemv and _accumulates(st, dst, src, src_kind, m1, n1):
        _multiply_into(st, lm, fm, flt, m1, k1, n1, k, kind, hf32, away, False)
        return
    if not gemv and _overwrites_product(st, dst, src_kind, m1, n1):
        st[S.PEND_MODE] = PEND_NONE
    settle_l0c(st, lm, loc)
    if not gemv and _begin_dense(st, lm, dst, src, src_kind, m1, n1, kind):
        _multiply_into(st, lm, fm, flt, m1, k1, n1, k, kind, hf32, away, src_kind == BIAS_NONE)
        return
    # GEMV, or a core without cube scratch: C straight to L0C, through arrays of this mmad's own
    at, b = np.zeros((k, m1 * 16), np.float32), np.empty((k, n1 * 16), np.float32)
    _gather_float(lm, fm, flt, m1, k1, n1, k, gemv, kind, hf32, away, at, b, 0)
    p = np.empty((m1 * 16, n1 * 16), np.float32)
    if src_kind != BIAS_NONE:
        _load_start(lm.view(np.float32), src // 4, src_kind, p, m1, n1)
    _accumulate(st, at, b, p, src_kind == BIAS_NONE)
    _store_c(lm.view(np.float32), dst // 4, 0, BIAS_NONE, p, m1, n1, gemv)


# ---------------------------------------------------------------- operands

def _operand(x):
    """One input element as an operand: float16 bits (read as uint16) and bfloat16 bits (read as int16)
    become float32; float32 and int8 stay as they are."""
    raise NotImplementedError("_operand is only callable from compiled code")


@overload(_operand, inline="always")
def _operand_impl(x):
    if x == types.uint16:
        return lambda x: f16_to_f32(x)
    if x == types.int16:
        return lambda x: bf16_to_f32(np.uint16(x))
    return lambda x: x


@njit(cache=True)
def _gather(v, fm, flt, m1, k1, n1, k, gemv, k0, at, b, row):
    """Copy A^T into rows ``row:row + k`` of ``at`` ((m1*16) columns) and B into those of ``b`` ((n1*16)
    columns): the operand panels are K-major, so each fractal lands as one transposed block of whole rows.

    ``v`` is local memory viewed as the input's element type (see
    :func:`_operand` for the 16-bit kinds); ``fm``/``flt`` are element
    offsets.  A fractal of A (16 rows of ``k0``) and one of B (stored
    column-major: 16 columns of ``k0``) are alike: ``k0`` rows of the panel,
    16 columns.  In GEMV mode A is the vector in column 0 (the caller zeroed
    the others).
    """
    fractal = 16 * k0
    tmp = np.empty(fractal, at.dtype)
    if gemv:
        for j in range(k):
            at[row + j, 0] = _operand(v[fm + j])
    else:
        for mi in range(m1):
            for ki in range(k1):
                _to_panel(at, row + ki * k0, mi * 16, v, fm + (mi * k1 + ki) * fractal, k0, k - ki * k0, tmp)
    for ki in range(k1):
        for ni in range(n1):
            _to_panel(b, row + ki * k0, ni * 16, v, flt + (ki * n1 + ni) * fractal, k0, k - ki * k0, tmp)


@njit(cache=True, inline="always")
def _to_panel(panel, row, col, v, f, k0, left, tmp):
    """The fractal at element ``f`` of ``v`` (16 rows of ``k0``) transposed into ``panel[row:row + k0,
    col:col + 16]``; only its first ``left`` rows when fewer remain (the K padding of the last fractal)."""
    if left < k0:
        for kk in range(left):
            for r in range(16):
                panel[row + kk, col + r] = _operand(v[f + r * k0 + kk])
        return
    width = panel.shape[1] * panel.itemsize          # bytes between panel rows
    at = (row * panel.shape[1] + col) * panel.itemsize
    _transpose_fractal(panel, at, width, v, f, k0, tmp)


def _transpose_fractal(panel, at, width, v, f, k0, tmp):
    """A whole fractal (16 rows of ``k0`` elements of ``v`` from element ``f``) transposed to the panel block
    at byte ``at``, rows ``width`` bytes apart: by in-register transposes of square blocks."""
    raise NotImplementedError("_transpose_fractal is only callable from compiled code")


@overload(_transpose_fractal, inline="always")
def _transpose_fractal_impl(panel, at, width, v, f, k0, tmp):
    if v.dtype == types.float32:            # 16 x 8: two 8 x 8 blocks, rows 0-7 and 8-15
        def f32(panel, at, width, v, f, k0, tmp):
            transpose_square(panel, at, width, v, f * 4, 32, 8, 4)
            transpose_square(panel, at + 32, width, v, f * 4 + 256, 32, 8, 4)
        return f32
    if v.dtype == types.int8:               # 16 x 32: two 16 x 16 blocks, columns 0-15 and 16-31
        def s8(panel, at, width, v, f, k0, tmp):
            transpose_square(panel, at, width, v, f, 32, 16, 1)
            transpose_square(panel, at + 16 * width, width, v, f + 16, 32, 16, 1)
        return s8

    def half(panel, at, width, v, f, k0, tmp):   # 16 x 16 half-precision: to float32, then four 8 x 8 blocks
        src = v[f:f + 256]
        for j in range(256):
            tmp[j] = _operand(src[j])
        transpose_square(panel, at, width, tmp, 0, 64, 8, 4)
        transpose_square(panel, at + 32, width, tmp, 512, 64, 8, 4)
        transpose_square(panel, at + 8 * width, width, tmp, 32, 64, 8, 4)
        transpose_square(panel, at + 8 * width + 32, width, tmp, 544, 64, 8, 4)
    return half


@njit(cache=True)
def _gather_float(lm, fm, flt, m1, k1, n1, k, gemv, kind, hf32, away, at, b, row):
    """:func:`_gather` for the floating-point kinds: float32 operands, rounded to HF32 when ``hf32``."""
    if kind == IN_F16:
        _gather(lm.view(np.uint16), fm // 2, flt // 2, m1, k1, n1, k, gemv, 16, at, b, row)
    elif kind == IN_BF16:
        _gather(lm.view(np.int16), fm // 2, flt // 2, m1, k1, n1, k, gemv, 16, at, b, row)
    else:
        _gather(lm.view(np.float32), fm // 4, flt // 4, m1, k1, n1, k, gemv, 8, at, b, row)
        if hf32:
            _round_hf32(at[row:row + k], away)
            _round_hf32(b[row:row + k], away)


@njit(cache=True)
def _round_hf32(x, away):
    """Round every element of the float32 matrix ``x`` to HF32, in place."""
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            x[i, j] = _hf32(x[i, j], away)


@njit(cache=True)
def _accumulate(st, at, b, p, first):
    """``p = A @ B`` (``first``) or ``p = p + A @ B`` in float32, from the K-major panels A^T and B, in K
    blocks of at most :data:`K_BLOCK` rows: each block's product is one float32 BLAS product added to ``p``
    with one rounding (the first block of a ``first`` product is ``p``).

    ``cblas_sgemm`` (``beta`` = 1 adds to ``p``) is called directly when the
    core state has its address (runtime/sgemm.py), else NumPy ``matmul``
    through ``objmode``.  BLAS runs at one thread (the launch holds it there,
    runtime/blas_threads.py); OpenBLAS does not split a block this short
    along K, and its threads divide C by rows and columns, so the bits do not
    depend on its thread count either.
    """
    k = at.shape[0]
    if st[S.SGEMM] != 0:
        fn, wide = st[S.SGEMM], st[S.SGEMM_WIDE] != 0
        for r in range(0, k, K_BLOCK):
            e = min(k, r + K_BLOCK)
            sgemm.at_b(fn, wide, at[r:e], b[r:e], p, 0.0 if first and r == 0 else 1.0)
        return
    with objmode():
        _accumulate_numpy(at, b, p, first)


def _accumulate_numpy(at: np.ndarray, b: np.ndarray, p: np.ndarray, first: bool) -> None:
    """:func:`_accumulate` by NumPy (any BLAS)."""
    for r in range(0, at.shape[0], K_BLOCK):
        q = at[r:r + K_BLOCK].T @ b[r:r + K_BLOCK]
        if first and r == 0:
            p[...] = q
        else:
            p += q


@njit(cache=True)
def _float_panels(st, lm, m1, n1, k):
    """This mmad's A^T (k x M1*16) and B (k x N1*16) float32 panels: at the start of the cube scratch
    (each half of the panel space), or new arrays if they do not fit."""
    half = _panel_bytes(st) // 2
    m16, n16 = m1 * 16, n1 * 16
    if k * max(m16, n16) * 4 > half:
        return np.empty((k, m16), np.float32), np.empty((k, n16), np.float32)
    v = lm.view(np.float32)
    a0 = st[S.SCRATCH_BASE] // 4
    b0 = a0 + half // 4
    return v[a0:a0 + k * m16].reshape((k, m16)), v[b0:b0 + k * n16].reshape((k, n16))


@njit(cache=True)
def _multiply_into(st, lm, fm, flt, m1, k1, n1, k, kind, hf32, away, first):
    """Gather this (float, not GEMV) mmad's operands into the panels and add their product to the C held
    in the product buffer (``first``: the product is C)."""
    at, b = _float_panels(st, lm, m1, n1, k)
    _gather_float(lm, fm, flt, m1, k1, n1, k, False, kind, hf32, away, at, b, 0)
    _accumulate(st, at, b, _product(st, lm), first)


@njit(cache=True)
def _product_s8(at, b):
    """``A @ B`` from int8 A^T and B, exact in float64 (|sum| < 2**53 for any k an L0C accumulation reaches)."""
    p = np.empty((at.shape[1], b.shape[1]), np.float64)
    with objmode():
        np.matmul(at.T.astype(np.float64), b.astype(np.float64), out=p)
    return p


# ---------------------------------------------------------------- deferred accumulation (int8)

@njit(cache=True, inline="always")
def _appends(st, dst, src, src_kind, m1, n1, kind, k):
    """Whether this (int8) mmad accumulates into the pending C and its K rows fit the panels."""
    mode = st[S.PEND_MODE]
    return ((mode == PEND_START or mode == PEND_ZERO) and src_kind == BIAS_MATRIX and src == dst
            and st[S.PEND_DST] == dst
            and st[S.PEND_M1] == m1 and st[S.PEND_N1] == n1 and st[S.PEND_KIND] == kind
            and st[S.PEND_K] + k <= st[S.PEND_KCAP])


@njit(cache=True)
def _begin(st, lm, dst, src, src_kind, m1, n1, kind, k):
    """Start a pending accumulation into C at ``dst``: C takes its start value now (unless it is 0).

    False when the core has no scratch or the panels cannot hold ``k`` rows
    (the mmad then runs at once).
    """
    kcap = _panel_bytes(st) // 2 // (max(m1, n1) * 16)
    if kcap < k:
        return False
    cw = lm.view(np.int32)
    d, words = dst // 4, m1 * n1 * 256
    if src_kind == BIAS_MATRIX and src != dst:
        cw[d:d + words] = cw[src // 4:src // 4 + words].copy()
    elif src_kind == BIAS_TABLE:
        row = cw[src // 4:src // 4 + n1 * 16].copy()
        for ni in range(n1):
            for mi in range(m1):
                base = d + (ni * m1 + mi) * 256
                for r in range(16):
                    cw[base + r * 16:base + r * 16 + 16] = row[ni * 16:ni * 16 + 16]
    st[S.PEND_MODE] = PEND_ZERO if src_kind == BIAS_NONE else PEND_START
    st[S.PEND_DST] = dst
    st[S.PEND_M1] = m1
    st[S.PEND_N1] = n1
    st[S.PEND_KIND] = kind
    st[S.PEND_K] = 0
    st[S.PEND_KCAP] = kcap
    return True


@njit(cache=True, inline="always")
def _panel_bytes(st):
    """Bytes of cube scratch for the A^T and B panels (half each): all but the product buffer."""
    return st[S.SCRATCH_SIZE] - st[S.SEG_SIZE + Hardware.L0C]


@njit(cache=True, inline="always")
def _panels(st, v):
    """The pending (int8) A^T (KCAP x M) and B (KCAP x N) panels in the cube scratch, as arrays of ``v``'s
    type."""
    es = v.itemsize
    m16, n16, kcap = st[S.PEND_M1] * 16, st[S.PEND_N1] * 16, st[S.PEND_KCAP]
    a0 = st[S.SCRATCH_BASE] // es
    b0 = a0 + _panel_bytes(st) // 2 // es
    return v[a0:a0 + kcap * m16].reshape((kcap, m16)), v[b0:b0 + kcap * n16].reshape((kcap, n16))


@njit(cache=True, inline="always")
def _product(st, lm):
    """The float32 product buffer (the last L0C-size bytes of the cube scratch) as the pending float C's
    (M1 * 16) x (N1 * 16) matrix."""
    m16, n16 = st[S.PEND_M1] * 16, st[S.PEND_N1] * 16
    p0 = (st[S.SCRATCH_BASE] + _panel_bytes(st)) // 4
    return lm.view(np.float32)[p0:p0 + m16 * n16].reshape((m16, n16))


@njit(cache=True)
def _append(st, lm, fm, flt, m1, k1, n1, k):
    """Copy this int8 mmad's A and B into the next ``k`` rows of the pending panels."""
    row = st[S.PEND_K]
    at, b = _panels(st, lm.view(np.int8))
    _gather(lm.view(np.int8), fm, flt, m1, k1, n1, k, False, 32, at, b, row)
    st[S.PEND_K] = row + k


@instruction
def settle_l0c(st, lm, loc):
    """Carry out the accumulation pending in L0C, if any (every other use of L0C calls this first)."""
    mode = st[S.PEND_MODE]
    if mode == PEND_NONE:
        return
    st[S.PEND_MODE] = PEND_NONE
    k, c = st[S.PEND_K], st[S.PEND_DST] // 4
    m1, n1 = st[S.PEND_M1], st[S.PEND_N1]
    if mode == PEND_DENSE:
        _store_c(lm.view(np.float32), c, c, BIAS_NONE, _product(st, lm), m1, n1, False)
        return
    # int8: the panels' product, added to C's start value
    src_kind = BIAS_NONE if mode == PEND_ZERO else BIAS_MATRIX
    at, b = _panels(st, lm.view(np.int8))
    _store_c(lm.view(np.int32), c, c, src_kind, _product_s8(at[:k], b[:k]), m1, n1, False)


@njit(cache=True)
def dense_c(st, lm, src, src_stride, m_size, n_size, nd_num):
    """The float32 C that ``fixpipe`` reads at ``src`` as a dense matrix, when the product buffer holds it:
    its rows (``m_size`` x ``n_size``, row-major, ``N1 * 16`` apart), or an empty array (the caller
    settles L0C and reads it as NZ).

    That is when the float C at ``src`` is pending (``PEND_DENSE``) and the
    fixpipe reads one NZ matrix laid out as mmad wrote it (``src_stride`` =
    ``M1 * 16``).  C then stays in the product buffer until something else
    uses L0C (:func:`settle_l0c`) or an mmad overwrites it.
    """
    m1, n1 = st[S.PEND_M1], st[S.PEND_N1]
    if (st[S.PEND_MODE] != PEND_DENSE or st[S.PEND_DST] != src or nd_num != 1 or src_stride != m1 * 16
            or m_size > m1 * 16 or n_size > n1 * 16):
        return np.empty((0, 0), np.float32)
    return _product(st, lm)


@njit(cache=True, inline="always")
def _accumulates(st, dst, src, src_kind, m1, n1):
    """Whether a float mmad (not GEMV) accumulates into the C held in the product buffer."""
    return (st[S.PEND_MODE] == PEND_DENSE and src_kind == BIAS_MATRIX and src == dst and st[S.PEND_DST] == dst
            and st[S.PEND_M1] == m1 and st[S.PEND_N1] == n1)


@njit(cache=True)
def _begin_dense(st, lm, dst, src, src_kind, m1, n1, kind):
    """Hold the float C at ``dst`` in the product buffer from now on, holding its start value (unless it
    starts from 0: the first product is written over it).  False when the core has no cube scratch."""
    if st[S.SCRATCH_SIZE] == 0:
        return False
    st[S.PEND_MODE] = PEND_DENSE
    st[S.PEND_DST] = dst
    st[S.PEND_M1] = m1
    st[S.PEND_N1] = n1
    st[S.PEND_KIND] = kind
    st[S.PEND_K] = 0
    if src_kind != BIAS_NONE:
        _load_start(lm.view(np.float32), src // 4, src_kind, _product(st, lm), m1, n1)
    return True


@njit(cache=True)
def _load_start(cf, src, src_kind, p, m1, n1):
    """The dense (M1*16 x N1*16) ``p`` = C's start value from element ``src`` of ``cf``: a bias-table row
    (``BIAS_TABLE``) added to every row, or an NZ matrix laid out like C (``BIAS_MATRIX``)."""
    for mi in range(m1):
        for ni in range(n1):
            base = src + (ni * m1 + mi) * 256
            for r in range(16):
                out = p[mi * 16 + r, ni * 16:ni * 16 + 16]
                at = base + r * 16 if src_kind == BIAS_MATRIX else src + ni * 16
                row = cf[at:at + 16]
                for c in range(16):
                    out[c] = row[c]


@njit(cache=True, inline="always")
def _overwrites_product(st, dst, src_kind, m1, n1):
    """Whether an mmad (not GEMV) into ``dst`` replaces all of a C held in the product buffer without
    reading it: C starts from 0 or the bias table and covers the same fractals or more."""
    return (st[S.PEND_MODE] == PEND_DENSE and src_kind != BIAS_MATRIX and dst == st[S.PEND_DST]
            and m1 * n1 >= st[S.PEND_M1] * st[S.PEND_N1])


# ---------------------------------------------------------------- C


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
                # 16 elements through 1-D slices, one loop per start kind: the loops vectorise
                pr = p[mi * 16 + r, ni * 16:ni * 16 + 16]
                o = base + r * 16
                out = cw[dst + o:dst + o + 16]
                if src_kind == BIAS_NONE:
                    for c in range(16):
                        out[c] = _in_c(None, pr[c], cw)
                else:
                    at = src + o if src_kind == BIAS_MATRIX else src + ni * 16
                    start = cw[at:at + 16]
                    for c in range(16):
                        out[c] = _in_c(start[c], pr[c], cw)
