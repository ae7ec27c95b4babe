"""sync_all in a launch of more blocks than the platform has AIV cores: the extra block can never start."""
from __future__ import annotations

from npuemu.errors import DeadlockError
from npuemu.platform import get_platform

from .cross_core_kernels import run_reduce

PLATFORM = "Ascend910B1"
EXPECT = (DeadlockError, "49 blocks > 48 AIV cores: the launch runs in waves")
LEVELS = ("off", "default", "full")


def run(fixed: bool, **launch) -> None:
    cores = get_platform(PLATFORM).aiv_count + (0 if fixed else 1)
    got, expect = run_reduce(cores, platform=PLATFORM, **launch)
    assert got == expect
