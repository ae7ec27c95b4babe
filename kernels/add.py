"""Elementwise ``z = x + y``: the double-buffered TPipe/TQue pipeline of the Ascend C samples.

CopyIn (MTE2) -> Compute (V) -> CopyOut (MTE3), with two buffers per queue so
that the next tile's copy overlaps this tile's compute on hardware.  float16
and float32 add directly (tiling key ``KEY_NATIVE``); bfloat16 (which Add does
not take on A2) widens to float32, adds and rounds back, as production kernels
do (tiling key ``KEY_WIDEN``, chosen by the host and tested with
``asc.tiling_key_is``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._host import bf16_reference, check_same, kernel_dtype, launch_elementwise
from npuemu.kernels._stream import core_tiles, from_float, load_tile, store_tile, tile_extent, to_float
from npuemu.tiling.elementwise import BUFFER_NUM, KEY_NATIVE, KEY_WIDEN, ElementwiseTiling


@asc.jit
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling):
    start, length, tiles, tile_len, last_len = core_tiles(t)
    buf_len = max(tile_len, last_len)
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x + start, length)
    yg.set_global_buffer(y + start, length)
    zg.set_global_buffer(z + start, length)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qy = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(qx, BUFFER_NUM, buf_len * x.dtype.sizeof())
    pipe.init_buffer(qy, BUFFER_NUM, buf_len * y.dtype.sizeof())
    pipe.init_buffer(qz, BUFFER_NUM, buf_len * z.dtype.sizeof())
    if asc.tiling_key_is(KEY_WIDEN):
        calc = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(calc, 2 * buf_len * 4)
    for i in range(tiles + (1 if last_len > 0 else 0)):
        off, count = tile_extent(i, tiles, tile_len, last_len, length)
        load_tile(qx, xg[off:], count)
        load_tile(qy, yg[off:], count)
        lx = qx.deque(x.dtype)
        ly = qy.deque(y.dtype)
        lz = qz.alloc_tensor(z.dtype)
        if asc.tiling_key_is(KEY_WIDEN):
            fx = calc.get_with_offset(buf_len, 0, asc.float32)
            fy = calc.get_with_offset(buf_len, buf_len * 4, asc.float32)
            to_float(fx, lx, count)
            to_float(fy, ly, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.add(fx, fx, fy, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            from_float(lz, fx, count)
        if asc.tiling_key_is(KEY_NATIVE):
            asc.add(lz, lx, ly, count)
        qz.enque(lz)
        qx.free_tensor(lx)
        qy.free_tensor(ly)
        store_tile(qz, zg[off:], count)


DTYPES = ("float32", "float16", "bfloat16")


def add(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``x + y`` computed by :func:`add_kernel` on the emulated NPU."""
    check_same("add", x=x, y=y)
    z = np.empty_like(x) if out is None else out
    # bfloat16 takes the kernel's widening branch (tiling key KEY_WIDEN)
    launch_elementwise(add_kernel, (x, y, z), scratch_f32=2, widen=kernel_dtype(x).name == "bfloat16", **launch)
    return z


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy result with the kernel's rounding: one rounding to the output dtype."""
    if x.dtype == np.float16 or x.dtype == np.float32:
        return x + y
    return bf16_reference(lambda a, b: a + b, x, y)
