"""SuperKernel: TPipe.destroy() loses its PIPE_ALL barrier, and the next TPipe reuses the same UB.

In a SuperKernel's sub-kernel ``destroy()`` does not end with
``PipeBarrier<PIPE_ALL>``: the first TPipe's last MTE3 read of a UB buffer
is still unordered with the second TPipe's vector write of the same bytes (a
UB race; the same kernel launched alone is clean).  The fix inserts the
barrier after ``destroy()``.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import RaceError

from superkernel_kernels import two_pipes_kernel

EXPECT = (RaceError, "UB")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    x, y = np.arange(16, dtype=np.int32) + 1, np.zeros(16, np.int32)
    sk.combine([sk.Launch(two_pipes_kernel, 1, (x, y, int(fixed)), launch, name="pipes")]).run()
    np.testing.assert_array_equal(y, [*range(1, 9), *[7] * 8])
