"""Elementwise ``z = x if x >= 0 else alpha * x`` (float16/float32 natively; bfloat16 via float32)."""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._elementwise import unary_kernel
from npuemu.kernels._host import bf16_reference, check_arrays, launch_elementwise

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def leaky_relu_tile(dst: asc.LocalTensor, src: asc.LocalTensor, alpha: float, count: int):
    asc.leaky_relu(dst, src, alpha, count)


def leaky_relu(x: np.ndarray, alpha: float = 0.01, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """Leaky ReLU with negative slope ``alpha`` on the emulated NPU."""
    check_arrays("leaky_relu", x=x)
    z = np.empty_like(x) if out is None else out
    launch_elementwise(unary_kernel, (x, z), float(alpha), leaky_relu_tile, False, scratch_f32=2, **launch)
    return z


def reference(x: np.ndarray, alpha: float = 0.01) -> np.ndarray:
    def f(a: np.ndarray) -> np.ndarray:
        s = a.dtype.type(alpha)          # the scalar is converted to the tensor dtype first
        return np.where(a >= 0, a, a * s)
    if x.dtype in (np.float16, np.float32):
        return f(x)
    return bf16_reference(f, x)
