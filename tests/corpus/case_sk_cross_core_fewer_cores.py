"""SuperKernel: a full-core sync built from mode-0 cross-core flags on fewer blocks than the SuperKernel.

feed-sync-all complements only ``sync_all``; a mode-0
``cross_core_set_flag``/``cross_core_wait_flag`` full sync completes only when
every AIV of the SuperKernel has set, which the idle blocks never do.  The
fix launches the sub-kernel on all of the SuperKernel's blocks.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DeadlockError

from superkernel_kernels import probe_kernel

EXPECT = (DeadlockError, "feed-sync-all does not complement cross-core flags")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    out = np.zeros(2 * 64 * 16, np.int32)
    sk.combine([sk.Launch(probe_kernel, 4, (out, 0, 0), launch, name="a"),
                sk.Launch(probe_kernel, 4 if fixed else 2, (out, 1, 2), launch, name="b")],
               "feed-sync-all=1").run()
    assert out.reshape(-1, 16)[64, 0] == 4
