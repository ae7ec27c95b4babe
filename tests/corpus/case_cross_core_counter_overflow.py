"""The AIC raises a flag every round, the AIVs consume it once after the loop: its counter passes 15."""
from __future__ import annotations

from npuemu.errors import SyncError

from .cross_core_kernels import NOTE_EACH_ROUND, OK, run_relay

EXPECT = (SyncError, "cross-core flag 5 of AIV 0 would count past 15")
LEVELS = ("off", "default", "full")


def run(fixed: bool, **launch) -> None:
    run_relay(1, 16, OK if fixed else NOTE_EACH_ROUND, **launch)
