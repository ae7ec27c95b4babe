"""``TPipe.release_event_id`` of an id that was already given back.
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import RELEASE_TWICE, run_flags

EXPECT = (SyncError, 'release_event_id(0, HardEvent.MTE3_S): id 0 of MTE3_S is not allocated')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(RELEASE_TWICE, fixed, **launch)
