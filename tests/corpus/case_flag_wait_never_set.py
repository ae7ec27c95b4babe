"""A ``wait_flag`` that no ``set_flag`` satisfies: the pipe would wait forever.

npuemu reports it at the wait instead of hanging.
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import WAIT_NEVER_SET, run_flags

EXPECT = (SyncError, 'wait_flag(HardEvent.MTE3_S, 0) waits for a flag no earlier set_flag left set')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(WAIT_NEVER_SET, fixed, **launch)
