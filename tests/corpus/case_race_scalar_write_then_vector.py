"""Scalar ``set_value`` writes into UB, then a vector op reads them without ``S_V``.

Scalar stores to UB are posted; the vector pipe may read the tile before they
land.  The fix is ``set_flag``/``wait_flag(HardEvent.S_V)``.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import SCALAR_WRITE, run_ub

EXPECT = (RaceError, 'RAW: V read of UB bytes [0, 256) races with the S write')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(SCALAR_WRITE, fixed, **launch)
