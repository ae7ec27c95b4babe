"""SuperKernel: a sub-kernel whose source calls wait_pre_task_end skips the call on its cores.

Its active cores get no complement wait, so the previous sub-kernel's set
stays counted: a later barrier passes early or the counter overflows.  The
fix calls it once on every core.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import SyncError

from superkernel_kernels import early_kernel

EXPECT = (SyncError, "calls wait_pre_task_end")
LEVELS = ("default",)          # at full the first read is already a race with the previous sub-kernel


def run(fixed: bool, **launch) -> None:
    x, y, z = np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32)
    a = sk.Launch(early_kernel, 2, (x, y, 1, 0, 0), {**launch, "tiling_key": 1}, name="a")
    b = sk.Launch(early_kernel, 2, (y, z, 0, 1 if fixed else 0, 0), {**launch, "tiling_key": 1}, name="b")
    sk.combine([a, b]).run()
    np.testing.assert_array_equal(z, x)
