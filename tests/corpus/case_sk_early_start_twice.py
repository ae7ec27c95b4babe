"""SuperKernel: set_next_task_start called twice on one core.

Each core must set exactly once; a second set leaves a surplus flag that
leaks into the next inter-kernel barrier or overflows the counter.  The fix
calls it once.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import SyncError

from superkernel_kernels import early_kernel

EXPECT = (SyncError, "set_next_task_start() is called a second time")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    x, y, z = np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32)
    a = sk.Launch(early_kernel, 2, (x, y, 1 if fixed else 2, 0, 0), {**launch, "tiling_key": 1}, name="a")
    b = sk.Launch(early_kernel, 2, (y, z, 0, 1, 0), {**launch, "tiling_key": 1}, name="b")
    sk.combine([a, b]).run()
    np.testing.assert_array_equal(z, x)
