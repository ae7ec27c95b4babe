"""Cores taking turns with wait_pre_block, one of which never calls notify_next_block."""
from __future__ import annotations

import numpy as np

from npuemu.errors import DeadlockError

from .cross_core_kernels import run_order

EXPECT = (DeadlockError, "waits for AIV 2 to notify_next_block (its slot holds 0, 1 is needed); AIV 2 finished "
                         "without notify_next_block")
LEVELS = ("off", "default", "full")


def run(fixed: bool, **launch) -> None:
    order = run_order(4, 1, skip=-1 if fixed else 2, **launch)
    np.testing.assert_array_equal(order, np.arange(4))
