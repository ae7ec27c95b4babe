"""A scalar read hits a DCache line that a DMA has rewritten in GM since it was cached.

The kernel reads ``x[0]`` with ``get_value`` (the core caches x's first
64-byte line), overwrites ``x[0:8]`` from UB by DMA, and reads ``x[0]`` again.
DMA bypasses the DCache, so the second read hits the old line and returns the
old value.  The fix cleans and invalidates the line before reading it again.
"""
from __future__ import annotations

import numpy as np

import npuemu.asc as asc
from npuemu.errors import DCacheError

EXPECT = (DCacheError, "stale read")
LEVELS = ("full",)


@asc.jit
def reread_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, fixed: int):
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x)
    og.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    before = xg.get_value(0)
    asc.duplicate(t, before + 100, 8)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(xg, t, 8)
    asc.set_flag(asc.HardEvent.MTE3_S, 0)
    asc.wait_flag(asc.HardEvent.MTE3_S, 0)
    if fixed:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg, asc.DcciDst.CACHELINE_OUT)
    og.set_value(0, before)
    og.set_value(1, xg.get_value(0))


def run(fixed: bool, **launch) -> np.ndarray:
    x = np.arange(16, dtype=np.int32) * 3 + 5
    out = np.zeros(2, np.int32)
    reread_kernel[1](x, out, int(fixed), **launch)
    if fixed:
        np.testing.assert_array_equal(out, [5, 105])
        np.testing.assert_array_equal(x[:8], 105)
    return out
