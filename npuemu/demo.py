"""``npuemu demo``: run every bundled kernel, check it against NumPy and report.

For each kernel and dtype the demo builds inputs, runs the kernel on the
emulated NPU, compares with the NumPy reference (bit-exact where the hardware
is exact, within the kernel's documented tolerance otherwise) and times the
emulator against NumPy computing the same result.  The report gives the
largest absolute error and, for results compared bit for bit, the largest
distance in ulp.  NumPy's time is measured once per computation (kernels that
compute the same thing, such as ``matmul`` and ``matmul_queue``, share it),
after a warm-up call, as the best of several runs.
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
    max_ulp: float | None          # for results compared bit for bit
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
    from .kernels.catalog import chosen as bundled
    from .kernels.catalog import compare
    from .platform import get_platform

    plat = get_platform(platform)
    chosen = bundled(kernels)
    rng = np.random.default_rng(0)
    rows: list[DemoRow] = []
    print(f"npuemu demo on {plat.name} ({plat.aiv_count} AIV, {plat.aic_count} AIC, UB {plat.ub_size // 1024} KiB)",
          file=out)
    header = (f"{'kernel':<12} {'dtype':<9} {'shape':<14} {'result':<18} {'max |err|':>9} {'ulp':>4} "
              f"{'emulator':>10} {'numpy':>10} {'ratio':>7}")
    print(header, file=out)
    print("-" * len(header), file=out)
    numpy_times: dict[tuple[Any, ...], float] = {}
    for k in chosen:
        shape = tuple(max(1, int(round(d * scale))) for d in k.demo_shape)
        for dtype in k.dtypes:
            inputs = k.make_inputs(rng, dtype, shape)
            try:
                result = k.run(*inputs, platform=plat.name)          # first launch also compiles
                emu = _best(lambda: k.run(*inputs, platform=plat.name), repeat)
                ref = k.reference(*inputs)
                timing = (k.reference, dtype, shape)
                if timing not in numpy_times:
                    k.reference(*inputs)                                  # warm up (BLAS threads, caches)
                    numpy_times[timing] = _best(lambda: k.reference(*inputs), max(repeat, 5))
                ok, err = compare(result, ref, k.tol(dtype))
                ulp = _max_ulp(result, ref) if k.tol(dtype).exact else None
                row = DemoRow(k.name, dtype, shape, ok, err, ulp, emu, numpy_times[timing])
            except Exception as exc:  # noqa: BLE001 - the report shows the failure, the exit code flags it
                row = DemoRow(k.name, dtype, shape, False, float("nan"), None, float("nan"), float("nan"),
                              note=f"{type(exc).__name__}: {exc}".splitlines()[0])
            rows.append(row)
            _print_row(row, k.tol(dtype).exact, out)
    passed = sum(r.passed for r in rows)
    print("-" * len(header), file=out)
    print(f"{passed}/{len(rows)} kernel runs match NumPy", file=out)
    print("max |err|: largest absolute error against the NumPy reference; ulp: largest distance in units in the\n"
          "last place, for results compared bit for bit; numpy: the reference, timed once per computation", file=out)
    return rows


def _max_ulp(got: np.ndarray, want: np.ndarray) -> float | None:
    """Largest ulp distance of a float result (None for integer results, whose error is in units already)."""
    from .testing import ulp_distance
    if got.dtype != want.dtype or got.dtype.kind not in "fV" or not got.size:
        return None
    try:
        d = ulp_distance(got, want)
    except Exception:  # noqa: BLE001 - a dtype ulp_distance does not know: no ulp column
        return None
    return float(np.nanmax(d)) if np.isfinite(d).any() else None


def _print_row(r: DemoRow, exact: bool, out: TextIO) -> None:
    shape = "x".join(map(str, r.shape))
    if r.note:
        result = "ERROR"
    elif r.passed:
        result = "PASS (bit-exact)" if exact else "PASS (tolerance)"
    else:
        result = "FAIL"
    ulp = "-" if r.max_ulp is None else f"{r.max_ulp:.0f}"
    ratio = r.emu_s / r.numpy_s if r.numpy_s and r.numpy_s == r.numpy_s else float("nan")
    print(f"{r.kernel:<12} {r.dtype:<9} {shape:<14} {result:<18} {r.max_error:>9.1e} {ulp:>4} "
          f"{r.emu_s * 1e3:>8.2f}ms {r.numpy_s * 1e3:>8.2f}ms {ratio:>6.2f}x", file=out)
    if r.note:
        print(f"    {r.note}", file=out)
