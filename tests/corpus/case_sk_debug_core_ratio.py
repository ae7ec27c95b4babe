"""SuperKernel: debug-aic-num / debug-aiv-num in a ratio no SuperKernel type has (CANN: compile error).

12 AICs with 20 AIVs is neither n:0, 0:n, n:n nor n:2n.  The fix asks for
12:24 (a MIX_AIC_1_2 SuperKernel of 12 blocks).
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import SuperKernelError

from superkernel_kernels import probe_kernel

EXPECT = (SuperKernelError, "ratio 12:20 is invalid")
LEVELS = ("default",)


def run(fixed: bool, **launch) -> None:
    out = np.zeros(64 * 16, np.int32)
    s = sk.combine([sk.Launch(probe_kernel, 2, (out, 0, 0), launch, name="a")],
                   f"debug-aic-num=12:debug-aiv-num={24 if fixed else 20}")
    assert (s.kernel_type.name, s.block_dim) == ("MIX_AIC_1_2", 12)
    s.run()
    assert out.reshape(-1, 16)[:2, :2].tolist() == [[2, 12], [2, 12]]     # own block num, the SK's raw one
