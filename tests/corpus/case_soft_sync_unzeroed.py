"""A soft sync_all on a GM workspace holding leftovers instead of zeros: some cores pass early, others never."""
from __future__ import annotations

import numpy as np

from npuemu.errors import DeadlockError

from .cross_core_kernels import SLOT, SOFT, run_reduce

EXPECT = (DeadlockError, "the GM workspace was not zeroed")
LEVELS = ("off", "default", "full")


def run(fixed: bool, **launch) -> None:
    ws = np.zeros(8 * SLOT, np.int32)
    if not fixed:
        ws[::SLOT] = [0, 2, 0, 1, 0, 0, 3, 0]      # what an earlier, different launch left behind
    got, expect = run_reduce(8, SOFT, ws=ws, **launch)
    assert got == expect
