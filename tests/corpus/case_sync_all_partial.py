"""A two-phase reduction whose last block returns early and skips the sync_all the others wait in."""
from __future__ import annotations

from npuemu.errors import DeadlockError

from .cross_core_kernels import run_reduce

EXPECT = (DeadlockError, "sync_all: 7 of 8 AIV cores arrived; AIV 7 finished without reaching it")
LEVELS = ("off", "default", "full")


def run(fixed: bool, **launch) -> None:
    got, expect = run_reduce(8, skip=-1 if fixed else 7, **launch)
    assert got == expect
