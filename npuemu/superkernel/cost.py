"""What fusing saves on the device: the cost model's estimate of a SuperKernel against separate launches.

Given the :class:`npuemu.cost.Profile` of each sub-kernel launched alone
(``kernel[n](..., profile=True)``), the separate launches take the sum of
their task times, each with the platform's launch overhead; the SuperKernel
takes one launch overhead plus each sub-kernel's cores' part in turn (the
inter-kernel barrier waits for the slowest core; its own cost, a few flag
round trips, is left out).  Early start's overlap needs to know where
``set_next_task_start`` / ``wait_pre_task_end`` sit in the sub-kernels'
timelines, which separate profiles do not say: ``overlap_us`` is reported
as 0 (not estimated).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import CostError


@dataclass(frozen=True)
class FusionCost:
    """Estimated device time (µs) of the sub-kernels launched one by one and fused."""

    separate_us: float
    fused_us: float
    overhead_saved_us: float
    overlap_us: float = 0.0

    @property
    def speedup(self) -> float:
        return self.separate_us / self.fused_us if self.fused_us else 1.0

    def report(self) -> str:
        """A short table for printing."""
        return (f"separate launches  {self.separate_us:10.2f} us\n"
                f"SuperKernel        {self.fused_us:10.2f} us  ({self.speedup:.2f}x)\n"
                f"launch overhead saved {self.overhead_saved_us:7.2f} us\n"
                f"early-start overlap   {self.overlap_us:7.2f} us (not estimated)")


def compare(profiles: Sequence[Any]) -> FusionCost:
    """The estimate for sub-kernels whose separate launches' profiles are ``profiles`` (in order)."""
    if not profiles:
        raise CostError("superkernel.cost.compare needs the profile of at least one launch")
    separate = sum(p.task_us for p in profiles)
    overhead = profiles[0].overhead_cycles / profiles[0].clock_mhz
    fused = overhead + sum(p.kernel_us for p in profiles)
    return FusionCost(separate_us=separate, fused_us=fused, overhead_saved_us=separate - fused)


__all__ = ["FusionCost", "compare"]
