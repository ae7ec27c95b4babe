"""A DMA writes into a 64-byte line the core holds dirty: the line's write-back loses the DMA data.

The kernel writes a header word ``x[0]`` with ``set_value`` and the payload
``x[8:16]`` by DMA.  Both are in x's first 64-byte line, which is dirty in
the DCache when the DMA lands; the flush at the end of the kernel writes the
whole line back, restoring the payload's old bytes.  The fix cleans the line
after the scalar write (keeping header and payload on separate lines works
too).
"""
from __future__ import annotations

import numpy as np

import npuemu.asc as asc
from npuemu.errors import DCacheError

EXPECT = (DCacheError, "lost write")
LEVELS = ("full",)


@asc.jit
def header_payload_kernel(x: asc.GlobalAddress, fixed: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf, 32)
    t = buf.get(asc.int32)
    xg.set_value(0, 8)
    if fixed:
        asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, xg)
    asc.duplicate(t, 7, 8)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.set_flag(asc.HardEvent.S_MTE3, 0)       # the scalar side is done with x before the DMA writes it
    asc.wait_flag(asc.HardEvent.S_MTE3, 0)
    asc.data_copy(xg[8:], t, 8)


def run(fixed: bool, **launch) -> np.ndarray:
    x = np.arange(32, dtype=np.int32) + 100
    header_payload_kernel[1](x, int(fixed), **launch)
    if fixed:
        want = np.arange(32, dtype=np.int32) + 100
        want[0], want[8:16] = 8, 7
        np.testing.assert_array_equal(x, want)
    return x
