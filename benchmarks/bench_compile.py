"""Kernel compile time (cold, empty cache) and load time (warm disk cache), each in a fresh process."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

_SCRIPT = """
import time, numpy as np
t = time.perf_counter()
from npuemu.kernels.add import add
x = np.ones(4096, np.float32)
add(x, x)
print(time.perf_counter() - t)
"""


def _fresh_process_seconds(cache: str) -> float:
    env = dict(os.environ, NPUEMU_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


class CompileTime:
    """Seconds from ``import`` to the first finished launch of the add kernel in a new process."""

    timeout = 600
    number = 1
    repeat = 1

    def setup(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()

    def teardown(self) -> None:
        self._tmp.cleanup()

    def track_cold_compile_s(self) -> float:
        """Empty kernel cache (instruction-library machine code may already be cached)."""
        return _fresh_process_seconds(os.path.join(self._tmp.name, "cold"))

    def track_warm_load_s(self) -> float:
        """Second process on a populated cache: no compilation, only loading."""
        cache = os.path.join(self._tmp.name, "warm")
        _fresh_process_seconds(cache)
        return _fresh_process_seconds(cache)

    track_cold_compile_s.unit = "s"  # type: ignore[attr-defined]
    track_warm_load_s.unit = "s"  # type: ignore[attr-defined]
