"""What a kernel left behind when it ended: queue buffers it never freed (check level ``full``), and
copies whose tail the hardware dropped (every level).

On hardware a tensor taken with ``alloc_tensor`` (or ``deque``) and never
given back with ``free_tensor`` is harmless while the kernel is short, and a
hang in the next ``alloc_tensor`` once the loop runs one more time than the
test did.  After a launch at check level ``full`` every core's queue table is
read and each block still allocated, enqueued or dequeued is reported as a
:class:`~npuemu.errors.UnfreedTensorWarning` naming the line of the
``alloc_tensor`` that took it and of the ``init_buffer`` that set its queue
up, once per line for all the cores it happened on.
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np

from ..errors import PartialCopyWarning, SourceLoc, UnfreedTensorWarning
from ..isa import state as S
from .cores import CoreSpec

_STATE = {S.BLK_ALLOCATED: "allocated", S.BLK_ENQUEUED: "enqueued and never dequeued",
          S.BLK_DEQUEUED: "dequeued"}


def unfreed_tensors(kernel: str, cores: Sequence[CoreSpec], states: Sequence[np.ndarray],
                    locs: Sequence[SourceLoc]) -> list[str]:
    """One message per (alloc line, init line, state) of the buffers the cores did not free."""
    found: dict[tuple[int, int, int], list[str]] = {}
    for core, st in zip(cores, states):
        for qid in range(S.MAX_QUEUES):
            q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
            for b in range(int(st[q + S.Q_NBLK])):
                state = int(st[q + S.Q_STATE + b])
                if state != S.BLK_FREE:
                    key = (int(st[q + S.Q_ALLOC_LOC + b]), int(st[q + S.Q_INIT_LOC]), state)
                    found.setdefault(key, []).append(core.label)
    return [_message(kernel, labels, locs, *key) for key, labels in found.items()]


def warn_partial_copies(kernel: str, cores: Sequence[CoreSpec], states: Sequence[np.ndarray],
                        locs: Sequence[SourceLoc]) -> None:
    """Warn once per line about count-form ``data_copy`` calls whose bytes were not whole 32-byte blocks:
    the hardware (and npuemu) copied the whole blocks only."""
    found: dict[int, list[tuple[str, int, int]]] = {}
    for core, st in zip(cores, states):
        n = int(st[S.PARTIAL_COPIES])
        if n:
            found.setdefault(int(st[S.PARTIAL_LOC]) - 1, []).append((core.label, n, int(st[S.PARTIAL_BYTES])))
    for loc, hits in found.items():
        label, n, dropped = hits[0]
        where = label if len(hits) == 1 else f"{len(hits)} cores ({label}, ...)"
        more = f" ({n} such copies on {label})" if n > 1 else ""
        warnings.warn(f"kernel '{kernel}', {where}: data_copy at {_line(locs, loc)} moved a count that is not a "
                      f"whole number of 32-byte blocks; the last {dropped} bytes were not copied{more}. The "
                      f"hardware does the same: copy the tail with data_copy_pad, or pad the count to 32 bytes",
                      PartialCopyWarning, stacklevel=5)


def _message(kernel: str, labels: list[str], locs: Sequence[SourceLoc], alloc: int, init: int, state: int) -> str:
    where = labels[0] if len(labels) == 1 else f"{len(labels)} cores ({labels[0]}, ...)"
    return (f"kernel '{kernel}', {where}: a tensor from {_line(locs, alloc)} was still {_STATE[state]} when the "
            f"kernel ended (its queue: {_line(locs, init)}); free_tensor it when done, or the next alloc_tensor "
            f"of a longer run waits forever on hardware")


def _line(locs: Sequence[SourceLoc], loc_id: int) -> str:
    if 0 <= loc_id < len(locs):
        loc = locs[loc_id]
        return f"{loc.short()} `{loc.line_text.strip()}`"
    return f"location {loc_id}"


def warn_unfreed(kernel: str, cores: Sequence[CoreSpec], states: Sequence[np.ndarray],
                 locs: Sequence[SourceLoc]) -> None:
    """Warn about every buffer the launch's cores did not free."""
    for message in unfreed_tensors(kernel, cores, states, locs):
        warnings.warn(message, UnfreedTensorWarning, stacklevel=5)
