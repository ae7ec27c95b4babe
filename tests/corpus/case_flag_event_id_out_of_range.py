"""An event id outside 0..7.
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import ID_RANGE, run_flags

EXPECT = (SyncError, 'set_flag(HardEvent.MTE3_S, 8): event id 8 is outside 0..7')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(ID_RANGE, fixed, **launch)
