"""SuperKernel: set_next_task_start called under one tiling key only.

The sub-kernel's source calls ``set_next_task_start``, so the SuperKernel
gives its active cores no complement set; launched with a tiling key whose
branch does not call it, the next sub-kernel's wait never completes (a hang
on hardware).  The fix launches the key whose branch calls it (or calls it
in every branch).
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DeadlockError

from superkernel_kernels import early_kernel

EXPECT = (DeadlockError, "early-start count mismatch")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    x, y, z = np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32)
    a = sk.Launch(early_kernel, 2, (x, y, 1, 0, 0), {**launch, "tiling_key": 1 if fixed else 2}, name="a")
    b = sk.Launch(early_kernel, 2, (y, z, 0, 1, 0), {**launch, "tiling_key": 1}, name="b")
    sk.combine([a, b]).run()
    np.testing.assert_array_equal(z, x)
