"""Elementwise ``z = max(x, 0)`` (float16 and float32 natively; bfloat16 via float32)."""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._elementwise import unary_kernel
from npuemu.kernels._host import bf16_reference, check_arrays, launch_elementwise

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def relu_tile(dst: asc.LocalTensor, src: asc.LocalTensor, alpha: float, count: int):
    asc.relu(dst, src, count)


def relu(x: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``max(x, 0)`` on the emulated NPU."""
    check_arrays("relu", x=x)
    z = np.empty_like(x) if out is None else out
    launch_elementwise(unary_kernel, (x, z), 0.0, relu_tile, False, scratch_f32=2, **launch)
    return z


def reference(x: np.ndarray) -> np.ndarray:
    if x.dtype in (np.float16, np.float32):
        return np.maximum(x, np.zeros((), x.dtype))
    return bf16_reference(lambda a: np.maximum(a, 0), x)
