"""int8 ``C = A @ B`` on the cube: exact int32, or quantised on the way out by ``fixpipe``.

The kernel is kernels/matmul.py's (``matmul_kernel``): int8 x int8 products
accumulate exactly in int32 in L0C, and ``fixpipe`` converts each tile as it
leaves L0C:

* ``int32`` output: ``NoQuant``, the exact sums;
* ``float16`` output: ``DEQF16``, ``float16(sum * scale)`` (dequantisation);
* ``int8`` output: ``REQ8``, ``int8(saturate(round(sum * scale)))``
  (requantisation for the next int8 layer).

``scale`` is a scalar (``deq_scalar``: its float32 bits, of which the
hardware keeps 10 mantissa bits); per-channel scales
(``VDEQF16``/``VREQ8``) are not used here.  B is passed to the kernel as
``[N, K]`` (int8 fractals are 16 x 32, which ``load_data`` cannot transpose).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.errors import LaunchError
from npuemu.kernels._cube import float_bits, launch_matmul
from npuemu.kernels.matmul import matmul_kernel

DTYPES = ("int8",)
OUTPUTS = {"int32": asc.QuantModes.NoQuant, "float16": asc.QuantModes.DEQF16, "int8": asc.QuantModes.REQ8}


def matmul_int8(a: np.ndarray, b: np.ndarray, out_dtype: str = "int32", scale: float = 1.0,
                out: np.ndarray | None = None, *, trans_b: bool = False, **launch: Any) -> np.ndarray:
    """int8 ``a @ b`` (``a @ b.T`` with ``trans_b``) as int32, or quantised to float16/int8 with ``scale``."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != np.int8:
        raise LaunchError(f"matmul_int8 takes int8 A and B, got {a.dtype}")
    name = np.dtype(out_dtype).name
    if name not in OUTPUTS:
        raise LaunchError(f"matmul_int8: out_dtype must be one of {', '.join(OUTPUTS)}, got {name}")
    deq = 0 if name == "int32" else float_bits(scale)
    return launch_matmul(matmul_kernel, a, b, out, trans_b=trans_b, out_dtype=name, args=(OUTPUTS[name], deq),
                         op="matmul_int8", **launch)


def hardware_scale(scale: float) -> np.float32:
    """``scale`` as fixpipe uses it: float32 with only 10 mantissa bits (the low 13 bits cleared)."""
    bits = np.array(scale, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return bits.view(np.float32)[()]


def reference(a: np.ndarray, b: np.ndarray, out_dtype: str = "int32", scale: float = 1.0,
              trans_b: bool = False) -> np.ndarray:
    """Exact int32 sums (wrapping as L0C does), then the fixpipe conversion of ``out_dtype``."""
    sums = (a.astype(np.int64) @ (b.T if trans_b else b).astype(np.int64)).astype(np.int32)
    name = np.dtype(out_dtype).name
    if name == "int32":
        return sums
    scaled = sums.astype(np.float32) * hardware_scale(scale)
    if name == "float16":
        return scaled.astype(np.float16)
    return np.clip(np.rint(scaled), -128, 127).astype(np.int8)
