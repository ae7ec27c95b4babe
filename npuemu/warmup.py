"""``npuemu warmup``: compile the bundled kernels and the instructions they call, ahead of first use.

The first launch of a kernel on a machine compiles the kernel and every
instruction specialisation it calls (seconds each; a cube kernel, a minute);
both are cached on disk (the kernel cache, ``NPUEMU_CACHE_DIR``, and Numba's
cache of the instruction library), so it happens once per machine and
npuemu version.  Warming up launches every bundled kernel once per dtype on
a small input at each requested check level, which compiles what most
kernels need, and prints a line per launch as it goes.  Later launches, the
test suite's and user kernels' included, load instead of compiling whatever
they share with the bundled kernels.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from .errors import NpuemuError

CHECK_LEVELS = ("off", "default", "full")


@dataclass
class WarmupStep:
    kernel: str
    dtype: str
    check: str
    seconds: float
    error: str = ""


def warmup(checks: tuple[str, ...] = ("default",), kernels: list[str] | None = None,
           platform: str | None = None, out: TextIO | None = None) -> list[WarmupStep]:
    """Launch each bundled kernel (or those named) once per dtype at each check level; one line per launch
    to ``out`` (default: standard output).

    A launch that fails is reported in its line and the warm-up goes on;
    the returned steps say which.
    """
    out = sys.stdout if out is None else out
    from .kernels.catalog import chosen
    from .platform import get_platform

    bad = [c for c in checks if c not in CHECK_LEVELS]
    if bad:
        raise NpuemuError(f"unknown check level {', '.join(bad)}; the levels are {', '.join(CHECK_LEVELS)}")
    todo = [(level, k, dtype) for level in checks for k in chosen(kernels) for dtype in k.dtypes]
    plat = get_platform(platform)
    rng = np.random.default_rng(0)
    steps: list[WarmupStep] = []
    began = time.perf_counter()
    width = len(str(len(todo)))
    for i, (level, k, dtype) in enumerate(todo, 1):
        inputs = k.make_inputs(rng, dtype, k.test_shapes[0])
        t = time.perf_counter()
        try:
            k.run(*inputs, platform=plat.name, check=level)
            step = WarmupStep(k.name, dtype, level, time.perf_counter() - t)
        except Exception as exc:  # noqa: BLE001 - reported in the line; the others still warm up
            step = WarmupStep(k.name, dtype, level, time.perf_counter() - t,
                              f"{type(exc).__name__}: {exc}".splitlines()[0])
        steps.append(step)
        status = f"FAILED: {step.error}" if step.error else f"{step.seconds:6.1f} s"
        print(f"[{i:>{width}}/{len(todo)}] {k.name:<12} {dtype:<9} check={level:<8} {status}", file=out,
              flush=True)
    failed = sum(bool(s.error) for s in steps)
    print(f"warmed up {len(steps) - failed} kernel launches on {plat.name} in {time.perf_counter() - began:.1f} s"
          + (f"; {failed} failed" if failed else ""), file=out)
    return steps
