"""Elementwise ``z = x * y`` (float16 and float32 natively; bfloat16 via float32)."""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._elementwise import binary_kernel
from npuemu.kernels._host import bf16_reference, check_same, launch_elementwise

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def mul_tile(dst: asc.LocalTensor, a: asc.LocalTensor, b: asc.LocalTensor, alpha: float, count: int):
    asc.mul(dst, a, b, count)


def mul(x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``x * y`` on the emulated NPU."""
    check_same("mul", x=x, y=y)
    z = np.empty_like(x) if out is None else out
    launch_elementwise(binary_kernel, (x, y, z), 0.0, mul_tile, False, scratch_f32=3, **launch)
    return z


def reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype in (np.float16, np.float32):
        return x * y
    return bf16_reference(lambda a, b: a * b, x, y)
