"""The transcendental vector instructions per element, as ratios to NumPy's float32 ``np.exp`` in one process.

``exp``, ``ln`` and ``rsqrt`` (count form, float32 and float16) on 1 Mi
elements in one call, against ``np.exp`` on as many float32 elements into a
preallocated output.  ``track_ratio`` is the instruction's time over
``np.exp``'s; ``track_before_ratio`` the same for the instruction's
definition as a plain compiled loop, one C library call per element (how
``exp`` and ``ln`` ran before npuemu.isa.vmath: LLVM cannot vectorise a libm
call); ``track_ns_per_element`` the instruction's time itself, for reading
only.  The target is at most 1.5 ns per element.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numba import njit

from npuemu.isa import vec_unary as vu
from npuemu.numerics.half import f16_to_f32

from .timing import interleaved_best

N = 1 << 20
REPEAT = 7


@njit(error_model="numpy", inline="always")
def _libm(op, w):
    return math.exp(w) if op == 0 else math.log(w) if op == 1 else 1.0 / math.sqrt(w)


@njit(error_model="numpy")
def _definition_f32(op, a, d):
    """The definition, one libm call per element (op: 0 exp, 1 ln, 2 rsqrt)."""
    for i in range(len(a)):
        d[i] = np.float32(_libm(op, np.float64(a[i])))


@njit(error_model="numpy")
def _definition_f16(op, a, d):
    """The same on float16 bit patterns."""
    for i in range(len(a)):
        d[i] = vu.f64_to_f16(_libm(op, np.float64(f16_to_f32(a[i]))))


def _inputs(op: str, dtype: str) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal(N) * 4
    if op != "exp":
        x = np.abs(x) + 1e-3
    return x.astype(dtype)


class Transcendental:
    """One count-form instruction over 1 Mi elements (a UB as large as needed) against ``np.exp``."""

    params = [["exp", "ln", "rsqrt"], ["float32", "float16"]]
    param_names = ["op", "dtype"]
    timeout = 300

    def setup(self, op: str, dtype: str) -> None:
        x = _inputs(op, dtype)
        storage = x.view(np.uint16) if dtype == "float16" else x
        nb = x.nbytes
        st = np.zeros(1024, np.int64)
        lm = np.zeros(2 * nb, np.uint8)
        lm[:nb] = storage.view(np.uint8)
        fn = getattr(vu, f"{op}_{'f16' if dtype == 'float16' else 'f32'}")
        out = np.empty_like(storage)
        code = ("exp", "ln", "rsqrt").index(op)
        definition = _definition_f16 if dtype == "float16" else _definition_f32
        x32 = np.random.default_rng(0).standard_normal(N).astype(np.float32)
        y32 = np.empty_like(x32)
        self.emulate: Callable[[], Any] = lambda: fn(st, lm, nb, N, 0, N, N, 0)
        self.before: Callable[[], Any] = lambda: definition(code, storage, out)
        self.numpy: Callable[[], Any] = lambda: np.exp(x32, out=y32)
        for f in (self.emulate, self.before, self.numpy):      # compile outside the timing
            f()

    def time_emulator(self, *params: Any) -> None:
        self.emulate()

    def time_numpy(self, *params: Any) -> None:
        self.numpy()

    def _best(self) -> tuple[float, float, float]:
        """Best times of the instruction, the libm loop and np.exp from interleaved runs."""
        emu, before, ref = interleaved_best(self.emulate, self.before, self.numpy, rounds=REPEAT)
        return emu, before, ref

    def track_ratio(self, *params: Any) -> float:
        emu, _, ref = self._best()
        return emu / ref

    track_ratio.unit = "instruction/np.exp"  # type: ignore[attr-defined]

    def track_before_ratio(self, *params: Any) -> float:
        _, before, ref = self._best()
        return before / ref

    track_before_ratio.unit = "libm loop/np.exp"  # type: ignore[attr-defined]

    def track_ns_per_element(self, *params: Any) -> float:
        emu, _, _ = self._best()
        return emu / N * 1e9

    track_ns_per_element.unit = "ns"  # type: ignore[attr-defined]
