"""The result of a profiled launch: per-core, per-pipe times and what they add up to.

A binary built with ``profile=True`` advances a timing model of each core's
pipes as it runs (``npuemu/isa/cost.py``, durations from the platform
profile by ``npuemu/frontend/costs.py``).  :class:`Profile` turns the clocks
the launch hands back into the figures msprof reports for a task: its
duration, and per core type the busy time and ratio of every pipe under
msprof's names (``aiv_vec_time``, ``aiv_mte2_ratio``, ``aic_mac_time``, ...),
the pipe that bounds the task, and how much of the HBM bandwidth it used.
See docs/cost-model.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CostError
from ..isa import state as S

if TYPE_CHECKING:
    from ..runtime.launch import LaunchTimes

PIPES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")      # isa.hb order
_N = S.N_COST_PIPES
_READY, _BUSY, _COUNT = 1, 1 + _N, 1 + 2 * _N
_GM = 1 + 3 * _N
_HBM = _GM + 2
# msprof's metric name of each pipe, per core type (pipes a core type lacks are left out)
MSPROF_NAMES = {
    "aiv": {"V": "vec", "S": "scalar", "MTE2": "mte2", "MTE3": "mte3"},
    "aic": {"M": "mac", "S": "scalar", "MTE1": "mte1", "MTE2": "mte2", "MTE3": "mte3", "FIX": "fixpipe"},
}


@dataclass(frozen=True)
class CoreTimes:
    """One core's clocks at the end of the launch, in cycles."""

    label: str
    kind: str                       # "aiv" or "aic"
    cycles: float                   # when its last pipe finished (no sooner than its share of the HBM allows)
    busy: dict[str, float]          # per pipe name
    count: dict[str, int]           # instructions per pipe
    gm_bytes: int
    hbm_cycles: float = 0.0         # what its GM bytes need of its share of the HBM bandwidth

    def ratio(self, pipe: str) -> float:
        """Share of the core's time pipe ``pipe`` was busy (0..1)."""
        return self.busy[pipe] / self.cycles if self.cycles > 0 else 0.0


