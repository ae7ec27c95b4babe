"""An L0A tensor placed 256 bytes into L0A: load_data/mmad operands must be 512-byte aligned."""
from __future__ import annotations

import numpy as np

import npuemu.asc as asc
from npuemu.errors import AlignmentError

EXPECT = (AlignmentError, "starts at byte 256 of L0A, which is not 512-byte aligned")
LEVELS = ("off", "default", "full")


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def square_kernel(a: asc.GlobalAddress, c: asc.GlobalAddress, a2_addr: int):
    """C = A @ A^T for a 16 x 16 float16 A (A^T comes free: A's NZ fractal is B's ZN fractal)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, a2_addr, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
    asc.load_data(b2, a1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 16))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(16, 16, 16, 16))


def run(fixed: bool, **launch) -> None:
    a = (np.arange(256, dtype=np.float32).reshape(16, 16) / 128).astype(np.float16)
    c = np.zeros((16, 16), np.float32)
    square_kernel[1](a, c, 0 if fixed else 256, **launch)
    ref = a.astype(np.float64) @ a.astype(np.float64).T
    np.testing.assert_allclose(c, ref, rtol=1e-5)
