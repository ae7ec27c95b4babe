"""Copying a whole tile past the end of the input array (the tail is not handled)."""
from __future__ import annotations

import numpy as np

import npuemu.asc as asc
from npuemu.errors import BoundsError

EXPECT = (BoundsError, "outside GM argument 'x'")
LEVELS = ("off", "default", "full")


@asc.jit
def copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, tile: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    zg.set_global_buffer(z)
    pipe = asc.TPipe()
    q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 1)     # MTE2 -> MTE3 through the queue
    pipe.init_buffer(q, 1, tile * 4)
    for i in range(0, n, tile):
        t = q.alloc_tensor(asc.float32)
        asc.data_copy(t, xg[i:], tile)
        q.enque(t)
        u = q.deque(asc.float32)
        asc.data_copy(zg[i:], u, tile)
        q.free_tensor(u)


def run(fixed: bool, **launch) -> None:
    n = 1000 if fixed else 1000 + 8          # the broken launch claims 8 elements the arrays do not have
    x = np.arange(1000, dtype=np.float32)
    z = np.zeros(1000, np.float32)
    copy_kernel[1](x, z, n, 8, **launch)
    np.testing.assert_array_equal(z, x)