class Profile:
    """The estimated device time of one launch (what ``kernel[n](..., profile=True)`` returns)."""

    def __init__(self, times: "LaunchTimes"):
        self.kernel: str = times.kernel
        self.platform: Any = times.platform
        self.active_cores: int = int(times.active)
        words = np.asarray(times.words, dtype=np.int64)
        self.cores: tuple[CoreTimes, ...] = tuple(
            _core(label, ctype, w) for label, ctype, w in zip(times.labels, times.core_types, words))
        self.kernel_cycles: float = _waves(self.cores, times.core_types, times.capacity)
        self.trace: tuple[np.ndarray, ...] = tuple(times.trace)     # per core: pipe, start, end, loc rows
        self.charged: tuple[int, ...] = tuple(times.charged)        # instructions each core charged
        self.locs: tuple[Any, ...] = tuple(times.locs)
        self.tick: int = S.COST_TICK

    # ------------------------------------------------------------------ the task

    @property
    def clock_mhz(self) -> float:
        return float(self.platform.clock_mhz)

    @property
    def overhead_cycles(self) -> float:
        """The fixed cost of a launch (``launch_overhead_us`` of the platform profile)."""
        return float(self.platform.launch_overhead_us) * self.clock_mhz

    @property
    def task_cycles(self) -> float:
        """Estimated task duration: the slowest core (waves in sequence) plus the launch overhead."""
        return self.kernel_cycles + self.overhead_cycles

    @property
    def task_us(self) -> float:
        return self.task_cycles / self.clock_mhz

    @property
    def kernel_us(self) -> float:
        """The cores' part of the task, without the launch overhead."""
        return self.kernel_cycles / self.clock_mhz

    # ------------------------------------------------------------------ per pipe

    def busy_cycles(self, pipe: str, kind: str | None = None) -> float:
        """Busy cycles of ``pipe`` on the slowest core (of core type ``kind``: ``aiv``/``aic``)."""
        core = self.critical_core(kind)
        return core.busy[_pipe(pipe)] if core is not None else 0.0

    def critical_core(self, kind: str | None = None) -> CoreTimes | None:
        """The core (of type ``kind``) that finished last."""
        cores = [c for c in self.cores if kind is None or c.kind == kind]
        return max(cores, key=lambda c: c.cycles) if cores else None

    @property
    def bound(self) -> str:
        """The pipe busy longest on the slowest core (``"MTE2"`` for an MTE2-bound task), or ``"HBM"`` when
        the core's GM traffic needs its share of the HBM bandwidth for longer than any pipe is busy."""
        core = self.critical_core()
        if core is None or not any(core.busy.values()):
            raise CostError(f"kernel '{self.kernel}': the launch charged no instruction")
        pipe = max(PIPES, key=lambda p: core.busy[p])
        return "HBM" if core.hbm_cycles > core.busy[pipe] else pipe

    @property
    def gm_bytes(self) -> int:
        """Bytes the launch's DMA moved to and from GM (every core)."""
        return sum(c.gm_bytes for c in self.cores)

    @property
    def hbm_utilisation(self) -> float:
        """GM bytes over what the HBM could have moved in the cores' time (0..1)."""
        seconds = self.kernel_cycles / (self.clock_mhz * 1e6)
        peak = float(self.platform.hbm_bandwidth_gbps) * 1e9 * seconds
        return self.gm_bytes / peak if peak > 0 else 0.0

    def unit_utilisation(self, pipe: str) -> float:
        """Busy cycles of ``pipe`` summed over the cores that have it, over what those cores could have given
        it in the cores' time (0..1).  The model runs a unit at its peak rate for the operand dtype whenever it
        is busy, so for ``"M"`` and ``"V"`` this is the utilisation of the cube and vector peak."""
        kind = "aic" if _pipe(pipe) in ("M", "MTE1", "FIX") else "aiv"
        cores = [c for c in self.cores if c.kind == kind] or list(self.cores)
        if not cores or self.kernel_cycles <= 0:
            return 0.0
        return sum(c.busy[_pipe(pipe)] for c in cores) / (len(cores) * self.kernel_cycles)

    @property
    def cube_utilisation(self) -> float:
        """The cube units' busy share of the cores' time (0..1; see :meth:`unit_utilisation`)."""
        return self.unit_utilisation("M")

    @property
    def vector_utilisation(self) -> float:
        """The vector units' busy share of the cores' time (0..1; see :meth:`unit_utilisation`)."""
        return self.unit_utilisation("V")

    @property
    def metrics(self) -> dict[str, float]:
        """msprof's per-task metrics: ``aiv_time`` (us), ``aiv_total_cycles``, ``aiv_vec_time`` (us, the mean
        over the AIVs), ``aiv_vec_ratio`` (that over ``aiv_time``), ... and the same ``aic_*`` for AICs."""
        out: dict[str, float] = {}
        for kind, names in MSPROF_NAMES.items():
            cores = [c for c in self.cores if c.kind == kind]
            if not cores:
                continue
            total = max(c.cycles for c in cores)
            out[f"{kind}_time"] = total / self.clock_mhz
            out[f"{kind}_total_cycles"] = total
            for pipe, name in names.items():
                busy = sum(c.busy[pipe] for c in cores) / len(cores)
                out[f"{kind}_{name}_time"] = busy / self.clock_mhz
                out[f"{kind}_{name}_ratio"] = busy / total if total > 0 else 0.0
        return out

    def __getattr__(self, name: str) -> float:
        if name.startswith(("aiv_", "aic_")):
            m = self.metrics
            if name in m:
                return m[name]
            raise CostError(f"kernel '{self.kernel}' ran no {'AIV' if name.startswith('aiv') else 'AIC'} "
                            f"cores (or msprof has no metric {name!r})")
        raise AttributeError(name)

    def summary(self) -> str:
        """A printed table: the task, then per core type the busy time and ratio of each pipe."""
        from .report import summary
        return summary(self)

    def write_trace(self, path: Any) -> str:
        """Write the pipeline as Chrome trace / Perfetto JSON (a track per core and pipe); returns the path."""
        from .trace import write_trace
        return write_trace(self, path)

    def write_chart(self, path: Any, cores: int = 4) -> str:
        """Draw the pipeline of the ``cores`` slowest cores and the pipes' busy ratios to a PNG (needs
        matplotlib); returns the path."""
        from .chart import write_chart
        return write_chart(self, path, cores)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (f"<Profile {self.kernel}: {self.task_us:.2f} us on {len(self.cores)} cores, "
                f"{self.bound}-bound>")


def _pipe(name: str) -> str:
    up = name.upper()
    if up not in PIPES:
        raise CostError(f"unknown pipe {name!r}; pipes: {', '.join(PIPES)}")
    return up


def _core(label: str, core_type: int, w: np.ndarray) -> CoreTimes:
    """A core's clocks from its words (times in ticks of 1 / COST_TICK cycle)."""
    tick = float(S.COST_TICK)
    end = max(int(w[0]), int(w[_READY:_READY + _N].max()), int(w[_HBM])) / tick
    busy = {p: int(w[_BUSY + i]) / tick for i, p in enumerate(PIPES)}
    count = {p: int(w[_COUNT + i]) for i, p in enumerate(PIPES)}
    return CoreTimes(label, "aic" if core_type else "aiv", end, busy, count, int(w[_GM]), int(w[_HBM]) / tick)


def _waves(cores: tuple[CoreTimes, ...], core_types: Any, capacity: tuple[int, int]) -> float:
    """The cores' part of the task: per core type, blocks beyond what the chip holds run in later waves."""
    total = 0.0
    for kind, cap in (("aiv", capacity[0]), ("aic", capacity[1])):
        times = [c.cycles for c in cores if c.kind == kind]
        waves = sum(max(times[i:i + cap]) for i in range(0, len(times), cap)) if times else 0.0
        total = max(total, waves)
    return total
