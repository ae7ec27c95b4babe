"""SuperKernel: a sub-kernel leaves cross-core flag 14 counting, the flag of the inter-kernel barriers.

Flags 11-14 are the ones CANN's inter-kernel barriers and SyncAll use.  A
sub-kernel that sets flag 14 on every core and never waits for it leaves a
count that, on hardware, lets the next inter-kernel barrier pass before the
other cores reach it.  The fix waits for its own set.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import SyncError

from superkernel_kernels import probe_kernel

EXPECT = (SyncError, "flags 11-14 are also the SuperKernel's inter-kernel barrier flags")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    out = np.zeros(128 * 16, np.int32)
    sk.combine([sk.Launch(probe_kernel, 2, (out, 0, 4 if fixed else 3), launch, name="setter"),
                sk.Launch(probe_kernel, 2, (out, 1, 0), launch, name="next")]).run()
    lines = out.reshape(-1, 16)
    assert lines[[0, 1, 64, 65], 2].tolist() == [1, 2, 1, 2]
