"""SuperKernel: a sub-kernel's scalar write, never cleaned, read by DMA in the next sub-kernel on another core.

A sub-kernel gets no end-of-kernel DCache flush inside a SuperKernel, and an
element assignment ``x[0] = v`` (Ascend C's ``x(0) = v``) never cleans its
line: it stays dirty in core 0's DCache, and the reader's DMA on core 1 reads
the old value.  The fix names the writer in ``dcci-after-kernel-end``: the
whole DCache is cleaned after its call.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DCacheError

from superkernel_kernels import dcache_kernel

EXPECT = (DCacheError, "stale DMA read")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    x, out = np.arange(16, dtype=np.int32) + 5, np.zeros(16, np.int32)
    sk.combine([sk.Launch(dcache_kernel, 2, (x, out, 3, 77, 0), launch, name="writer"),
                sk.Launch(dcache_kernel, 2, (x, out, 1, 0, 0), launch, name="reader")],
               "dcci-after-kernel-end=writer" if fixed else None).run()
    assert out[0] == 77
