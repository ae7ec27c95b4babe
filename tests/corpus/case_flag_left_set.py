"""A flag still set when the kernel ends (it would leak into the next kernel).
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import LEFT_SET, run_flags

EXPECT = (SyncError, 'the kernel ends with flag (HardEvent.MTE3_MTE2, 1) still set')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(LEFT_SET, fixed, **launch)
