"""The cost model across a SuperKernel: each core's clock runs on from one sub-kernel to the next.

When every sub-kernel is built with ``profile=True`` the run keeps one set
of cost-model clocks per SuperKernel core (:class:`Clocks`).  A core's clock
is not reset between sub-kernels: sub-kernel ``k`` starts where the core's
clock stood after sub-kernel ``k - 1`` (its pipes' ready times, busy times,
GM bytes and HBM time carry on; its flag and queue times, which belong to
the sub-kernel's own TPipe, start afresh).  The inter-kernel barriers move
time between cores as ``cross_core_set_flag`` / ``cross_core_wait_flag`` do
(``npuemu/isa/cost.py``): each core's set half has a time, and a core that
passes a barrier's wait half starts nothing before the latest set time of
the cores it waits for.

* The set half of sub-kernel ``k`` happens at the core's end (every pipe
  done, no sooner than its GM bytes allow), for a core that did not run it
  at the time its clock stood (a complement set), and where
  ``set_next_task_start`` takes effect when its pipe has finished what was
  issued before the call (``COST_SK_SET``).
* The wait half before sub-kernel ``k`` holds every pipe of a waiting core
  at the start of ``k``; where ``wait_pre_task_end`` takes effect, at the
  call (the runner hands the release time over in ``COST_SK_OPEN``), so what
  the core issues before it overlaps the previous sub-kernel.

With early start off every barrier is a full one and no sub-kernel starts
before the slowest core of the previous one has ended.  The result is a
:class:`SuperKernelProfile`: a :class:`~npuemu.cost.Profile` of the one
launch (task time = one launch overhead + the slowest core's end), with
each sub-kernel's span per core.  The HBM bandwidth is shared by the cores
running the sub-kernel (as by its own launch), not by every core of the
SuperKernel.  An idle core's feed-sync-all complement ``sync_all`` arrives
and departs at its clock, as the sub-kernel's own do.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..cost.model import Profile
from ..errors import CostError
from ..isa import cost as isa_cost
from ..isa import state as S
from ..runtime.cores import recycle_core_states
from ..runtime.launch import TIMES_LISTENERS, LaunchTimes
from .config import active

if TYPE_CHECKING:
    from .execute import Run
    from .model import SuperKernel

_CARRY = slice(S.COST_ISSUE, S.COST_EVENT)      # the words a core's clock carries from sub-kernel to sub-kernel
_ISSUE, _READY = 0, 1
_PIPES = slice(_READY, _READY + S.N_COST_PIPES)
_HBM = S.COST_HBM - S.COST_ISSUE
_SK_SET, _SK_OPEN = S.COST_SK_SET - S.COST_ISSUE, S.COST_SK_OPEN - S.COST_ISSUE


def _now(w: np.ndarray) -> int:
    """The time a core has issued and finished everything it issued (ticks)."""
    return int(max(w[_ISSUE], w[_PIPES].max()))


def _end(w: np.ndarray) -> int:
    """A core's end: every pipe done, and no sooner than its GM bytes' share of the HBM allows."""
    return max(_now(w), int(w[_HBM]))


def unprofiled(sk: "SuperKernel") -> list[str]:
    """The sub-kernels of ``sk`` not built with ``profile=True``."""
    return [s.label for s in sk.subs if not s.binary.profile]


class Clocks:
    """Every core's cost-model clock across the sub-kernels of one run (see the module docstring)."""

    def __init__(self, run: "Run"):
        self.run = run
        n = len(run.cores)
        # the cores' states get the cost words for the whole run (each sub-kernel's reset keeps the size)
        small = list(run.states)
        for i in range(n):
            run.states[i] = _widen(run.states[i])
            run.templates[i] = _widen(run.templates[i])
        recycle_core_states([st for st in small if st.shape[0] < S.PROFILE_STATE_SIZE])
        self.words = [np.zeros(S.COST_EVENT - S.COST_ISSUE, np.int64) for _ in range(n)]
        self.set_at: dict[tuple[int, int], int] = {}           # (slot, k): when the core set k's set half
        self.start: dict[tuple[int, int], int] = {}            # (slot, k): the core's clock entering k
        self.spans: list[dict[int, tuple[int, int]]] = [{} for _ in run.sk.subs]    # k: slot -> (start, end)
        self.sharing = [max(1, sum(active(c, s.kernel_type, s.block_dim, run.ratio) for c in run.cores))
                        for s in run.sk.subs]                   # cores sharing the HBM in each sub-kernel
        self.trace: list[list[np.ndarray]] = [[] for _ in range(n)]
        self.charged = [0] * n

    # ------------------------------------------------------------------ the barriers

    def set_time(self, slot: int, k: int) -> int:
        """When core ``slot`` did the set half of sub-kernel ``k`` (ticks; now, for a set it made by
        set_next_task_start in ``k``, which it is still running)."""
        t = self.set_at.get((slot, k))
        if t is not None:
            return t
        if self.run._explicit_set(slot, k):
            st = self.run.states[slot]
            # a full barrier (debug-sync-all, an event) follows the whole sub-kernel: the core's clock so far
            return _end(st[_CARRY]) if self.run.barriers.is_full(k + 1) else int(st[S.COST_SK_SET])
        return 0

    def release(self, k: int) -> int:
        """When barrier ``k`` (before sub-kernel ``k``) lets its waiting cores go: the latest set of sub-kernel
        ``k - 1`` among the cores it waits for (under stream fusion: the latest end of each dependency)."""
        bars = self.run.barriers
        if bars.fused:
            return max((self.set_time(i, d) for d in bars.deps[k] for i in bars.typed(d)), default=0)
        return max((self.set_time(i, k - 1) for i in bars.group(k)), default=0)

    def passed(self, slot: int, k: int) -> None:
        """Core ``slot`` has passed barrier ``k``'s wait half before sub-kernel ``k``: it starts nothing sooner
        than the barrier's release."""
        w, t = self.words[slot], self.release(k)
        w[_ISSUE] = max(int(w[_ISSUE]), t)
        np.maximum(w[_PIPES], t, out=w[_PIPES])

    def opened(self, st: np.ndarray, k: int) -> None:
        """Barrier ``k`` has completed for a core (state ``st``) that runs sub-kernel ``k`` up to its
        wait_pre_task_end: the wait passes at the release time."""
        st[S.COST_SK_OPEN] = self.release(k)

    def arrive(self, st: np.ndarray) -> None:
        """An idle core arrives at a feed-sync-all complement ``sync_all`` (its state ``st`` holds its clock)."""
        isa_cost.sync_arrive(st, self.run.sysmem, 0.0, -1)

    def depart(self, slot: int, st: np.ndarray, aiv_only: bool) -> None:
        """... and leaves it with the last core's arrival: its clock moves on."""
        isa_cost.sync_depart(st, self.run.sysmem, aiv_only, -1)
        self.words[slot][:] = st[_CARRY]
        self.words[slot][_SK_SET] = self.words[slot][_SK_OPEN] = 0

    # ------------------------------------------------------------------ a sub-kernel on a core

    def enter(self, slot: int, k: int, st: np.ndarray) -> None:
        """Core ``slot`` starts sub-kernel ``k`` (its state ``st`` just reset): its clock carries on."""
        w = st[_CARRY]
        w[:] = self.words[slot]
        w[_SK_SET] = 0
        w[_SK_OPEN] = 0
        st[S.COST_CORES] = self.sharing[k]
        self.start.setdefault((slot, k), int(self.words[slot][_ISSUE]))

    def ended(self, slot: int, k: int, ran: bool) -> None:
        """Core ``slot`` has ended sub-kernel ``k`` (``ran``: it ran it, its state holds the clocks): its set
        half's time and, if it ran it, its clock and span."""
        run, w = self.run, self.words[slot]
        if ran:
            st = run.states[slot]
            w[:] = st[_CARRY]
            w[_SK_SET] = w[_SK_OPEN] = 0
            self.spans[k][slot] = (self.start.get((slot, k), 0), _end(w))
            n = int(st[S.TRACE_N])
            rows = st[S.TRACE:S.TRACE + min(n, S.TRACE_EVENTS) * S.TRACE_WORDS].reshape(-1, S.TRACE_WORDS).copy()
            rows[rows[:, 3] >= 0, 3] += run.loc_base[k]          # SuperKernel-wide source-location ids
            self.trace[slot].append(rows)
            self.charged[slot] += n
            if run.own_set[k] and st[S.SK_SET_N] > 0 and not run.barriers.is_full(k + 1):
                self.set_at[(slot, k)] = int(st[S.COST_SK_SET])
                return
        self.set_at[(slot, k)] = _end(w)

    # ------------------------------------------------------------------ the result

    def profile(self, publish: bool = True) -> "SuperKernelProfile":
        """The run's profile; ``publish``: hand its clocks to the launch's ``TIMES_LISTENERS`` as any profiled
        launch does (``npuemu.cost.record_profiles``, ``npuemu profile``)."""
        run = self.run
        p = run.platform
        trace = tuple(np.concatenate(t) if t else np.zeros((0, S.TRACE_WORDS), np.int64) for t in self.trace)
        times = LaunchTimes(run.sk.name, p, tuple(c.label for c in run.cores), tuple(c.core_type for c in run.cores),
                            np.stack(self.words), len(run.cores), (max(1, p.aiv_count), max(1, p.aic_count)),
                            trace, tuple(self.charged), tuple(run.all_locs))
        if publish:
            for listener in list(TIMES_LISTENERS):
                listener(times)
        tick = float(S.COST_TICK)
        spans = tuple({run.cores[i].label: (a / tick, b / tick) for i, (a, b) in sorted(d.items())}
                      for d in self.spans)
        return SuperKernelProfile(times, tuple(s.label for s in run.sk.subs), spans,
                                  run.sk.options.effective_early_start,
                                  all(run.barriers.is_full(k) for k in range(1, len(run.sk.subs))))


