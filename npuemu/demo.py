"""``npuemu demo``: run every bundled kernel, check it against NumPy and report.

For each kernel and dtype the demo builds inputs, runs the kernel on the
emulated NPU, compares with the NumPy reference (bit-exact where the hardware
is exact, within the kernel's documented tolerance otherwise) and times the
emulator against NumPy computing the same result.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, TextIO

import numpy as np


@dataclass
class DemoRow:
    kernel: str
    dtype: str
    shape: tuple[int, ...]
    passed: bool
    max_error: float
    emu_s: float
    numpy_s: float
    note: str = ""


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def run_demo(platform: str | None = None, kernels: list[str] | None = None, scale: float = 1.0,
             repeat: int = 3, out: TextIO = sys.stdout) -> list[DemoRow]:
    """Run the demo; returns one row per (kernel, dtype).  ``scale`` shrinks or grows the shapes."""
    from .kernels.catalog import KERNELS, compare
    from .platform import get_platform

    plat = get_platform(platform)
    chosen = [k for k in KERNELS if not kernels or k.name in kernels]
    rng = np.random.default_rng(0)
    rows: list[DemoRow] = []
    print(f"npuemu demo on {plat.name} ({plat.aiv_count} AIV, {plat.aic_count} AIC, UB {plat.ub_size // 1024} KiB)",
          file=out)
    header = f"{'kernel':<12} {'dtype':<9} {'shape':<14} {'result':<22} {'emulator':>10} {'numpy':>10} {'ratio':>7}"
    print(header, file=out)
    print("-" * len(header), file=out)
    for k in chosen:
        shape = tuple(max(1, int(round(d * scale))) for d in k.demo_shape)
        for dtype in k.dtypes:
            inputs = k.make_inputs(rng, dtype, shape)
            try:
                result = k.run(*inputs, platform=plat.name)          # first launch also compiles
                emu = _best(lambda: k.run(*inputs, platform=plat.name), repeat)
                ref = k.reference(*inputs)
                ref_t = _best(lambda: k.reference(*inputs), repeat)
                ok, err = compare(result, ref, k.tol(dtype))
                row = DemoRow(k.name, dtype, shape, ok, err, emu, ref_t)
            except Exception as exc:  # noqa: BLE001 - the report shows the failure, the exit code flags it
                row = DemoRow(k.name, dtype, shape, False, float("nan"), float("nan"), float("nan"),
                              note=f"{type(exc).__name__}: {exc}".splitlines()[0])
            rows.append(row)
            _print_row(row, k.tol(dtype).exact, out)
    passed = sum(r.passed for r in rows)
    print("-" * len(header), file=out)
    print(f"{passed}/{len(rows)} kernel runs match NumPy", file=out)
    return rows


def _print_row(r: DemoRow, exact: bool, out: TextIO) -> None:
    shape = "x".join(map(str, r.shape))
    if r.note:
        result = "ERROR"
    elif r.passed:
        result = "PASS (bit-exact)" if exact else f"PASS (err {r.max_error:.1e})"
    else:
        result = f"FAIL (err {r.max_error:.1e})"
    ratio = r.emu_s / r.numpy_s if r.numpy_s and r.numpy_s == r.numpy_s else float("nan")
    print(f"{r.kernel:<12} {r.dtype:<9} {shape:<14} {result:<22} {r.emu_s * 1e3:>8.2f}ms {r.numpy_s * 1e3:>8.2f}ms "
          f"{ratio:>6.2f}x", file=out)
    if r.note:
        print(f"    {r.note}", file=out)
