"""SuperKernel: two cores scalar-write bytes 0 and 8 of one 64-byte line.

Each core caches and dirties its own copy of the line; the write-backs as
the sub-kernel returns store whole lines, so the last one wins and the other
core's write is lost.  The fix gives each core its own line.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DCacheError

from superkernel_kernels import dcache_kernel

EXPECT = (DCacheError, "lost write")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    x, out = np.arange(32, dtype=np.int32), np.zeros(16, np.int32)
    stride = 16 if fixed else 2
    sk.combine([sk.Launch(dcache_kernel, 2, (x, out, 2, 40, stride), launch, name="writers")]).run()
    assert x[0] == 40 and x[stride] == 41