class SuperKernelProfile(Profile):
    """The estimated device time of a SuperKernel launch (``SuperKernel.run(profile=True).profile``).

    A :class:`~npuemu.cost.Profile` of the one launch: ``task_us`` is one launch overhead plus the slowest
    core's end.  ``spans[k]`` maps each core that ran sub-kernel ``k`` to its (start, end) in cycles: when it
    began issuing the sub-kernel, and when it had finished everything it issued up to the sub-kernel's end;
    ``full_barriers``: every inter-kernel barrier was a full one (early start off, or debug-sync-all).
    ``no_early_start``, when set (:func:`npuemu.superkernel.cost.profile`), is the profile of the same
    SuperKernel with full barriers and the sub-kernels' early-start calls doing nothing.
    """

    def __init__(self, times: LaunchTimes, sub_kernels: tuple[str, ...],
                 spans: tuple[dict[str, tuple[float, float]], ...], early_start: int, full_barriers: bool):
        super().__init__(times)
        self.sub_kernels = sub_kernels
        self.spans = spans
        self.early_start = early_start
        self.full_barriers = full_barriers
        self.no_early_start: SuperKernelProfile | None = None

    def sub_kernel_cycles(self, k: int) -> float:
        """Sub-kernel ``k``'s part of the launch: from its first core's start to its last core's end."""
        span = self.spans[k]
        if not span:
            raise CostError(f"SuperKernel '{self.kernel}': no core ran sub-kernel {k}")
        return max(b for _, b in span.values()) - min(a for a, _ in span.values())

    @property
    def overlap_cycles(self) -> float | None:
        """What early start (or stream fusion) gained: the kernel time with full barriers minus this run's (0
        when every barrier is a full one; None when that was not measured)."""
        if self.full_barriers:
            return 0.0
        if self.no_early_start is None:
            return None
        return self.no_early_start.kernel_cycles - self.kernel_cycles

    @property
    def overlap_us(self) -> float | None:
        c = self.overlap_cycles
        return None if c is None else c / self.clock_mhz

    def __repr__(self) -> str:
        return (f"<SuperKernelProfile {self.kernel}: {self.task_us:.2f} us, {len(self.sub_kernels)} sub-kernels "
                f"on {len(self.cores)} cores>")


def _widen(st: np.ndarray) -> np.ndarray:
    if st.shape[0] >= S.PROFILE_STATE_SIZE:
        return st
    big = np.zeros(S.PROFILE_STATE_SIZE, np.int64)
    big[:S.STATE_SIZE] = st
    return big


__all__ = ["Clocks", "SuperKernelProfile", "unprofiled"]
