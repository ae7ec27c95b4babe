"""Core 1 reads GM that core 0 writes, with no cross-core barrier (RAW across cores).

The fix puts ``sync_all()`` between core 0's copy-out and core 1's copy-in.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import run_handoff

EXPECT = (RaceError, "RAW: MTE2 read of GM bytes [0, 256) of GM argument 'z' (512 bytes) races with the MTE3 write by AIV 0")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    run_handoff(fixed, **launch)
