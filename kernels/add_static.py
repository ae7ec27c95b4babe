"""``z = x + y`` with static UB tensors and hand-placed hardware syncs (no TPipe).

The manual counterpart of ``kernels/add.py``: three UB regions, each split
into two halves used alternately (``b = i % 2``).  Event flags carry the
dependencies the queues would otherwise handle:

* MTE2_V  - tile i's inputs have arrived before the vector unit reads them;
* V_MTE3  - the sum is complete before MTE3 copies it out;
* V_MTE2  - the vector unit has finished reading buffer ``b`` before MTE2
  overwrites it with tile i + 2;
* MTE3_V  - MTE3 has copied buffer ``b`` out before the vector unit overwrites
  it with tile i + 2's sum.

The last two tiles' V_MTE2/MTE3_V flags are waited for after the loop, so no
flag is left set when the kernel ends.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._host import check_same, launch_elementwise
from npuemu.kernels._stream import core_tiles, global_slice, load, store, tile_extent
from npuemu.tiling.elementwise import ElementwiseTiling

DTYPES = ("float32", "float16")


@asc.jit
def add_static_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling):
    start, length, full, tile_len, last_len = core_tiles(t)
    buf_len = max(tile_len, last_len)
    xg = global_slice(x, start, length)
    yg = global_slice(y, start, length)
    zg = global_slice(z, start, length)
    region = 2 * buf_len * x.dtype.sizeof()
    lx = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, 2 * buf_len)
    ly = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, region, 2 * buf_len)
    lz = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 2 * region, 2 * buf_len)
    tiles = full + (1 if last_len > 0 else 0)
    for i in range(tiles):
        b = i % 2
        off, count = tile_extent(i, full, tile_len, last_len, length)
        half = b * buf_len
        if i >= 2:
            asc.wait_flag(asc.HardEvent.V_MTE2, b)
        load(lx[half:], xg[off:], count)
        load(ly[half:], yg[off:], count)
        asc.set_flag(asc.HardEvent.MTE2_V, b)
        asc.wait_flag(asc.HardEvent.MTE2_V, b)
        if i >= 2:
            asc.wait_flag(asc.HardEvent.MTE3_V, b)
        asc.add(lz[half:], lx[half:], ly[half:], count)
        asc.set_flag(asc.HardEvent.V_MTE2, b)
        asc.set_flag(asc.HardEvent.V_MTE3, b)
        asc.wait_flag(asc.HardEvent.V_MTE3, b)
        store(zg[off:], lz[half:], count)
        asc.set_flag(asc.HardEvent.MTE3_V, b)
    for k in range(max(0, tiles - 2), tiles):
        asc.wait_flag(asc.HardEvent.V_MTE2, k % 2)
        asc.wait_flag(asc.HardEvent.MTE3_V, k % 2)


def add_static(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``x + y`` computed by :func:`add_static_kernel` on the emulated NPU."""
    check_same("add_static", x=x, y=y)
    z = np.empty_like(x) if out is None else out
    launch_elementwise(add_static_kernel, (x, y, z), **launch)
    return z


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return x + y
