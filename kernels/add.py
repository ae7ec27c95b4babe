"""Elementwise ``z = x + y``: the double-buffered TPipe/TQue pipeline of the Ascend C samples.

CopyIn (MTE2) -> Compute (V) -> CopyOut (MTE3), with two buffers per queue so
that the next tile's copy overlaps this tile's compute on hardware.  float16
and float32 add directly; bfloat16 (which Add does not take on A2) widens to
float32, adds and rounds back, as production kernels do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._stream import core_slice, from_float, load_tile, store_tile, to_float
from npuemu.kernels._host import bf16_reference, check_same, launch_elementwise
from npuemu.tiling.elementwise import ElementwiseTiling

BUFFER_NUM = 2


@asc.jit
def add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling):
    start, length = core_slice(t.total, t.block_len)
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
    pipe.init_buffer(qx, BUFFER_NUM, t.tile_len * x.dtype.sizeof())
    pipe.init_buffer(qy, BUFFER_NUM, t.tile_len * y.dtype.sizeof())
    pipe.init_buffer(qz, BUFFER_NUM, t.tile_len * z.dtype.sizeof())
    if x.dtype == asc.bfloat16:
        calc = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(calc, 2 * t.tile_len * 4)
    for i in range(asc.ceildiv(length, t.tile_len)):
        off = i * t.tile_len
        count = min(t.tile_len, length - off)
        load_tile(qx, xg[off:], count)
        load_tile(qy, yg[off:], count)
        lx = qx.deque(x.dtype)
        ly = qy.deque(y.dtype)
        lz = qz.alloc_tensor(z.dtype)
        if x.dtype == asc.bfloat16:
            fx = calc.get_with_offset(t.tile_len, 0, asc.float32)
            fy = calc.get_with_offset(t.tile_len, t.tile_len * 4, asc.float32)
            to_float(fx, lx, count)
            to_float(fy, ly, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.add(fx, fx, fy, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            from_float(lz, fx, count)
        else:
            asc.add(lz, lx, ly, count)
        qz.enque(lz)
        qx.free_tensor(lx)
        qy.free_tensor(ly)
        store_tile(qz, zg[off:], count)


DTYPES = ("float32", "float16", "bfloat16")


def add(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``x + y`` computed by :func:`add_kernel` on the emulated NPU."""
    check_same("add", x, y)
    z = np.empty_like(x) if out is None else out
    launch_elementwise(add_kernel, (x, y, z), scratch_f32=2, **launch)
    return z


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy result with the kernel's rounding: one rounding to the output dtype."""
    if x.dtype == np.float16 or x.dtype == np.float32:
        return x + y
    return bf16_reference(lambda a, b: a + b, x, y)
