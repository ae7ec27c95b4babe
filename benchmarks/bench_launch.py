"""The fixed cost of a launch: a kernel that does nothing, on 1, 8 and 48 cores.

What is left is the host's work per launch and per core (core states, local
memories, the scheduler, calling each core's compiled function).  Reported in
milliseconds (median of interleaved rounds) and as a ratio to NumPy adding
two float32 vectors of 2^16 elements in the same process, the size at which
a launch's fixed cost decides an elementwise kernel's speed.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import npuemu.asc as asc

ROUNDS = 200


@asc.jit
def nothing(x: asc.GlobalAddress):
    pass


def _median_seconds(fn, rounds: int = ROUNDS) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


class TrivialLaunch:
    """Milliseconds per launch of an empty kernel, and that over NumPy's 2^16-element add."""

    params = [1, 8, 48]
    param_names = ["cores"]
    timeout = 600

    def setup(self, cores: int) -> None:
        self.x = np.zeros(64, np.float32)
        nothing[cores](self.x)                     # compile and warm up
        a = np.ones(1 << 16, np.float32)
        self.np_add = lambda: np.add(a, a)

    def track_ms(self, cores: int) -> float:
        return _median_seconds(lambda: nothing[cores](self.x)) * 1e3

    def track_ratio_to_numpy_add_2e16(self, cores: int) -> float:
        launch = _median_seconds(lambda: nothing[cores](self.x))
        return launch / _median_seconds(self.np_add)

    track_ms.unit = "ms"  # type: ignore[attr-defined]
    track_ratio_to_numpy_add_2e16.unit = "x"  # type: ignore[attr-defined]
