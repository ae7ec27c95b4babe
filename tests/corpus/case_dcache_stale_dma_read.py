"""``set_value`` then ``data_copy`` of the same GM without ``data_cache_clean_and_invalid``.

The kernel bumps ``x[0]`` with a scalar write, which stays in the core's
DCache, then copies ``x`` to ``out`` by DMA.  DMA reads GM, which still holds
the old value; the fix cleans the line after the scalar write.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import DCacheError

EXPECT = (DCacheError, "stale DMA read")
LEVELS = ("full",)


@asc.jit
def bump_and_copy_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, fixed: int):
    xg = asc.GlobalTensor()
    og = asc.GlobalTensor()
    xg.set_global_buffer(x)
    og.set_global_buffer(out)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    xg.set_value(0, xg.get_value(0) + 1)
    if fixed:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg)
    asc.set_flag(asc.HardEvent.S_MTE2, 0)
    asc.wait_flag(asc.HardEvent.S_MTE2, 0)
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(og, t, 8)


def dma_declared() -> bool:
    """Whether data_copy declares its GM accesses to the full-level checks (checks.gm_access)."""
    binaries = bump_and_copy_kernel.binaries()
    return any("gm_access" in b.source for b in binaries if "check=full" in b.source)


def run(fixed: bool, **launch) -> np.ndarray:
    x = np.arange(8, dtype=np.int32) + 10
    out = np.zeros(8, np.int32)
    bump_and_copy_kernel[1](x, out, int(fixed), **launch)
    if fixed:
        want = np.arange(8, dtype=np.int32) + 10
        want[0] += 1
        np.testing.assert_array_equal(out, want)
    elif launch.get("check") == "full" and not dma_declared():
        pytest.skip("data_copy does not declare its GM accesses to checks.gm_access yet")
    return out
