"""Fuse RMSNorm -> MatMul -> GELU into one SuperKernel and compare with separate launches.

Run: ``python examples/superkernel_chain.py``.  The scope records the three
launches (nothing runs inside the block) and runs them as one SuperKernel
when the block ends; the results are bit-identical to the separate launches.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel
from npuemu.kernels import gelu, matmul, rmsnorm


def main() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    w = rng.standard_normal((64, 48)).astype(np.float32)

    separate = gelu.gelu(matmul.matmul(rmsnorm.rmsnorm(x, gamma), w))

    y, z, out = np.empty((32, 64), np.float32), np.empty((32, 48), np.float32), np.empty((32, 48), np.float32)
    with superkernel.scope("norm_mm_gelu", "early-start=1:feed-sync-all=1") as s:
        rmsnorm.rmsnorm(x, gamma, out=y)
        matmul.matmul(y, w, out=z)
        gelu.gelu(z, out=out)
    fused = s.superkernel
    print(f"SuperKernel {fused.name}: {fused.kernel_type.name}, block dim {fused.block_dim}")
    for sub in fused.subs:
        print(f"  {sub.label}: {sub.kernel_type.name} on {sub.block_dim} blocks")
    assert out.tobytes() == separate.tobytes()
    print("bit-identical to the separate launches")


if __name__ == "__main__":
    main()
