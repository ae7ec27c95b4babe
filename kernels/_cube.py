"""Cube-core building blocks shared by the matmul kernels: block schedule, staging, L0 loads, output.

A matmul tile ``C[tm, tn] (+)= A[tm, kk] @ B[kk, tn]`` moves as the hardware
wants it (ascend-c.md §2.3, §2.5, §3.4; the asc-devkit ``matmul_basic_api``
and ``mmad_s8_f16_f32_with_A_B_transpose_option`` samples):

* GM -> L1 (MTE2): ``data_copy`` with ``Nd2NzParams``: ND rows become NZ
  column blocks of C0 = 32 B / sizeof(T) elements, ``align(rows, 16)`` rows
  apart; rows past the matrix are left as they are and a short last block is
  zero-filled by the copy;
* L1 -> L0A (MTE1): one ``load_data`` per 16-row strip of A, walking the NZ
  column blocks: NZ -> ZZ;
* L1 -> L0B (MTE1): B stored as ``[K, N]`` (16-bit types) is loaded one K
  strip at a time with ``if_transpose`` (each 16 x 16 fractal transposed):
  NZ -> ZN; float32 ``[K, N]`` is staged in 16-row strips and loaded with
  ``load_data_with_transpose`` (two adjacent 16 x 8 fractals per 16 x 16
  block); B stored transposed, ``[N, K]`` (every type; int8 always), is
  loaded as is, since a row-major fractal of B^T is a column-major fractal
  of B;
* ``mmad`` accumulates into L0C (float32, or int32 for int8), exact in m, n,
  k: padding rows and columns are never read;
* ``fixpipe`` (FIX) converts L0C's NZ to ND on the way to GM, with the
  quantisation of the output dtype (``F322F16``, ``F322BF16``, ``NoQuant``,
  ``DEQF16``, ``REQ8``).

A tile of a single row (m = 1) puts the cube in GEMV mode, where L0A holds
the row as a plain vector: the row is staged in L1 with
``dst_nz_c0_stride = 1`` (its C0 blocks back to back, i.e. ND) and moved to
L0A as consecutive fractals.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.errors import LaunchError
from npuemu.kernels._host import kernel_dtype
from npuemu.tiling.matmul import TCubeTiling

FRACTAL_BYTES = 512
ROWS = 16                   # fractal rows; M and N granularity


def accumulator(dtype: Any) -> Any:
    """L0C element type for inputs of ``dtype``: int32 for int8, float32 otherwise."""
    return asc.int32 if dtype == asc.int8 else asc.float32


@asc.jit
def ceil_div(a: int, b: int):
    return (a + b - 1) // b


@asc.jit
def align(a: int, b: int):
    return (a + b - 1) // b * b


@asc.jit
def core_block(t: TCubeTiling, idx: int):
    """(row, column, rows, columns) of the block of C that cube core ``idx`` computes (tails clipped)."""
    n_blocks = ceil_div(t.N, t.singleCoreN)
    m0 = idx // n_blocks * t.singleCoreM
    n0 = idx % n_blocks * t.singleCoreN
    return m0, n0, min(t.singleCoreM, t.M - m0), min(t.singleCoreN, t.N - n0)


@asc.jit
def tile_count(t: TCubeTiling, rows: int, cols: int):
    """(tiles down, tiles across) of a ``rows x cols`` block in ``baseM x baseN`` tiles."""
    return ceil_div(rows, t.baseM), ceil_div(cols, t.baseN)


@asc.jit
def copy_a(a1: asc.LocalTensor, ag: asc.GlobalTensor, rows: int, cols: int, ld: int):
    """A[rows, cols] (row length ``ld`` in GM) -> L1 NZ, ``align(rows, 16)`` rows per column block.

    A single row is staged as a plain vector for GEMV (column blocks back to back).
    """
    c0_stride = align(rows, ROWS)
    if rows == 1:
        c0_stride = 1
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, rows, cols, 0, ld, c0_stride, 1, 0))


@asc.jit
def copy_b(b1: asc.LocalTensor, bg: asc.GlobalTensor, k: int, n: int, ld: int, trans_b: asc.ConstExpr[bool]):
    """The ``k x n`` tile of B -> L1 NZ: B[k, n] as is, or (``trans_b``) B^T[n, k].

    A float32 B[k, n] goes in 16-row strips, each its own NZ matrix of
    ``align(n, 16)`` columns, so the two 16 x 8 fractals of a 16 x 16 block
    are adjacent, as ``load_data_with_transpose`` pairs them.
    """
    if trans_b:
        asc.data_copy(b1, bg, asc.Nd2NzParams(1, n, k, 0, ld, align(n, ROWS), 1, 0))
    elif b1.dtype.sizeof() == 4:
        width = align(n, ROWS)
        for s in range(ceil_div(k, ROWS)):
            rows = min(ROWS, k - s * ROWS)
            asc.data_copy(b1[s * ROWS * width:], bg[s * ROWS * ld:], asc.Nd2NzParams(1, rows, n, 0, ld, ROWS, 1, 0))
    else:
        asc.data_copy(b1, bg, asc.Nd2NzParams(1, k, n, 0, ld, align(k, ROWS), 1, 0))


@asc.jit
def load_a(a2: asc.LocalTensor, a1: asc.LocalTensor, rows: int, k_off: int, k: int):
    """Rows x [k_off, k_off + k) of the A tile in L1 -> L0A (ZZ, or the plain row for GEMV)."""
    c0 = 32 // a1.dtype.sizeof()
    if rows == 1:
        # GEMV: the row lies contiguously in L1; move the fractals that hold columns [k_off, k_off + k)
        count = ceil_div(k * a1.dtype.sizeof(), FRACTAL_BYTES)
        asc.load_data(a2, a1[k_off:], asc.LoadData2DParams(0, count, 1, 0, 0, False, 0))
    else:
        strips = ceil_div(rows, ROWS)
        k_blocks = ceil_div(k, c0)
        height = align(rows, ROWS)                        # L1 rows per column block
        src = a1[k_off // c0 * height * c0:]
        for i in range(strips):
            # one 16-row strip: k_blocks fractals, one column block apart in L1, side by side in L0A
            asc.load_data(a2[i * k_blocks * ROWS * c0:], src[i * ROWS * c0:],
                          asc.LoadData2DParams(0, k_blocks, strips, 0, 0, False, 0))


@asc.jit
def load_b(b2: asc.LocalTensor, b1: asc.LocalTensor, k_tile: int, n: int, k_off: int, k: int,
           trans_b: asc.ConstExpr[bool]):
    """[k_off, k_off + k) x n of the B tile in L1 (``k_tile`` rows staged) -> L0B (ZN)."""
    c0 = 32 // b1.dtype.sizeof()
    n_blocks = ceil_div(n, ROWS)
    if trans_b:
        # B^T in L1: fractal (n1, k1) of B^T is fractal (k1, n1) of B in ZN; one K strip is one column block
        height = align(n, ROWS)
        for j in range(ceil_div(k, c0)):
            asc.load_data(b2[j * n_blocks * ROWS * c0:], b1[(k_off // c0 + j) * height * c0:],
                          asc.LoadData2DParams(0, n_blocks, 1, 0, 0, False, 0))
    elif b1.dtype.sizeof() == 4:
        # float32 B in 16-row strips (copy_b): each 16 x 16 block (two adjacent 16 x 8 fractals) transposed
        # into the ZN fractals (2j, n1) and (2j + 1, n1), n_blocks fractals apart
        width = align(n, ROWS)
        for j in range(ceil_div(k, ROWS)):
            asc.load_data_with_transpose(b2[2 * j * n_blocks * ROWS * c0:], b1[(k_off // ROWS + j) * ROWS * width:],
                                         asc.LoadData2dTransposeParams(0, n_blocks, 1, 0, n_blocks - 1, 0))
    else:
        # B in L1 (16-bit): each 16 x 16 fractal transposed; a K strip crosses all column blocks
        height = align(k_tile, ROWS)
        for j in range(ceil_div(k, ROWS)):
            asc.load_data(b2[j * n_blocks * ROWS * ROWS:], b1[(k_off // ROWS + j) * ROWS * ROWS:],
                          asc.LoadData2DParams(0, n_blocks, height // ROWS, 0, 0, True, 0))


@asc.jit
def mmad_step(co1: asc.LocalTensor, a2: asc.LocalTensor, b2: asc.LocalTensor, m: int, n: int, k: int,
              first: bool):
    """C (+)= A x B for one L0 step; the first step of a tile starts from zero."""
    asc.mmad(co1, a2, b2, asc.MmadParams(m, n, k, 0, False, first))


@asc.jit
def store_c(cg: asc.GlobalTensor, co1: asc.LocalTensor, m: int, n: int, ld: int, quant: asc.ConstExpr,
            deq_scalar: int):
    """The ``m x n`` tile in L0C -> GM, NZ -> ND with row length ``ld``, converted by ``quant``."""
    params = asc.FixpipeParamsV220(n_size=n, m_size=m, src_stride=align(m, ROWS), dst_stride=ld,
                                   quant_pre=quant, deq_scalar=deq_scalar, nd_num=1, src_nd_stride=0,
                                   dst_nd_stride=0, relu_en=False, unit_flag=0, is_channel_split=False)
    asc.fixpipe(cg, co1, params, asc.FixpipeConfig(asc.CO2Layout.ROW_MAJOR))


@asc.jit
def matmul_block(ag: asc.GlobalTensor, bg: asc.GlobalTensor, cg: asc.GlobalTensor, t: TCubeTiling,
                 trans_b: asc.ConstExpr[bool], quant: asc.ConstExpr, deq_scalar: int):
    """This cube core's block of ``C = A @ B`` with static tensors and event flags (kernels/matmul.py)."""
    acc = accumulator(ag.dtype)
    c0 = 32 // ag.dtype.sizeof()
    k_chunk = t.baseK * t.stepKa
    m0, n0, rows, cols = core_block(t, asc.get_block_idx())

    # static tensors: one L1 chunk of A and of B, two halves of L0A/L0B, one L0C tile
    a1_len = align(t.baseM, 16) * align(k_chunk, c0)
    b1_len = align(t.baseN, 16) * align(k_chunk, 16)
    a2_len = align(t.baseM, 16) * t.baseK
    b2_len = align(t.baseN, 16) * t.baseK
    a1 = asc.LocalTensor(ag.dtype, asc.TPosition.A1, 0, a1_len)
    b1 = asc.LocalTensor(bg.dtype, asc.TPosition.B1, a1_len * ag.dtype.sizeof(), b1_len)
    db = min(t.dbL0A, t.dbL0B)
    a2 = asc.LocalTensor(ag.dtype, asc.TPosition.A2, 0, db * a2_len)
    b2 = asc.LocalTensor(bg.dtype, asc.TPosition.B2, 0, db * b2_len)
    co1 = asc.LocalTensor(acc, asc.TPosition.CO1, 0, t.baseM * t.baseN)

    asc.set_flag(asc.HardEvent.MTE1_MTE2, 0)
    for p in range(db):
        asc.set_flag(asc.HardEvent.M_MTE1, p)
    asc.set_flag(asc.HardEvent.FIX_M, 0)
    tiles_m, tiles_n = tile_count(t, rows, cols)
    step = 0
    for tj in range(tiles_n):
        for ti in range(tiles_m):
            tm = min(t.baseM, rows - ti * t.baseM)
            tn = min(t.baseN, cols - tj * t.baseN)
            row = m0 + ti * t.baseM
            col = n0 + tj * t.baseN
            asc.wait_flag(asc.HardEvent.FIX_M, 0)
            for kc in range(ceil_div(t.Ka, k_chunk)):
                kl = min(k_chunk, t.Ka - kc * k_chunk)
                asc.wait_flag(asc.HardEvent.MTE1_MTE2, 0)
                copy_a(a1, ag[row * t.Ka + kc * k_chunk:], tm, kl, t.Ka)
                if trans_b:
                    copy_b(b1, bg[col * t.Ka + kc * k_chunk:], kl, tn, t.Ka, trans_b)
                else:
                    copy_b(b1, bg[kc * k_chunk * t.N + col:], kl, tn, t.N, trans_b)
                asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
                asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
                for ks in range(ceil_div(kl, t.baseK)):
                    kk = min(t.baseK, kl - ks * t.baseK)
                    p = step % db
                    asc.wait_flag(asc.HardEvent.M_MTE1, p)
                    load_a(a2[p * a2_len:], a1, tm, ks * t.baseK, kk)
                    load_b(b2[p * b2_len:], b1, kl, tn, ks * t.baseK, kk, trans_b)
                    asc.set_flag(asc.HardEvent.MTE1_M, p)
                    asc.wait_flag(asc.HardEvent.MTE1_M, p)
                    mmad_step(co1, a2[p * a2_len:], b2[p * b2_len:], tm, tn, kk, kc == 0 and ks == 0)
                    asc.set_flag(asc.HardEvent.M_MTE1, p)
                    step += 1
                asc.set_flag(asc.HardEvent.MTE1_MTE2, 0)
            asc.set_flag(asc.HardEvent.M_FIX, 0)
            asc.wait_flag(asc.HardEvent.M_FIX, 0)
            store_c(cg[row * t.N + col:], co1, tm, tn, t.N, quant, deq_scalar)
            asc.set_flag(asc.HardEvent.FIX_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_MTE2, 0)
    for p in range(db):
        asc.wait_flag(asc.HardEvent.M_MTE1, p)
    asc.wait_flag(asc.HardEvent.FIX_M, 0)


