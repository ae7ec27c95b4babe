"""MTE2 reloads a tile that MTE3 may still be copying out (WAR).

The loop reuses one UB tile: the second tile's copy-in (MTE2) overwrites the
buffer the first tile's copy-out (MTE3) reads.  The fix waits on
``HardEvent.MTE3_MTE2`` before reusing the buffer (what ``TQue``'s
``free_tensor``/``alloc_tensor`` do implicitly).
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import WAR_REUSE, run_ub

EXPECT = (RaceError, 'WAR: MTE2 write of UB bytes [0, 256) races with the MTE3 read')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(WAR_REUSE, fixed, **launch)
