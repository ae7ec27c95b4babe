"""Scalar ``get_value`` of a tile the MTE2 copy is still filling (RAW).

The scalar unit reads UB as soon as it issues the read; without
``HardEvent.MTE2_S`` the copy may not have landed yet.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import SCALAR_READ, run_ub

EXPECT = (RaceError, 'RAW: S read of UB bytes [12, 16) races with the MTE2 write')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(SCALAR_READ, fixed, **launch)
