"""RMSNorm over the last axis: ``x / sqrt(mean(x**2) + eps) * gamma``, per row."""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._host import LaunchError, check_arrays, kernel_dtype, launch_rows
from npuemu.kernels._norm import norm_kernel
from npuemu.tiling.rows import RowTiling

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def rmsnorm_kernel(x: asc.GlobalAddress, gamma: asc.GlobalAddress, z: asc.GlobalAddress, t: RowTiling):
    """The LayerNorm body without centring; gamma stands in for the unused beta."""
    norm_kernel(x, gamma, gamma, z, t, False)


def rmsnorm(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-6, out: np.ndarray | None = None,
            **launch: Any) -> np.ndarray:
    """RMSNorm of a 2-D array over its last axis, on the emulated NPU."""
    check_arrays("rmsnorm", x=x, gamma=gamma)
    if x.ndim != 2 or gamma.shape != (x.shape[1],):
        raise LaunchError(f"rmsnorm expects x (rows, cols) and gamma (cols,), got shapes {x.shape} and "
                          f"{gamma.shape}")
    z = np.empty_like(x) if out is None else out
    size = kernel_dtype(x).sizeof()
    # UB as layernorm's
    launch_rows(rmsnorm_kernel, (x, gamma), z, tile_bytes_per_element=2 * size, scratch_bytes_per_col=24,
                fixed_bytes=96, eps=eps, **launch)
    return z


def reference(x: np.ndarray, gamma: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    a = x.astype(np.float64)
    r = a / np.sqrt((a * a).mean(axis=1, keepdims=True) + eps) * gamma.astype(np.float64)
    return r.astype(x.dtype)
