"""``TPipe.alloc_event_id`` without ``release_event_id``: the 8 ids of an event run out.
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import POOL_EXHAUSTED, run_flags

EXPECT = (SyncError, 'alloc_event_id(HardEvent.MTE3_S): all 8 event ids of MTE3_S are allocated')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(POOL_EXHAUSTED, fixed, **launch)
