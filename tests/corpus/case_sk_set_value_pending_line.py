"""SuperKernel: set_value's last line stays in the DCache while its GlobalTensor lives.

In a sub-kernel, set_value cleans the line the same GlobalTensor wrote last
when it writes another one, and the last one when the GlobalTensor dies.
Core 0 writes ``x[0]`` and then ``w[0]`` through another GlobalTensor: x's
line is still dirty in its DCache when core 1 reads ``x`` by DMA after
``sync_all``, and gets the old value.  The fix cleans x's line itself.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DCacheError

from superkernel_kernels import two_tensor_kernel

EXPECT = (DCacheError, "stale DMA read")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    x, w, out = np.arange(16, dtype=np.int32) + 5, np.zeros(16, np.int32), np.zeros(8, np.int32)
    sk.combine([sk.Launch(two_tensor_kernel, 2, (x, w, out, 70, int(fixed)), launch, name="pair")]).run()
    assert out[0] == 70 and x[0] == 70 and w[0] == 71
