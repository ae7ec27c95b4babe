"""Scheduler overhead per cross-core wait.

Kernels that do nothing but synchronise, timed with many and with no
iterations; the difference per iteration is what the cooperative scheduler
and the cross-core instructions cost:

* ping-pong: one AI Core of a MIX_AIC_1_2 kernel; the AIVs report to the AIC
  and the AIC releases them (flags in mode 2), so one iteration is one
  round trip AIV -> AIC -> AIV, i.e. two waits that each block and resume;
* sync_all: ``sync_all()`` on N AIV cores of a MIX_AIV_1_0 kernel; reported
  per barrier and per core passing it.

Compiled mode, kernels compiled before timing.
"""
from __future__ import annotations

import time

import numpy as np

import npuemu.asc as asc

ITERS = 2000


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def ping_pong(x: asc.GlobalAddress, iters: int):
    for i in range(iters):
        if asc.ascend_is_aiv():
            asc.cross_core_set_flag(1, 2, asc.PipeID.PIPE_MTE3)
            asc.cross_core_wait_flag(2, 2)
        else:
            asc.cross_core_wait_flag(1, 2)
            asc.cross_core_set_flag(2, 2, asc.PipeID.PIPE_FIX)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def barriers(x: asc.GlobalAddress, iters: int):
    for i in range(iters):
        asc.sync_all()


def _seconds(kernel, cores: int, iters: int, repeat: int = 5) -> float:
    x = np.zeros(8, np.float32)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        kernel[cores](x, iters)
        best = min(best, time.perf_counter() - t)
    return best


def _per_iteration(kernel, cores: int) -> float:
    """Seconds per iteration, launch overhead removed."""
    _seconds(kernel, cores, 1, repeat=1)                  # compile
    return (_seconds(kernel, cores, ITERS) - _seconds(kernel, cores, 0)) / ITERS


class CrossCoreWait:
    """Microseconds of scheduler and instruction overhead per cross-core wait."""

    timeout = 600

    def track_ping_pong_us_per_round_trip(self) -> float:
        """AIV -> AIC -> AIV over mode-2 flags (1 AIC + 2 AIVs)."""
        return _per_iteration(ping_pong, 1) * 1e6

    def track_sync_all_8_cores_us_per_barrier(self) -> float:
        return _per_iteration(barriers, 8) * 1e6

    def track_sync_all_48_cores_us_per_core_wait(self) -> float:
        """One barrier of 48 AIV cores, divided by the 48 cores that wait in it."""
        return _per_iteration(barriers, 48) * 1e6 / 48

    track_ping_pong_us_per_round_trip.unit = "us"  # type: ignore[attr-defined]
    track_sync_all_8_cores_us_per_barrier.unit = "us"  # type: ignore[attr-defined]
    track_sync_all_48_cores_us_per_core_wait.unit = "us"  # type: ignore[attr-defined]
