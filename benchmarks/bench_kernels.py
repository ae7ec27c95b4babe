"""Emulator speed against NumPy, as ratios measured in one process.

Each class times the emulated kernel (``time_emulator``) and NumPy doing the
same math into preallocated outputs (``time_numpy``); ``track_ratio`` reports
emulator time / NumPy time from interleaved best-of runs, which is the figure
the targets in ARCHITECTURE.md are stated in (float32 add <= 2x, float16 add
faster than NumPy's float16).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from npuemu.kernels import add as add_mod
from npuemu.kernels import layernorm as ln_mod
from npuemu.kernels import softmax as sm_mod

from .timing import interleaved_ratio


class _RatioBenchmark:
    """Subclasses set ``self.emulate`` and ``self.numpy`` in ``setup``."""

    emulate: Callable[[], Any]
    numpy: Callable[[], Any]

    def time_emulator(self, *params: Any) -> None:
        self.emulate()

    def time_numpy(self, *params: Any) -> None:
        self.numpy()

    def track_ratio(self, *params: Any) -> float:
        return interleaved_ratio(self.emulate, self.numpy)

    track_ratio.unit = "emulator/numpy"  # type: ignore[attr-defined]


class Add(_RatioBenchmark):
    """z = x + y, 16 Mi elements, the TPipe/TQue double-buffered kernel on 48 vector cores."""

    params = ["float32", "float16"]
    param_names = ["dtype"]
    timeout = 300

    def setup(self, dtype: str) -> None:
        n = 16 * 1024 * 1024
        rng = np.random.default_rng(0)
        x = rng.standard_normal(n).astype(dtype)
        y = rng.standard_normal(n).astype(dtype)
        z = np.empty_like(x)
        zr = np.empty_like(x)
        add_mod.add(x, y, out=z)            # compile outside the timing
        self.emulate = lambda: add_mod.add(x, y, out=z)
        self.numpy = lambda: np.add(x, y, out=zr)


class Softmax(_RatioBenchmark):
    """Row softmax of a 4096 x 1024 float32 matrix against NumPy in float32."""

    timeout = 300

    def setup(self) -> None:
        x = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float32)
        z = np.empty_like(x)
        m = np.empty((x.shape[0], 1), np.float32)
        sm_mod.softmax(x, out=z)

        def numpy_softmax() -> None:
            np.max(x, axis=1, keepdims=True, out=m)
            np.subtract(x, m, out=z)
            np.exp(z, out=z)
            np.sum(z, axis=1, keepdims=True, out=m)
            np.divide(z, m, out=z)

        self.emulate = lambda: sm_mod.softmax(x, out=z)
        self.numpy = numpy_softmax


class LayerNorm(_RatioBenchmark):
    """LayerNorm of a 4096 x 1024 float32 matrix against NumPy in float32."""

    timeout = 300

    def setup(self) -> None:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((4096, 1024)).astype(np.float32)
        g = rng.standard_normal(1024).astype(np.float32)
        b = rng.standard_normal(1024).astype(np.float32)
        z = np.empty_like(x)
        ln_mod.layernorm(x, g, b, out=z)

        def numpy_layernorm() -> None:
            mean = x.mean(axis=1, keepdims=True)
            c = x - mean
            var = np.mean(c * c, axis=1, keepdims=True)
            np.multiply(c / np.sqrt(var + np.float32(1e-5)), g, out=z)
            np.add(z, b, out=z)

        self.emulate = lambda: ln_mod.layernorm(x, g, b, out=z)
        self.numpy = numpy_layernorm


class AddScaling(_RatioBenchmark):
    """float32 z = x + y against NumPy as the problem grows (64 Ki, 1 Mi, 16 Mi elements) and as the launch
    uses 1, 8 or 48 vector cores: the fixed cost of a launch shows at small sizes, the cores at large ones
    (docs/kernels.md, the elementwise tiling)."""

    params = [[1 << 16, 1 << 20, 1 << 24], [1, 8, 48]]
    param_names = ["elements", "cores"]
    timeout = 300

    def setup(self, n: int, cores: int) -> None:
        rng = np.random.default_rng(0)
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        z = np.empty_like(x)
        zr = np.empty_like(x)
        add_mod.add(x, y, out=z, core_num=cores)
        self.emulate = lambda: add_mod.add(x, y, out=z, core_num=cores)
        self.numpy = lambda: np.add(x, y, out=zr)
