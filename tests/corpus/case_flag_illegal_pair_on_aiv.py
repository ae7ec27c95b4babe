"""A cube event pair (``FIX_MTE1``) used on a vector core, which has neither pipe.
"""
from __future__ import annotations

from npuemu.errors import SyncError

from .intra_core_kernels import ILLEGAL_PAIR, run_flags

EXPECT = (SyncError, 'FIX_MTE1 is not an event pair of an AIV core')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(ILLEGAL_PAIR, fixed, **launch)
