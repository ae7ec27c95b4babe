"""The cube matmul kernels against NumPy's float32 ``@``, as ratios measured in one process.

``track_ratio`` is emulator time / NumPy time (interleaved best-of runs, see
bench_kernels.py).  The baseline is always float32 ``np.matmul`` into a
preallocated output, on float32 copies of the inputs made outside the timing,
since that is what a user would otherwise run.  Target: within 2x.
Shapes are M x K x N.
"""
from __future__ import annotations

import numpy as np

from benchmarks.bench_kernels import _RatioBenchmark
from npuemu.kernels import linear as linear_mod
from npuemu.kernels import matmul as mm_mod
from npuemu.kernels._host import to_dtype


def _operands(m: int, k: int, n: int, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return to_dtype(rng.standard_normal((m, k)), dtype), to_dtype(rng.standard_normal((k, n)) / np.sqrt(k), dtype)


class _MatmulRatio(_RatioBenchmark):
    def prepare(self, m: int, k: int, n: int, dtype: str) -> None:
        a, b = _operands(m, k, n, dtype)
        c = np.empty((m, n), a.dtype)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        c32 = np.empty((m, n), np.float32)
        mm_mod.matmul(a, b, out=c)                      # compile outside the timing
        self.emulate = lambda: mm_mod.matmul(a, b, out=c)
        self.numpy = lambda: np.matmul(a32, b32, out=c32)


class Matmul(_MatmulRatio):
    """1024 x 1024 x 1024, the static-tensor kernel on the cube cores."""

    params = ["float16", "float32"]
    param_names = ["dtype"]
    timeout = 600

    def setup(self, dtype: str) -> None:
        self.prepare(1024, 1024, 1024, dtype)


class MatmulTallSkinny(_MatmulRatio):
    """8192 x 64 x 1024: a tall A with a short K."""

    params = ["float16", "float32"]
    param_names = ["dtype"]
    timeout = 600

    def setup(self, dtype: str) -> None:
        self.prepare(8192, 64, 1024, dtype)


class LinearGelu(_RatioBenchmark):
    """gelu(x @ w + bias), 1024 x 1024 x 1024 float16, against NumPy float32 matmul + bias + tanh-GELU."""

    timeout = 600

    def setup(self) -> None:
        x, w = _operands(1024, 1024, 1024, "float16")
        bias = np.zeros(1024, np.float16)
        y = np.empty((1024, 1024), np.float16)
        x32, w32, b32 = x.astype(np.float32), w.astype(np.float32), bias.astype(np.float32)
        linear_mod.linear(x, w, bias, out=y)

        def numpy() -> np.ndarray:
            h = x32 @ w32 + b32
            return h / (1 + np.exp(-linear_mod.SQRT_2_OVER_PI_X2 * (h + linear_mod.CUBIC * h ** 3)))
        self.emulate = lambda: linear_mod.linear(x, w, bias, out=y)
        self.numpy = numpy
