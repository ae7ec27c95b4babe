"""Row softmax of a (rows, cols) matrix: ``exp(x - max) / sum(exp(x - max))`` per row.

Rows are spread over cores and move through UB a tile of rows at a time;
16-bit inputs are computed in float32 and rounded once at the end.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._host import LaunchError, check_arrays, kernel_dtype, launch_rows
from npuemu.kernels._rows import core_rows, load_rows, row_max, row_sum, store_rows
from npuemu.kernels._stream import from_float, global_slice, to_float
from npuemu.tiling.rows import RowTiling

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def softmax_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, t: RowTiling):
    first, nrows = core_rows(t)
    xg = global_slice(x, first * t.cols, nrows * t.cols)
    zg = global_slice(z, first * t.cols, nrows * t.cols)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    tile = t.tile_rows * t.cols_padded
    pipe.init_buffer(qx, 1, tile * x.dtype.sizeof())
    pipe.init_buffer(qz, 1, tile * z.dtype.sizeof())
    pipe.init_buffer(calc, (2 * t.cols_padded + 8) * 4 + 32)
    row = calc.get_with_offset(t.cols_padded, 0, asc.float32)
    work = calc.get_with_offset(t.cols_padded, t.cols_padded * 4, asc.float32)
    tmp = calc.get_with_offset(8, 2 * t.cols_padded * 4, asc.float32)
    for r0 in range(0, nrows, t.tile_rows):
        n = min(t.tile_rows, nrows - r0)
        lx = qx.alloc_tensor(x.dtype)
        load_rows(lx, xg[r0 * t.cols:], n, t.cols)
        qx.enque(lx)
        lx = qx.deque(x.dtype)
        lz = qz.alloc_tensor(z.dtype)
        for j in range(n):
            src = lx[j * t.cols_padded:]
            dst = lz[j * t.cols_padded:]
            if x.dtype == asc.float32:
                asc.muls(row, src, 1.0, t.cols)
            else:
                to_float(row, src, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            peak = row_max(work, tmp, row, t.cols)
            asc.adds(row, row, -peak, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.exp(row, row, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            total = row_sum(work, tmp, row, t.cols)
            if x.dtype == asc.float32:
                asc.muls(dst, row, 1.0 / total, t.cols)
            else:
                asc.muls(row, row, 1.0 / total, t.cols)
                asc.pipe_barrier(asc.PipeID.PIPE_V)
                from_float(dst, row, t.cols)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
        qz.enque(lz)
        qx.free_tensor(lx)
        lz = qz.deque(z.dtype)
        store_rows(zg[r0 * t.cols:], lz, n, t.cols)
        qz.free_tensor(lz)


def softmax(x: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """Softmax over the last axis of a 2-D array, on the emulated NPU."""
    check_arrays("softmax", x=x)
    if x.ndim != 2:
        raise LaunchError(f"softmax expects a 2-D (rows, cols) array, got shape {x.shape}")
    z = np.empty_like(x) if out is None else out
    size = kernel_dtype(x).sizeof()
    # UB: input and output tiles, two float32 work rows, 32-byte temporaries
    launch_rows(softmax_kernel, (x,), z, tile_bytes_per_element=2 * size, scratch_bytes_per_col=8, fixed_bytes=96,
                **launch)
    return z


def reference(x: np.ndarray) -> np.ndarray:
    a = x.astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(x.dtype)
