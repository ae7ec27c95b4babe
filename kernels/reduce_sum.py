"""Row sums of a (rows, cols) matrix: ``out[r] = sum(x[r, :])``.

float32 and float16 reduce natively, in the vector unit's binary-tree order
(float16 partial sums round to float16 and saturate at 65504, as on the
hardware); bfloat16 is widened to float32 first.  Each row's result is read
by the scalar unit and stored into the output tile, which goes to GM once per
tile.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.language import dtype as dt
from npuemu.kernels._host import LaunchError, check_arrays, kernel_dtype, launch_rows
from npuemu.kernels._rows import core_rows, load_rows, read_scalar
from npuemu.kernels._stream import global_slice, store, to_float
from npuemu.tiling.rows import RowTiling

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def tile_sum(lx: asc.LocalTensor, row: asc.LocalTensor, work: asc.LocalTensor, tmp: asc.LocalTensor, count: int):
    """Sum of the first ``count`` elements of ``lx`` (bfloat16 is widened into ``row`` first)."""
    if lx.dtype == asc.bfloat16:
        to_float(row, lx, count)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.reduce_sum(tmp, row, work, count)
    else:
        asc.reduce_sum(tmp, lx, work, count)
    return read_scalar(tmp)


@asc.jit
def reduce_sum_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, t: RowTiling):
    first, nrows = core_rows(t)
    xg = global_slice(x, first * t.cols, nrows * t.cols)
    zg = global_slice(z, first, nrows)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    w = t.col_tile_len                     # the padded row, or one column tile of a row too wide for UB
    pipe.init_buffer(qx, 1, t.tile_rows * w * x.dtype.sizeof())
    pipe.init_buffer(qz, 1, t.tile_rows * z.dtype.sizeof() + 32)
    if x.dtype == asc.bfloat16:
        pipe.init_buffer(calc, 2 * w * 4 + 32)
        row = calc.get_with_offset(w, 0, asc.float32)
        work = calc.get_with_offset(w, w * 4, asc.float32)
        tmp = calc.get_with_offset(8, 2 * w * 4, asc.float32)
    else:
        pipe.init_buffer(calc, w * x.dtype.sizeof() + 32)
        work = calc.get_with_offset(w, 0, x.dtype)
        row = work
        tmp = calc.get_with_offset(32 // x.dtype.sizeof(), w * x.dtype.sizeof(), x.dtype)
    for r0 in range(0, nrows, t.tile_rows):
        n = min(t.tile_rows, nrows - r0)
        lz = qz.alloc_tensor(z.dtype)
        if t.col_tile_num == 1:
            lx = qx.alloc_tensor(x.dtype)
            load_rows(lx, xg[r0 * t.cols:], n, t.cols)
            qx.enque(lx)
            lx = qx.deque(x.dtype)
            for j in range(n):
                lz.set_value(j, tile_sum(lx[j * w:], row, work, tmp, t.cols))
            qx.free_tensor(lx)
        else:
            # one row at a time, column tile by column tile; the partial sums add up on the scalar unit
            for j in range(n):
                total = 0.0
                for c in range(t.col_tile_num):
                    c0 = c * w
                    cn = min(w, t.cols - c0)
                    lx = qx.alloc_tensor(x.dtype)
                    load_rows(lx, xg[(r0 + j) * t.cols + c0:], 1, cn)
                    qx.enque(lx)
                    lx = qx.deque(x.dtype)
                    total += tile_sum(lx, row, work, tmp, cn)
                    qx.free_tensor(lx)
                lz.set_value(j, total)
        asc.set_flag(asc.HardEvent.S_MTE3, 0)
        asc.wait_flag(asc.HardEvent.S_MTE3, 0)
        store(zg[r0:], lz, n)
        qz.free_tensor(lz)


def reduce_sum(x: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """Sum over the last axis of a 2-D array, on the emulated NPU (rows wider than UB are split in column tiles)."""
    check_arrays("reduce_sum", x=x)
    if x.ndim != 2:
        raise LaunchError(f"reduce_sum expects a 2-D (rows, cols) array, got shape {x.shape}")
    z = np.empty(x.shape[0], x.dtype) if out is None else out
    size = kernel_dtype(x).sizeof()
    # UB per tile element: the input (one buffer) and, at most as much, the row's output slot; per column:
    # the reduction's work row (two float32 rows for bfloat16); fixed: 32-byte temporaries and alignment
    launch_rows(reduce_sum_kernel, (x,), z, tile_bytes_per_element=2 * size,
                scratch_bytes_per_col=8 if kernel_dtype(x) == dt.bfloat16 else size, fixed_bytes=256,
                split_cols=True, **launch)
    return z


def reference(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64).sum(axis=1).astype(x.dtype)
