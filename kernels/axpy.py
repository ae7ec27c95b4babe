"""``y <- alpha * x + y`` with the Axpy instruction (float16/float32; bfloat16 via float32)."""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._elementwise import binary_kernel
from npuemu.kernels._host import bf16_reference, check_same, launch_elementwise

DTYPES = ("float32", "float16", "bfloat16")


@asc.jit
def axpy_tile(dst: asc.LocalTensor, x: asc.LocalTensor, y: asc.LocalTensor, alpha: float, count: int):
    asc.muls(dst, y, 1.0, count)          # dst = y (exact copy)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.axpy(dst, x, alpha, count)        # dst = x * alpha + dst


@asc.jit
def add_scaled_tile(dst: asc.LocalTensor, x1: asc.LocalTensor, x2: asc.LocalTensor, alpha: float, count: int):
    """``dst = x1 + alpha * x2``: the op library's Add (npuemu.ops.library); alpha = 1 gives ``x1 + x2`` exactly."""
    axpy_tile(dst, x2, x1, alpha, count)


def axpy(alpha: float, x: np.ndarray, y: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """``alpha * x + y`` on the emulated NPU (into ``out``, a new array by default)."""
    check_same("axpy", x=x, y=y)
    z = np.empty_like(y) if out is None else out
    launch_elementwise(binary_kernel, (x, y, z), float(alpha), axpy_tile, False, scratch_f32=3, **launch)
    return z


def reference(alpha: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The product rounds to the tensor dtype, then the sum does (two roundings)."""
    def f(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a * a.dtype.type(alpha)) + b
    if x.dtype in (np.float16, np.float32):
        return f(x, y)
    return bf16_reference(f, x, y)
