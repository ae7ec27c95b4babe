"""SuperKernel: a MIX_AIC_1_1 sub-kernel whose AIC sets a mode-2 flag that only AIV sub-block 0 waits for,
in a 1:2 SuperKernel.

The AIC's set counts up the flag of both its AIVs; AIV 1 never waits, so its
counter is left counting when the SuperKernel ends (past 15 it would
overflow and abort).  The fix has every AIV wait.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import SyncError

from superkernel_kernels import mix_kernel, probe_kernel

EXPECT = (SyncError, "MIX 1:1 in a 1:2 SuperKernel")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    out, filler = np.zeros(128 * 16, np.int32), np.zeros(64 * 16, np.int32)
    sk.combine([sk.Launch(mix_kernel, 2, (out, 1, 3, int(fixed)), launch, name="x"),
                sk.Launch(probe_kernel, 5, (filler, 0, 0), launch, name="wide")]).run()
    assert out.reshape(-1, 16)[64:66, 0].tolist() == [1, 2]
