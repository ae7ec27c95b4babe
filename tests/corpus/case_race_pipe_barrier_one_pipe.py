"""``pipe_barrier(PIPE_V)`` between an MTE2 copy and a vector read orders nothing.

A barrier on one pipe only waits for that pipe's own earlier instructions;
the copy runs on MTE2.  The fix is ``pipe_barrier(PIPE_ALL)`` (or an
``MTE2_V`` flag).
"""
from __future__ import annotations

from npuemu.errors import RaceError

from .intra_core_kernels import BARRIER_ONE_PIPE, run_ub

EXPECT = (RaceError, 'RAW: V read of UB bytes [0, 256) races with the MTE2 write')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(BARRIER_ONE_PIPE, fixed, **launch)
