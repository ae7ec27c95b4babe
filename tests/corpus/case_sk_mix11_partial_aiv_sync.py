"""SuperKernel: a MIX_AIC_1_1 sub-kernel that lets only AIV sub-block 0 set the AIC's mode-2 flag, in a
1:2 SuperKernel.

Fused with a sub-kernel that needs more AIVs, the SuperKernel is MIX_AIC_1_2:
each AIC of the 1:1 sub-kernel now has two AIVs, and its mode-2 counter
counts only when both have set.  AIV 1 never sets: the AIC waits forever.
The fix has every AIV take part.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import DeadlockError

from superkernel_kernels import mix_kernel, probe_kernel

EXPECT = (DeadlockError, "MIX 1:1 in a 1:2 SuperKernel")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    out, filler = np.zeros(128 * 16, np.int32), np.zeros(64 * 16, np.int32)
    sk.combine([sk.Launch(mix_kernel, 2, (out, 0, 1, int(fixed)), launch, name="x"),
                sk.Launch(probe_kernel, 5, (filler, 0, 0), launch, name="wide")]).run()
    assert out.reshape(-1, 16)[:4, 0].tolist() == [1, 2, 3, 4]
