"""A mode-2 cross-core flag set by only one of the two AIVs of an AI Core: the AIC waits forever."""
from __future__ import annotations

from npuemu.errors import DeadlockError

from .cross_core_kernels import OK, ONE_AIV_SETS, run_relay

EXPECT = (DeadlockError, "cross_core_wait_flag(flag 1, mode 2): its counter is 0: 1 of 2 AIVs of its AI Core "
                         "has set it")
LEVELS = ("off", "default", "full")


def run(fixed: bool, **launch) -> None:
    run_relay(2, 3, OK if fixed else ONE_AIV_SETS, **launch)
