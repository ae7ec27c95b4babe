"""The copy-out reads a vector result before the vector unit is known to be done (RAW).

``data_copy`` UB -> GM runs on MTE3; without ``HardEvent.V_MTE3`` it may
copy the tile before ``adds`` has written it.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import RAW_V_MTE3, run_ub

EXPECT = (RaceError, 'RAW: MTE3 read of UB bytes [256, 512) races with the V write')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(RAW_V_MTE3, fixed, **launch)
