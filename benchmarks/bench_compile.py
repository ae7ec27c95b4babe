"""Kernel compile time (cold, empty cache) and load time (warm disk cache), each in a fresh process.

Two kernels: ``add`` (vector, TQue double-buffered) and ``matmul`` (cube:
ND2NZ copies, load_data, mmad, fixpipe), whose instructions are large: the
kernel calls them by symbol instead of recompiling them (isa/linkage.py).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

_SCRIPTS = {
    "add": """
import time, numpy as np
t = time.perf_counter()
from npuemu.kernels.add import add
x = np.ones(4096, np.float32)
t1 = time.perf_counter()
add(x, x)
print(t1 - t, time.perf_counter() - t1)
""",
    "matmul": """
import time, numpy as np
t = time.perf_counter()
from npuemu.kernels.matmul import matmul
a = np.ones((40, 70), np.float16)
t1 = time.perf_counter()
matmul(a, a.T.copy())
print(t1 - t, time.perf_counter() - t1)
""",
}


def _fresh_process(cache: str, kernel: str = "add") -> tuple[float, float]:
    """(seconds to import npuemu and numba, seconds of the first launch) in a new interpreter."""
    env = dict(os.environ, NPUEMU_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _SCRIPTS[kernel]], env=env, check=True, capture_output=True,
                         text=True)
    imports, launch = out.stdout.strip().splitlines()[-1].split()
    return float(imports), float(launch)


class CompileTime:
    """Seconds of the first launch of a bundled kernel in a new process (imports excluded)."""

    timeout = 600
    number = 1
    repeat = 1
    params = ["add", "matmul"]
    param_names = ["kernel"]

    def setup(self, kernel: str) -> None:
        self._tmp = tempfile.TemporaryDirectory()

    def teardown(self, kernel: str) -> None:
        self._tmp.cleanup()

    def track_cold_compile_s(self, kernel: str) -> float:
        """Empty kernel cache (instruction-library machine code may already be cached)."""
        return _fresh_process(os.path.join(self._tmp.name, "cold"), kernel)[1]

    def track_warm_load_s(self, kernel: str) -> float:
        """Second process on a populated cache: no compilation, only loading."""
        cache = os.path.join(self._tmp.name, "warm")
        _fresh_process(cache, kernel)
        return _fresh_process(cache, kernel)[1]

    def track_import_s(self, kernel: str) -> float:
        """``import npuemu`` (and with it NumPy and Numba) in a new process."""
        return _fresh_process(os.path.join(self._tmp.name, "warm"), kernel)[0]

    track_cold_compile_s.unit = "s"  # type: ignore[attr-defined]
    track_warm_load_s.unit = "s"  # type: ignore[attr-defined]
    track_import_s.unit = "s"  # type: ignore[attr-defined]
