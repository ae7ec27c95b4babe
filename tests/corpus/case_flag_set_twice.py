"""``set_flag`` twice on one (event, id) without a ``wait_flag`` in between.
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import SET_TWICE, run_flags

EXPECT = (SyncError, 'set_flag(HardEvent.MTE3_S, 0) while that flag is still set')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(SET_TWICE, fixed, **launch)
