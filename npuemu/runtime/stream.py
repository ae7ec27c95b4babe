"""Streams: launches queued in order, run when the stream is synchronised.

Work put on a stream (:meth:`Stream.enqueue`) runs when the stream is
synchronised (:meth:`Stream.synchronize`, pyasc's
``asc.lib.runtime.synchronize``): in order, on the calling thread, and the
first failure is raised.  ``kernel[n, stream](...)`` queues its launch and
then synchronises the stream, as pyasc's launcher does after every launch, so
it returns with the kernel (and whatever was queued before it) finished;
callers that queue work without waiting (``npuemu.launch(..., wait=False)``)
see it run at the next synchronisation.  Running queued work there,
rather than on a background thread, keeps every result a function of the
kernel and its inputs: a program that reads an output before synchronising
sees it unwritten every time, where the device would show it half written
some of the time.  Launches queued after one that failed are dropped, as a
device stream stops at its first error; the stream can be used again.
"""
from __future__ import annotations

import atexit
import threading
import warnings
import weakref
from typing import Callable



class StreamWarning(UserWarning):
    """A stream still held launches when the program ended: they never ran."""


class Stream:
    """A queue of launches (``kernel[core_num, stream](...)``); :meth:`synchronize` runs them."""

    def __init__(self, device_id: int = 0, priority: int = 0):
        self.device_id = device_id
        self.priority = priority
        self._queue: list[tuple[Callable[[], None], str]] = []
        self._lock = threading.Lock()
        _LIVE.add(self)

    def __repr__(self) -> str:
        return f"<npuemu.Stream device={self.device_id}, {len(self._queue)} launch(es) queued>"

    @property
    def pending(self) -> int:
        """Launches queued and not run yet."""
        return len(self._queue)

    def enqueue(self, work: Callable[[], None], what: str) -> None:
        """Queue ``work`` (described as ``what`` in messages) behind what is already queued."""
        with self._lock:
            self._queue.append((work, what))

    def synchronize(self) -> None:
        """Run every queued launch in order; raise the first error (later launches are dropped)."""
        while True:
            with self._lock:
                if not self._queue:
                    return
                work, what = self._queue.pop(0)
            try:
                work()
            except BaseException:
                with self._lock:
                    dropped = len(self._queue)
                    self._queue.clear()
                if dropped:
                    warnings.warn(f"npuemu: {what} failed; the {dropped} launch(es) queued after it on the "
                                  f"same stream were dropped", StreamWarning, stacklevel=2)
                raise


_LIVE: "weakref.WeakSet[Stream]" = weakref.WeakSet()


def synchronize_all() -> None:
    """Synchronise every stream of the process (``synchronize_device``)."""
    for stream in list(_LIVE):
        stream.synchronize()


@atexit.register
def _warn_unsynchronised() -> None:
    pending = [s for s in list(_LIVE) if s.pending]
    if pending:
        n = sum(s.pending for s in pending)
        warnings.warn(f"npuemu: {n} launch(es) queued on a stream never ran: call stream.synchronize() "
                      f"(pyasc: asc.lib.runtime.synchronize()) before reading their outputs", StreamWarning)


__all__ = ["Stream", "StreamWarning", "synchronize_all"]
