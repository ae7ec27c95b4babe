"""Cost of the ``full`` check level: time with ``check="full"`` / time with ``check="off"``.

Each bundled kernel (npuemu.kernels.catalog) runs in float32 (its first
dtype when it has no float32 variant, e.g. the int8 matmuls) at its demo
shape (1 Mi elements, or 1024 x 1024), compiled mode, both binaries compiled
outside the timing.  ``track_ratio`` interleaves best-of runs of the two
levels, so machine load affects both alike; ARCHITECTURE.md's target is a
ratio of at most 1.5.
"""
from __future__ import annotations

import numpy as np

from npuemu.kernels.catalog import BY_NAME, KERNELS

from .timing import interleaved_best

REPEAT = 5


class FullCheckCost:
    """A bundled kernel at check level ``full`` against the same kernel at ``off``."""

    params = [k.name for k in KERNELS]
    param_names = ["kernel"]
    timeout = 600

    def setup(self, name: str) -> None:
        k = BY_NAME[name]
        dtype = "float32" if "float32" in k.dtypes else k.dtypes[0]
        args = k.make_inputs(np.random.default_rng(0), dtype, k.demo_shape)
        self.run = {level: (lambda level=level: k.run(*args, check=level)) for level in ("off", "full")}
        for fn in self.run.values():          # compile outside the timing
            fn()

    def time_off(self, name: str) -> None:
        self.run["off"]()

    def time_full(self, name: str) -> None:
        self.run["full"]()

    def best_times(self, repeat: int = REPEAT) -> tuple[float, float]:
        """Best times of ``off`` and ``full`` from interleaved runs."""
        off, full = interleaved_best(self.run["off"], self.run["full"], rounds=repeat)
        return off, full

    def track_ratio(self, name: str) -> float:
        off, full = self.best_times()
        return full / off

    track_ratio.unit = "full/off"  # type: ignore[attr-defined]


def ratios(names: list[str] | None = None, repeat: int = 3 * REPEAT) -> dict[str, tuple[float, float, float]]:
    """``{kernel: (off seconds, full seconds, ratio)}``, for quick measurements outside asv."""
    out: dict[str, tuple[float, float, float]] = {}
    for name in names or [k.name for k in KERNELS]:
        b = FullCheckCost()
        b.setup(name)
        off, full = b.best_times(repeat)
        out[name] = (off, full, full / off)
        print(f"{name:<12} off {off * 1e3:9.2f} ms   full {full * 1e3:9.2f} ms   ratio {full / off:6.2f}",
              flush=True)
    return out


if __name__ == "__main__":          # python -m benchmarks.bench_checks [kernel ...]
    import sys

    ratios(sys.argv[1:] or None)
