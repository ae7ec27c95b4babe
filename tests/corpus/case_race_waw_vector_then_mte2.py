"""MTE2 overwrites a tile the vector unit may still be filling (WAW).

The kernel zero-fills a tile with ``duplicate`` (V) and copies half a tile
from GM over it (MTE2).  Without ``HardEvent.V_MTE2`` the two writes may land
in either order.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import WAW, run_ub

EXPECT = (RaceError, 'WAW: MTE2 write of UB bytes [0, 128) races with the V write')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(WAW, fixed, **launch)
