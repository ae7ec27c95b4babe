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
from npuemu.kernels._host import kernel_dtype
from npuemu.kernels._rows import core_rows, load_rows, read_scalar
from npuemu.kernels._stream import global_slice, store, to_float
from npuemu.tiling.rows import RowTiling, row_tiling

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def reduce_sum_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, t: RowTiling):
    first, nrows = core_rows(t.rows, t.rows_per_core)
    xg = global_slice(x, first * t.cols, nrows * t.cols)
    zg = global_slice(z, first, nrows)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, 1)
    qz = asc.TQue(asc.TPosition.VECOUT, 1)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    cp = t.cols_padded
    pipe.init_buffer(qx, 1, t.tile_rows * cp * x.dtype.sizeof())
    pipe.init_buffer(qz, 1, t.tile_rows * z.dtype.sizeof() + 32)
    if x.dtype == asc.bfloat16:
        pipe.init_buffer(calc, 2 * cp * 4 + 32)
        row = calc.get_with_offset(cp, 0, asc.float32)
        work = calc.get_with_offset(cp, cp * 4, asc.float32)
        tmp = calc.get_with_offset(8, 2 * cp * 4, asc.float32)
    else:
        pipe.init_buffer(calc, cp * x.dtype.sizeof() + 32)
        work = calc.get_with_offset(cp, 0, x.dtype)
        tmp = calc.get_with_offset(32 // x.dtype.sizeof(), cp * x.dtype.sizeof(), x.dtype)
    for r0 in range(0, nrows, t.tile_rows):
        n = min(t.tile_rows, nrows - r0)
        lx = qx.alloc_tensor(x.dtype)
        load_rows(lx, xg[r0 * t.cols:], n, t.cols)
        qx.enque(lx)
        lx = qx.deque(x.dtype)
        lz = qz.alloc_tensor(z.dtype)
        for j in range(n):
            if x.dtype == asc.bfloat16:
                to_float(row, lx[j * cp:], t.cols)
                asc.pipe_barrier(asc.PipeID.PIPE_V)
                asc.reduce_sum(tmp, row, work, t.cols)
            else:
                asc.reduce_sum(tmp, lx[j * cp:], work, t.cols)
            total = read_scalar(tmp)
            lz.set_value(j, total)
        asc.set_flag(asc.HardEvent.S_MTE3, 0)
        asc.wait_flag(asc.HardEvent.S_MTE3, 0)
        qx.free_tensor(lx)
        store(zg[r0:], lz, n)
        qz.free_tensor(lz)


def reduce_sum(x: np.ndarray, out: np.ndarray | None = None, *, core_num: int | None = None,
               **launch: Any) -> np.ndarray:
    """Sum over the last axis of a 2-D array, on the emulated NPU."""
    if x.ndim != 2:
        raise ValueError("reduce_sum expects a 2-D (rows, cols) array")
    z = np.empty(x.shape[0], x.dtype) if out is None else out
    size = kernel_dtype(x).sizeof()
    tiling, cores = row_tiling(x.shape[0], x.shape[1], size, size, fixed_ub_bytes=3 * (x.shape[1] + 16) * 4 + 64,
                               platform=launch.get("platform"), max_cores=core_num)
    reduce_sum_kernel[cores](x, z, tiling, **launch)
    return z


def reference(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64).sum(axis=1).astype(x.dtype)
