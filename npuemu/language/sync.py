"""Intra-core synchronisation between pipes (``SetFlag``/``WaitFlag``, ``PipeBarrier``, ``DataSyncBarrier``).

Signatures follow pyasc (``asc.language.basic.block_sync``).  npuemu runs a
core's instructions in program order, so these calls do not change results;
the rules they must obey (legal event pairs, ids 0..7, every set waited for
exactly once) are checked as described in ``npuemu/isa/sync.py``, and at
check level ``full`` they are what the race checker (``npuemu/isa/hb.py``)
takes as ordering between pipes.  TPipe's event-id pool
(``pipe.alloc_event_id`` and friends) is a method of ``TPipe``.
"""
from __future__ import annotations

from .builtin import builtin
from .enums import HardEvent, MemDsbT, PipeID

__all__ = ["set_flag", "wait_flag", "pipe_barrier", "data_sync_barrier"]


@builtin
def set_flag(event: HardEvent, event_id: int = 0) -> None:
    """Set flag ``(event, event_id)`` once the source pipe of ``event`` is done (``SetFlag<event>(id)``).

    ``event`` is a ``HardEvent`` constant ``SRC_DST``; ``event_id`` is 0..7.
    Every set must be consumed by exactly one ``wait_flag`` before the flag is
    set again and before the kernel ends.
    """


@builtin
def wait_flag(event: HardEvent, event_id: int = 0) -> None:
    """Stall the destination pipe of ``event`` until flag ``(event, event_id)`` is set, then clear it."""


@builtin
def pipe_barrier(pipe: PipeID) -> None:
    """Finish everything issued to ``pipe`` before anything later starts on it (``PipeBarrier<pipe>()``).

    ``PipeID.PIPE_S`` is not allowed; the pipe must exist on the core
    (AIV: V, MTE2, MTE3; AIC: M, MTE1, MTE2, MTE3, FIX; PIPE_ALL on both).
    ``PIPE_ALL`` orders every pipe after everything issued before it.
    """


@builtin
def data_sync_barrier(arg0: MemDsbT) -> None:
    """Wait until the core's memory accesses complete (``DataSyncBarrier<arg0>()``)."""
