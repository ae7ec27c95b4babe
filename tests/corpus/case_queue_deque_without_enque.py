"""``deque`` from a queue nothing was enqueued into (a hang on hardware).
"""
from __future__ import annotations

from npuemu.errors import QueueError

from .intra_core_kernels import QUEUE_EMPTY, run_flags

EXPECT = (QueueError, 'deque from an empty queue')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(QUEUE_EMPTY, fixed, **launch)
