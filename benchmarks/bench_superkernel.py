"""What fusing launches into a SuperKernel costs at build time, against compiling the sub-kernels.

npuemu's combiner reuses the sub-kernels' compiled per-core functions
(docs/superkernel.md), so its extra "compile" time is building the
SuperKernel (recording the launches, the launch configuration, the GM
views) plus whatever the first SuperKernel run compiles that the separate
launches did not.  Measured in a fresh process on an empty kernel cache for
the RMSNorm -> MatMul -> GELU chain.  ``SuperKernelCost`` tracks the cost
model's predicted device time of the same chain fused against launched one
by one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

_SCRIPT = """
import json, time, numpy as np
from npuemu import superkernel
from npuemu.kernels import gelu, matmul, rmsnorm
rng = np.random.default_rng(0)
x = rng.standard_normal((32, 64)).astype(np.float32)
g = rng.uniform(0.5, 1.5, 64).astype(np.float32)
w = rng.standard_normal((64, 48)).astype(np.float32)
y, z, o = np.empty((32, 64), np.float32), np.empty((32, 48), np.float32), np.empty((32, 48), np.float32)
t0 = time.perf_counter()
rmsnorm.rmsnorm(x, g, out=y); matmul.matmul(y, w, out=z); gelu.gelu(z, out=o)     # compiles the three
t1 = time.perf_counter()
rmsnorm.rmsnorm(x, g, out=y); matmul.matmul(y, w, out=z); gelu.gelu(z, out=o)     # warm separate launches
t2 = time.perf_counter()
with superkernel.scope("chain", run=False) as s:
    rmsnorm.rmsnorm(x, g, out=y); matmul.matmul(y, w, out=z); gelu.gelu(z, out=o)
t3 = time.perf_counter()
s.superkernel.run()                                                                  # first SuperKernel run
t4 = time.perf_counter()
s.superkernel.run()
t5 = time.perf_counter()
print(json.dumps({"compile": t1 - t0 - (t2 - t1), "separate": t2 - t1, "combine": t3 - t2,
                  "first_run": t4 - t3, "run": t5 - t4}))
"""


def measure(cache: str) -> dict[str, float]:
    """The chain's timings (seconds) in a new interpreter with kernel cache ``cache``."""
    env = dict(os.environ, NPUEMU_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


class SuperKernelBuild:
    """The combiner's extra build time as a fraction of compiling the sub-kernels (cold cache)."""

    timeout = 1800
    number = 1
    repeat = 1

    def setup(self) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        self._m = measure(os.path.join(self._tmp.name, "cold"))

    def teardown(self) -> None:
        self._tmp.cleanup()

    def track_extra_compile_ratio(self) -> float:
        """(building the SuperKernel + its first run beyond a warm run) / compiling the three sub-kernels."""
        m = self._m
        return (m["combine"] + max(0.0, m["first_run"] - m["run"])) / m["compile"]

    def track_combine_s(self) -> float:
        return self._m["combine"]

    def track_sub_kernel_compile_s(self) -> float:
        return self._m["compile"]

    def track_fused_over_separate_run(self) -> float:
        """Warm SuperKernel run / the three warm separate launches (emulator time)."""
        return self._m["run"] / self._m["separate"]

    track_combine_s.unit = "s"  # type: ignore[attr-defined]
    track_sub_kernel_compile_s.unit = "s"  # type: ignore[attr-defined]


def predicted() -> Any:
    """The cost model's figures for the chain: separate launches against the SuperKernel (early-start=1,
    feed-sync-all=1) run profiled, with its run with full barriers (npuemu.superkernel.cost)."""
    import numpy as np
    from npuemu import superkernel
    from npuemu.cost import record_profiles
    from npuemu.kernels import gelu, matmul, rmsnorm
    from npuemu.superkernel import cost
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    w = rng.standard_normal((64, 48)).astype(np.float32)
    y, z, o = np.empty((32, 64), np.float32), np.empty((32, 48), np.float32), np.empty((32, 48), np.float32)

    def chain() -> None:
        rmsnorm.rmsnorm(x, g, out=y, profile=True)
        matmul.matmul(y, w, out=z, profile=True)
        gelu.gelu(z, out=o, profile=True)

    with record_profiles() as separate:
        chain()
    with superkernel.scope("chain", "early-start=1:feed-sync-all=1", run=False) as s:
        chain()
    assert s.superkernel is not None
    return cost.compare(separate, fused=cost.profile(s.superkernel))


class SuperKernelCost:
    """The cost model's predicted device time of the chain fused, against the three separate launches (a
    model prediction: it changes only when a kernel, the combiner or the model does)."""

    timeout = 1800
    number = 1
    repeat = 1

    def setup(self) -> None:
        self._c = predicted()

    def track_predicted_fused_over_separate(self) -> float:
        """Predicted SuperKernel time / the separate launches' (launch overheads included)."""
        return self._c.ratio

    def track_predicted_overlap_over_fused(self) -> float:
        """What early start gains over full barriers, as a fraction of the SuperKernel's time."""
        return (self._c.overlap_us or 0.0) / self._c.fused_us


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(measure(os.path.join(tmp, "cold")), indent=1))
    print(predicted().report())
