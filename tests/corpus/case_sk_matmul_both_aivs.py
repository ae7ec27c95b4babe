"""SuperKernel: a MIX_AIC_1_1 sub-kernel using the Matmul API from every AIV, in a 1:2 SuperKernel.

Fused with a sub-kernel that needs more AIVs, the SuperKernel is MIX_AIC_1_2
and both AIVs of the AI Core run the 1:1 sub-kernel's vector body.  Its AIC's
Matmul server was built for one AIV and answers only AIV0's messages: AIV1's
request is never received, a hang on hardware.  The fix calls the Matmul API
from AIV0 only.
"""
from __future__ import annotations

import numpy as np

from npuemu import asc
from npuemu import superkernel as sk
from npuemu.errors import DeadlockError

from superkernel_kernels import matmul11_kernel, probe_kernel

EXPECT = (DeadlockError, "Matmul API called from AIV1")
LEVELS = ("default", "full")


def run(fixed: bool, **launch) -> None:
    m, n, k = 16, 32, 32
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 4, (m, k)).astype(np.float16)
    b = rng.integers(-4, 4, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    t = asc.adv.TCubeTiling(used_core_num=1, m=m, n=n, k_a=k, k_b=k, single_core_m=m, single_core_n=n,
                            single_core_k=k, base_m=16, base_n=32, base_k=32, depth_a1=1, depth_b1=1, step_m=1,
                            step_n=1, step_k_a=1, step_k_b=1)
    ws = np.zeros(2 * (512 + 128 * 1024), np.uint8)
    filler = np.zeros(64 * 16, np.int32)
    sk.combine([sk.Launch(matmul11_kernel, 1, (a, b, c, t, ws, int(fixed)), launch, name="mm"),
                sk.Launch(probe_kernel, 3, (filler, 0, 0), launch, name="wide")]).run()
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
