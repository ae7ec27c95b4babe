"""The shared body of the normalisation kernels (LayerNorm, RMSNorm).

``norm_kernel`` streams row tiles of ``x`` through UB, widens each row to
float32, normalises it with the row statistics and the per-column ``gamma``
(and ``beta``), and rounds back to the input dtype.  ``center`` selects
LayerNorm (subtract the mean, add beta) or RMSNorm.
"""
from __future__ import annotations

import npuemu.asc as asc
from npuemu.kernels._rows import core_rows, load_rows, row_sum, rsqrt_scalar, store_rows
from npuemu.kernels._stream import from_float, global_slice, load, to_float
from npuemu.tiling.rows import RowTiling


@asc.jit
def load_vector(dst: asc.LocalTensor, raw: asc.LocalTensor, src: asc.GlobalTensor, cols: int):
    """A per-column parameter vector into UB as float32."""
    if src.dtype == asc.float32:
        load(dst, src, cols)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    else:
        load(raw, src, cols)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        to_float(dst, raw, cols)
        # raw is reloaded by the next call: MTE2 must not overwrite it before V has read it
        asc.set_flag(asc.HardEvent.V_MTE2, 0)
        asc.wait_flag(asc.HardEvent.V_MTE2, 0)


@asc.jit
def norm_kernel(x: asc.GlobalAddress, gamma: asc.GlobalAddress, beta: asc.GlobalAddress,
                z: asc.GlobalAddress, t: RowTiling, center: asc.ConstExpr[bool]):
    first, nrows = core_rows(t)
    xg = global_slice(x, first * t.cols, nrows * t.cols)
    zg = global_slice(z, first * t.cols, nrows * t.cols)
    gg = global_slice(gamma, 0, t.cols)
    bg = global_slice(beta, 0, t.cols)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    tile = t.tile_rows * t.cols_padded
    cp = t.cols_padded
    pipe.init_buffer(qx, 1, tile * x.dtype.sizeof())
    pipe.init_buffer(qz, 1, tile * z.dtype.sizeof())
    pipe.init_buffer(calc, 6 * cp * 4 + 32)
    row = calc.get_with_offset(cp, 0, asc.float32)
    sq = calc.get_with_offset(cp, cp * 4, asc.float32)
    work = calc.get_with_offset(cp, 2 * cp * 4, asc.float32)
    g = calc.get_with_offset(cp, 3 * cp * 4, asc.float32)
    b = calc.get_with_offset(cp, 4 * cp * 4, asc.float32)
    raw = calc.get_with_offset(cp, 5 * cp * 4, x.dtype)
    tmp = calc.get_with_offset(8, 6 * cp * 4, asc.float32)
    load_vector(g, raw, gg, t.cols)
    if center:
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        load_vector(b, raw, bg, t.cols)
    inv_cols = 1.0 / t.cols
    for r0 in range(0, nrows, t.tile_rows):
        n = min(t.tile_rows, nrows - r0)
        lx = qx.alloc_tensor(x.dtype)
        load_rows(lx, xg[r0 * t.cols:], n, t.cols)
        qx.enque(lx)
        lx = qx.deque(x.dtype)
        lz = qz.alloc_tensor(z.dtype)
        for j in range(n):
            src = lx[j * cp:]
            dst = lz[j * cp:]
            if x.dtype == asc.float32:
                asc.muls(row, src, 1.0, t.cols)
            else:
                to_float(row, src, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            if center:
                mean = row_sum(work, tmp, row, t.cols) * inv_cols
                asc.adds(row, row, -mean, t.cols)
                asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.mul(sq, row, row, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            var = row_sum(work, tmp, sq, t.cols) * inv_cols
            scale = rsqrt_scalar(tmp, var + t.eps)
            asc.muls(row, row, scale, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.mul(row, row, g, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            if center:
                asc.add(row, row, b, t.cols)
                asc.pipe_barrier(asc.PipeID.PIPE_V)
            if x.dtype == asc.float32:
                asc.muls(dst, row, 1.0, t.cols)
            else:
                from_float(dst, row, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
        qz.enque(lz)
        qx.free_tensor(lx)
        lz = qz.deque(z.dtype)
        store_rows(zg[r0 * t.cols:], lz, n, t.cols)
        qz.free_tensor(lz)
