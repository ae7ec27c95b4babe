"""LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * gamma + beta``, per row."""
from __future__ import annotations

from typing import Any

import numpy as np

from npuemu.kernels._host import LaunchError, check_arrays, kernel_dtype, launch_rows
from npuemu.kernels._norm import norm_kernel

DTYPES = ("float32", "float16", "bfloat16")


def layernorm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5,
              out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """LayerNorm of a 2-D array over its last axis, on the emulated NPU."""
    check_arrays("layernorm", x=x, gamma=gamma, beta=beta)
    if x.ndim != 2 or gamma.shape != (x.shape[1],) or beta.shape != gamma.shape:
        raise LaunchError(f"layernorm expects x (rows, cols), gamma (cols,), beta (cols,), got shapes {x.shape}, "
                          f"{gamma.shape}, {beta.shape}")
    z = np.empty_like(x) if out is None else out
    size = kernel_dtype(x).sizeof()
    # UB: input and output tiles, six float32 work rows (row, square, work, gamma, beta, raw), temporaries
    launch_rows(norm_kernel, (x, gamma, beta), z, True, tile_bytes_per_element=2 * size, scratch_bytes_per_col=24,
                fixed_bytes=96, eps=eps, **launch)
    return z


def reference(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    a = x.astype(np.float64)
    mean = a.mean(axis=1, keepdims=True)
    var = ((a - mean) ** 2).mean(axis=1, keepdims=True)
    r = (a - mean) / np.sqrt(var + eps) * gamma.astype(np.float64) + beta.astype(np.float64)
    return r.astype(x.dtype)
