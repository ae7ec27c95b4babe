"""``alloc_tensor`` from a one-buffer queue whose buffer was never freed (a hang on hardware).
"""
from __future__ import annotations

from npuemu.errors import QueueError

from .intra_core_kernels import QUEUE_NO_FREE, run_flags

EXPECT = (QueueError, 'alloc_tensor: all 1 buffers of the queue are in use')
LEVELS = ('off', 'default', 'full')


def run(fixed: bool, **launch) -> None:
    run_flags(QUEUE_NO_FREE, fixed, **launch)