# ------------------------------------------------------------------------------ host side


def quant_mode(dtype: Any) -> asc.QuantModes:
    """The ``fixpipe`` conversion from L0C to an output of ``dtype`` (float16, bfloat16, float32, int32)."""
    name = kernel_dtype(np.zeros(1, dtype)).name
    modes = {"float16": asc.QuantModes.F322F16, "bfloat16": asc.QuantModes.F322BF16,
             "float32": asc.QuantModes.NoQuant, "int32": asc.QuantModes.NoQuant}
    if name not in modes:
        raise LaunchError(f"matmul output dtype {name} needs a quantisation scale (see kernels/matmul_int8.py)")
    return modes[name]


def float_bits(scale: float) -> int:
    """``deq_scalar`` for a scalar quantisation scale: the float32 bit pattern in the low 32 bits."""
    return int(np.array(scale, np.float32).view(np.uint32))


def operands(op: str, a: Any, b: Any, trans_b: bool) -> tuple[np.ndarray, np.ndarray, int, int, int]:
    """Checked ``(a, b, M, N, K)`` of ``a @ b`` (``a @ b.T`` with ``trans_b``)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise LaunchError(f"{op}: A and B must be 2-D, got shapes {a.shape} and {b.shape}")
    if a.dtype != b.dtype:
        raise LaunchError(f"{op}: A and B must share a dtype, got {a.dtype} and {b.dtype}")
    m, k = a.shape
    n, kb = b.shape if trans_b else b.shape[::-1]
    if k != kb:
        raise LaunchError(f"{op}: K of A ({k}) and B ({kb}) differ: shapes {a.shape} and {b.shape}"
                          f"{' (B is [N, K] with trans_b)' if trans_b else ''}")
    if min(m, n, k) < 1:
        raise LaunchError(f"{op}: empty matrices are not supported, got M={m} N={n} K={k}")
    if m > 0xFFFF or n > 0xFFFF or k > 0xFFFF:
        raise LaunchError(f"{op}: M, N and K must fit the copies' 16-bit row lengths, got M={m} N={n} K={k}")
    return a, b, m, n, k


def b_for_kernel(a: np.ndarray, b: np.ndarray, trans_b: bool) -> tuple[np.ndarray, bool]:
    """B as the kernel reads it: 16- and 32-bit B may stay ``[K, N]``; int8 B goes ``[N, K]``."""
    if trans_b or a.dtype.itemsize != 1:
        return np.ascontiguousarray(b), trans_b
    return np.ascontiguousarray(b.T), True


def launch_matmul(kernel: Any, a: Any, b: Any, out: np.ndarray | None, *, trans_b: bool, out_dtype: Any = None,
                  inputs_after: tuple[Any, ...] = (), args: tuple[Any, ...] = (), attrs: dict | None = None,
                  op: str = "matmul", **launch: Any) -> np.ndarray:
    """Tile ``a @ b`` with ``matmul_tiling``; launch ``kernel(a, b, *inputs_after, c, [ws], tiling, trans_b, *args)``.

    ``out_dtype`` defaults to ``a``'s dtype; ``attrs`` go to the tiling.
    """
    from npuemu.kernels import _host                      # looked up at call time: capture_tilings swaps run_op
    from npuemu.tiling.matmul import matmul_tiling
    a, b, m, n, _ = operands(op, a, b, trans_b)
    b, kernel_trans_b = b_for_kernel(a, b, trans_b)
    a = np.ascontiguousarray(a)
    c = np.empty((m, n), out_dtype or a.dtype) if out is None else out
    if c.shape != (m, n):
        raise LaunchError(f"{op}: out must have shape {(m, n)}, got {c.shape}")
    _host.run_op(kernel, matmul_tiling, (a, b, *inputs_after), (c,), args=(kernel_trans_b, *args),
                 attrs={"trans_b": kernel_trans_b, **(attrs or {})}, **launch)
    return c


def matmul_reference(a: np.ndarray, b: np.ndarray, trans_b: bool = False) -> np.ndarray:
    """float32 NumPy on the upcast inputs, rounded once to ``a``'s dtype (what fixpipe does)."""
    wide = a.astype(np.float32) @ (b.T if trans_b else b).astype(np.float32)
    return wide.astype(a.dtype)
