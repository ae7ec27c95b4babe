"""SuperKernel: an instruction after set_next_task_start writes data the next sub-kernel reads.

What a core issues after ``set_next_task_start`` overlaps the next
sub-kernel: sub-kernel a writes ``y`` again after its set, and sub-kernel b
reads ``y`` (after its ``wait_pre_task_end``), so the read may see the old or
the new data (a precision error on hardware).  The fix moves the set after
the last data move.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import RaceError

from superkernel_kernels import early_kernel

EXPECT = (RaceError, "asc.data_copy(yg, t, 8)")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    x, y, z = np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32)
    a = sk.Launch(early_kernel, 2, (x, y, 1, 0, 0 if fixed else 1), {**launch, "tiling_key": 1}, name="a")
    b = sk.Launch(early_kernel, 2, (y, z, 0, 1, 0), {**launch, "tiling_key": 1}, name="b")
    sk.combine([a, b]).run()
    np.testing.assert_array_equal(z, x)
