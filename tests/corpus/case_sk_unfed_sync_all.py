"""SuperKernel: a sub-kernel on fewer blocks than the SuperKernel calls sync_all, feed-sync-all off.

Sub-kernel B runs on 2 of the SuperKernel's 4 blocks and calls ``sync_all``,
which waits for every AIV of the SuperKernel; blocks 2-3 never run B, so
blocks 0-1 wait forever (a hang until timeout on hardware).  The fix turns
on feed-sync-all: the idle cores run one complement barrier per sync_all.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DeadlockError

from superkernel_kernels import probe_kernel

EXPECT = (DeadlockError, "full-core sync with fewer cores")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    out = np.zeros(2 * 64 * 16, np.int32)
    s = sk.combine([sk.Launch(probe_kernel, 4, (out, 0, 0), launch, name="a"),
                    sk.Launch(probe_kernel, 2, (out, 1, 1), launch, name="b")],
                   "feed-sync-all=1" if fixed else "feed-sync-all=0")
    r = s.run()
    assert r.complements == [0, 0, 1, 1]
    np.testing.assert_array_equal(out.reshape(-1, 16)[64:66, :3], [[2, 4, 1], [2, 4, 2]])
