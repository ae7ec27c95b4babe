"""GELU, tanh approximation: ``x * sigmoid(1.5957691 * (x + 0.044715 * x**3))``.

``0.5 * x * (1 + tanh(z)) == x / (1 + exp(-2 z))``, so the kernel needs only
mul, muls, adds, exp and div.  16-bit inputs are computed in float32.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._elementwise import unary_kernel
from npuemu.kernels._host import check_arrays, launch_elementwise

DTYPES = ("float32", "float16", "bfloat16")

SQRT_2_OVER_PI_X2 = 1.5957691216057308   # 2 * sqrt(2 / pi)
CUBIC = 0.044715


@asc.jit
def gelu_tile(dst: asc.LocalTensor, src: asc.LocalTensor, alpha: float, count: int):
    asc.mul(dst, src, src, count)                       # x^2
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.mul(dst, dst, src, count)                       # x^3
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.muls(dst, dst, CUBIC, count)                    # 0.044715 x^3
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.add(dst, dst, src, count)                       # x + 0.044715 x^3
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.muls(dst, dst, -SQRT_2_OVER_PI_X2, count)       # -2z
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.exp(dst, dst, count)                            # exp(-2z)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.adds(dst, dst, 1.0, count)                      # 1 + exp(-2z)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.div(dst, src, dst, count)                       # x / (1 + exp(-2z))


def gelu(x: np.ndarray, out: np.ndarray | None = None, **launch: Any) -> np.ndarray:
    """GELU (tanh approximation) on the emulated NPU."""
    check_arrays("gelu", x=x)
    z = np.empty_like(x) if out is None else out
    launch_elementwise(unary_kernel, (x, z), 0.0, gelu_tile, True, scratch_f32=2, **launch)
    return z


def reference(x: np.ndarray) -> np.ndarray:
    """float64 GELU rounded to the input dtype (the kernel's exp is not correctly rounded)."""
    a = x.astype(np.float64)
    r = a / (1.0 + np.exp(-SQRT_2_OVER_PI_X2 * (a + CUBIC * a ** 3)))
    return r.astype(x.dtype)
