"""What the loop check costs: kernels as built against the same kernels lowered without it, in one process.

Every iteration of a kernel loop counts a step and compares it with its
core's step limit, so that a launch can be stopped (isa/runaway.py).
``track_ratio`` times each case as built and as lowered without the check
(a second copy of the kernel, built under a key of its own), interleaved,
best of ``ROUNDS``: time with / time without.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import pathlib
import sys
import time
from types import ModuleType
from typing import Any, Callable, Iterator

import numpy as np

import npuemu.asc as asc

ROUNDS = 9


@asc.jit
def scalar_loop(x: asc.GlobalAddress, n: int):
    """A loop of scalar arithmetic only: the check's worst case."""
    g = asc.GlobalTensor()
    g.set_global_buffer(x, 8)
    s = 0
    i = 0
    while i < n:
        s = (s * 31 + i) % 1000003
        i += 1
    g.set_value(0, s * 1.0)


@asc.jit
def get_set_loop(x: asc.GlobalAddress, n: int, reps: int):
    """Nested loops of scalar local-memory reads and writes."""
    g = asc.GlobalTensor()
    g.set_global_buffer(x, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, n * 4)
    t = buf.get(asc.float32)
    asc.data_copy(t, g, n)
    asc.set_flag(asc.HardEvent.MTE2_S, 0)
    asc.wait_flag(asc.HardEvent.MTE2_S, 0)
    for r in range(reps):
        for i in range(n):
            t.set_value(i, t.get_value(i) + 1.0)
    asc.set_flag(asc.HardEvent.S_MTE3, 0)
    asc.wait_flag(asc.HardEvent.S_MTE3, 0)
    asc.data_copy(g, t, n)


def _copy(name: str, path: str) -> ModuleType:
    """A second copy of the module at ``path``: its kernels are new kernel objects."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _without_check() -> Iterator[None]:
    """Lower without the loop check, under keys of their own (the binary store must not mix the two)."""
    from npuemu.frontend import build
    from npuemu.frontend.statements import StatementLowering
    step, fingerprint = StatementLowering.loop_step, build.compiler_fingerprint
    StatementLowering.loop_step = lambda self, node: None          # type: ignore[method-assign]
    build.compiler_fingerprint = lambda: "benchmark: no loop check"  # type: ignore[assignment]
    try:
        yield
    finally:
        StatementLowering.loop_step = step                          # type: ignore[method-assign]
        build.compiler_fingerprint = fingerprint


def _case(mine: ModuleType, case: str) -> Callable[[], Any]:
    """The launch of ``case`` with the kernels of module ``mine`` (this one, or its copy without the check)."""
    rng = np.random.default_rng(0)
    if case.startswith("scalar_loop"):
        x = np.zeros(8, np.float32)
        if case.endswith("debug"):
            return lambda: mine.scalar_loop[1](x, 5_000, debug=True)
        return lambda: mine.scalar_loop[1](x, 5_000_000)
    if case == "get_set_loop":
        x = np.zeros(1024, np.float32)
        return lambda: mine.get_set_loop[1](x, 1024, 50)
    host = _bundled(case, mine is not sys.modules[__name__])
    if case == "add":
        a, b = (rng.standard_normal(16 << 20).astype(np.float32) for _ in range(2))
        z = np.empty_like(a)
        return lambda: host.add(a, b, out=z)
    rows = rng.standard_normal((4096, 1024)).astype(np.float32)
    out = np.empty_like(rows)
    if case == "softmax":
        return lambda: host.softmax(rows, out=out)
    g, b = (rng.standard_normal(1024).astype(np.float32) for _ in range(2))
    return lambda: host.layernorm(rows, g, b, out=out)


def _bundled(name: str, copy: bool) -> ModuleType:
    """The bundled kernel module ``name``, or a second copy of it (new kernel objects)."""
    if not copy:
        return importlib.import_module(f"npuemu.kernels.{name}")
    path = pathlib.Path(importlib.import_module("npuemu.kernels").__file__ or "").parent / f"{name}.py"
    return sys.modules.get(f"npuemu.kernels.{name}_nocheck") or _copy(f"npuemu.kernels.{name}_nocheck", str(path))


class LoopCheck:
    """Time with the loop check / time without, per case."""

    params = ["scalar_loop", "scalar_loop_debug", "get_set_loop", "add", "softmax", "layernorm"]
    param_names = ["case"]
    timeout = 900

    def setup(self, case: str) -> None:
        other = sys.modules.get(f"{__name__}_nocheck") or _copy(f"{__name__}_nocheck", __file__)
        self.with_check = _case(sys.modules[__name__], case)
        self.with_check()                       # compile outside the timing
        with _without_check():
            self.without = _case(other, case)
            self.without()

    def track_ratio(self, case: str) -> float:
        best = [float("inf"), float("inf")]
        runs = (self.with_check, self.without)
        for r in range(ROUNDS):
            for k in ((0, 1) if r % 2 == 0 else (1, 0)):
                t = time.perf_counter()
                runs[k]()
                best[k] = min(best[k], time.perf_counter() - t)
        return best[0] / best[1]

    track_ratio.unit = "with/without"  # type: ignore[attr-defined]
