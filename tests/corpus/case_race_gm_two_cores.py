"""Two cores write overlapping GM bytes and never synchronise (WAW across cores).

Each core copies its half of ``x`` to ``z``, but the second core's slice
starts 8 elements early.  The cores run in parallel on hardware, so the last
writer of the overlap is a matter of timing.  The fix uses disjoint slices.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import run_split

EXPECT = (RaceError, "WAW: MTE3 write of GM bytes [224, 256) of GM argument 'z' (512 bytes) races with the MTE3 write by AIV 0")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    run_split(fixed, **launch)
