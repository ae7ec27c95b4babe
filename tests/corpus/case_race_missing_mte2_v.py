"""A vector op reads a tile before the MTE2 copy that fills it is synced (RAW).

The copy GM -> UB runs on MTE2 and the ``adds`` on V; nothing makes V wait for
MTE2, so on hardware ``adds`` may read the old contents of UB.  The fix is
``set_flag``/``wait_flag(HardEvent.MTE2_V)`` between them.
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import RAW_MTE2_V, run_ub

EXPECT = (RaceError, 'RAW: V read of UB bytes [0, 256) races with the MTE2 write')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(RAW_MTE2_V, fixed, **launch)
