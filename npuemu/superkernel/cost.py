"""What fusing saves on the device: the cost model's figures for a SuperKernel against separate launches.

Given the :class:`npuemu.cost.Profile` of each sub-kernel launched alone
(``kernel[n](..., profile=True)``), the separate launches take the sum of
their task times, each with the platform's launch overhead.

The SuperKernel's own time comes from a profiled run of it
(:func:`profile`, or ``SuperKernel.run(profile=True).profile`` when its
sub-kernels are built with ``profile=True``; npuemu/superkernel/profile.py):
one launch overhead plus the slowest core's end, each core's clock running
on from one sub-kernel to the next and each inter-kernel barrier holding
its waiting cores until the last set of the cores it waits for.
:func:`profile` also runs the SuperKernel with full barriers (as
``early-start=0``, the sub-kernels' ``set_next_task_start`` /
``wait_pre_task_end`` doing nothing) on a copy of its GM contents; the
overlap early start gains is that run's time minus the real one's.  So

* ``overhead_saved_us`` = separate launches - SuperKernel with full
  barriers (about ``(n - 1) x launch_overhead_us``);
* ``overlap_us`` = SuperKernel with full barriers - SuperKernel as run;
* ``fused_us`` = separate - both.

Without a profiled SuperKernel run, :func:`compare` estimates the fused
time from the separate profiles alone (one launch overhead plus each
sub-kernel's cores' part in turn: full barriers, whose own cost, a few flag
round trips, is left out) and reports the overlap as not estimated.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..errors import CostError
from .profile import SuperKernelProfile, unprofiled


@dataclass(frozen=True)
class FusionCost:
    """Device time (µs) of the sub-kernels launched one by one and fused.

    ``overhead_saved_us``: separate launches - the SuperKernel with full barriers; ``overlap_us``: that - the
    SuperKernel as run (what early start gains).  ``overlap_us`` is None when it was not estimated (no
    profiled SuperKernel run, or none with full barriers to hold it against); ``overhead_saved_us`` is then
    separate - fused."""

    separate_us: float
    fused_us: float
    overhead_saved_us: float
    overlap_us: float | None = None

    @property
    def speedup(self) -> float:
        return self.separate_us / self.fused_us if self.fused_us else 1.0

    @property
    def ratio(self) -> float:
        """Fused over separate time (below 1 when fusing pays)."""
        return self.fused_us / self.separate_us if self.separate_us else 1.0

    def report(self) -> str:
        """A short table for printing."""
        overlap = ("      - us (not estimated)" if self.overlap_us is None else f"{self.overlap_us:7.2f} us")
        return (f"separate launches  {self.separate_us:10.2f} us\n"
                f"SuperKernel        {self.fused_us:10.2f} us  ({self.speedup:.2f}x)\n"
                f"launch overhead saved {self.overhead_saved_us:7.2f} us\n"
                f"early-start overlap   {overlap}")


def compare(profiles: Sequence[Any], fused: SuperKernelProfile | None = None) -> FusionCost:
    """The figures for sub-kernels whose separate launches' profiles are ``profiles`` (in order).

    ``fused``: the profile of a profiled run of the SuperKernel (:func:`profile`); without it the fused time
    is estimated from ``profiles`` alone (full barriers, no overlap estimated).
    """
    if not profiles:
        raise CostError("superkernel.cost.compare needs the profile of at least one launch")
    separate = sum(p.task_us for p in profiles)
    if fused is None:
        overhead = profiles[0].overhead_cycles / profiles[0].clock_mhz
        estimate = overhead + sum(p.kernel_us for p in profiles)
        return FusionCost(separate_us=separate, fused_us=estimate, overhead_saved_us=separate - estimate)
    if not isinstance(fused, SuperKernelProfile):
        raise CostError(f"superkernel.cost.compare: fused must be a SuperKernel's profile "
                        f"(superkernel.cost.profile(sk)), got {type(fused).__name__}")
    if len(fused.sub_kernels) != len(profiles):
        raise CostError(f"superkernel.cost.compare: {len(profiles)} separate profiles for SuperKernel "
                        f"'{fused.kernel}' of {len(fused.sub_kernels)} sub-kernels")
    overlap = fused.overlap_us
    full = fused.task_us + (overlap or 0.0)
    return FusionCost(separate_us=separate, fused_us=fused.task_us, overhead_saved_us=separate - full,
                      overlap_us=overlap)


def profile(sk: Any, *, baseline: bool = True, timeout: float | None = None,
            max_steps: int | None = None) -> SuperKernelProfile:
    """Run the SuperKernel ``sk`` (every sub-kernel built with ``profile=True``) and return its profile.

    With ``baseline`` and early start in effect, the SuperKernel first runs with full barriers between its
    sub-kernels (``early-start=2:debug-sync-all=1``: as early start off, the sub-kernels' calls doing nothing)
    on its GM contents, which are then put back; that profile is the result's ``no_early_start`` and gives
    its ``overlap_us``.  The outputs are those of the real run.
    """
    from .execute import Run, run_superkernel
    missing = unprofiled(sk)
    if missing:
        raise CostError(f"SuperKernel '{sk.name}': sub-kernel(s) {', '.join(missing)} are not built with "
                        f"profile=True; launch them with profile=True (or set NPUEMU_PROFILE=1) to profile the "
                        f"SuperKernel")
    plain = None
    opts = sk.options
    if baseline and (opts.effective_early_start != 0 or opts.stream_fusion) and not opts.debug_sync_all:
        full = dataclasses.replace(sk, options=dataclasses.replace(opts, early_start=2, debug_sync_all=True))
        run = Run(full, timeout, max_steps, True)
        saved = [r.bytes.copy() for r in run.gm.regions]
        try:
            run.run()
        finally:
            for r, b in zip(run.gm.regions, saved):
                np.copyto(r.bytes, b)
        assert run.clocks is not None
        plain = run.clocks.profile(publish=False)
    got = run_superkernel(sk, timeout=timeout, max_steps=max_steps, profile=True).profile
    assert got is not None
    got.no_early_start = plain
    return got


__all__ = ["FusionCost", "compare", "profile"]
