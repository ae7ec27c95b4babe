"""Elementwise type conversion ``z = cast(x)`` with an explicit rounding mode.

The conversions a bundled kernel is tested with are the ones model code needs:
float32 <-> float16, float32 <-> bfloat16, float16 -> float32 and
float32 -> int32 (any RoundMode the instruction accepts for the pair).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._host import LaunchError, check_arrays, kernel_dtype, launch_elementwise
from npuemu.kernels._stream import core_tiles, global_slice, load_tile, store_tile, tile_extent
from npuemu.tiling.elementwise import BUFFER_NUM, ElementwiseTiling

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def cast_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling, mode: asc.ConstExpr):
    start, length, tiles, tile_len, last_len = core_tiles(t)
    buf_len = max(tile_len, last_len)
    xg = global_slice(x, start, length)
    zg = global_slice(z, start, length)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(qx, BUFFER_NUM, buf_len * x.dtype.sizeof())
    pipe.init_buffer(qz, BUFFER_NUM, buf_len * z.dtype.sizeof())
    for i in range(tiles + (1 if last_len > 0 else 0)):
        off, count = tile_extent(i, tiles, tile_len, last_len, length)
        load_tile(qx, xg[off:], count)
        lx = qx.deque(x.dtype)
        lz = qz.alloc_tensor(z.dtype)
        asc.cast(lz, lx, mode, count)
        qz.enque(lz)
        qx.free_tensor(lx)
        store_tile(qz, zg[off:], count)


@asc.jit
def cast_op_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling):
    """:func:`cast_kernel` rounding to nearest even (the op library's Cast).

    The rounding mode is chosen here from the dtypes, which fix the binary:
    conversions to float32 take CAST_NONE (exact, or rounding as RINT from
    int32), the others CAST_RINT.
    """
    if z.dtype == asc.float32:
        cast_kernel(x, z, t, asc.RoundMode.CAST_NONE)
    else:
        cast_kernel(x, z, t, asc.RoundMode.CAST_RINT)


def cast(x: np.ndarray, dtype: Any, round_mode: asc.RoundMode = asc.RoundMode.CAST_RINT,
         out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``x`` converted to ``dtype`` (a NumPy dtype, incl. ml_dtypes.bfloat16) on the emulated NPU."""
    check_arrays("cast", x=x)
    z = np.empty(x.shape, dtype) if out is None else out
    if kernel_dtype(x) == kernel_dtype(z):
        raise LaunchError("cast needs different source and destination dtypes")
    launch_elementwise(cast_kernel, (x, z), asc.RoundMode(round_mode), **launch)
    return z


def reference(x: np.ndarray, dtype: Any) -> np.ndarray:
    """Round-to-nearest-even conversion (NumPy's) of the exact values."""
    if np.dtype(dtype).kind in "iu":
        return np.rint(x.astype(np.float64)).astype(dtype)
    return x.astype(np.float32).astype(dtype) if x.dtype != np.float64 else x.astype(dtype)
