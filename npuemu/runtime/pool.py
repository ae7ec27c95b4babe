"""One pool of recycled per-core arrays: local memories and race-checker shadows.

A launch needs large per-core arrays (19 MiB of local memory for 24 cube
cores; hundreds of KiB of shadow per core at check level ``full``).
Allocating them afresh costs the OS mapping and zeroing new pages, every
launch, which is more than a small kernel's own run time.  Arrays are
therefore recycled: a launch takes arrays from the pool and gives them back
when its cores have stopped (:meth:`ArrayPool.give`), or lends out a view
that brings the array back when it is garbage (:meth:`ArrayPool.lend`).  An
array taken from the pool holds stale data; the caller resets what it needs.
At most ``max_bytes`` are kept, dropping the arrays of the least recently used
shapes first.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, Hashable

import numpy as np


class ArrayPool:
    """Recycled arrays by shape key; thread-safe."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._free: OrderedDict[Hashable, list[tuple[np.ndarray, Any]]] = OrderedDict()   # least recently given first
        self._bytes = 0
        self._lock = threading.Lock()
        self._loans: dict[int, tuple[Any, Hashable, np.ndarray]] = {}

    @property
    def pooled_bytes(self) -> int:
        """Bytes of arrays waiting in the pool."""
        return self._bytes

    def take(self, key: Hashable) -> np.ndarray | None:
        """A pooled array for ``key`` (stale contents), or None."""
        got = self.take_with_note(key)
        return None if got is None else got[0]

    def take_with_note(self, key: Hashable) -> tuple[np.ndarray, Any] | None:
        """A pooled array for ``key`` and the note it was given back with (see :meth:`give`), or None."""
        with self._lock:
            free = self._free.get(key)
            if not free:
                return None
            arr, note = free.pop()
            self._bytes -= arr.nbytes
            return arr, note

    def give(self, key: Hashable, arr: np.ndarray, note: Any = None) -> None:
        """Keep ``arr`` for a later :meth:`take` of ``key``, dropping older shapes if the pool is full.

        ``note`` travels with the array (e.g. which of its bytes are stale).
        """
        if arr.nbytes > self.max_bytes:
            return
        with self._lock:
            while self._bytes + arr.nbytes > self.max_bytes:
                oldest = next(iter(self._free))
                arrays = self._free[oldest]
                if arrays:
                    self._bytes -= arrays.pop()[0].nbytes
                if not arrays:
                    del self._free[oldest]
            self._free.setdefault(key, []).append((arr, note))
            self._free.move_to_end(key)
            self._bytes += arr.nbytes

    def lend(self, key: Hashable, arr: np.ndarray) -> np.ndarray:
        """A view of ``arr`` that gives ``arr`` back to the pool when the view is garbage."""
        view = arr[:]
        ref = weakref.ref(view, self._returned)       # (weakref.finalize costs five times as much)
        self._loans[id(ref)] = (ref, key, arr)
        return view

    def _returned(self, ref: Any) -> None:
        loan = self._loans.pop(id(ref), None)
        if loan is not None:
            self.give(loan[1], loan[2])

    def clear(self) -> None:
        """Drop every pooled array (loans still out come back later)."""
        with self._lock:
            self._free.clear()
            self._bytes = 0


POOL = ArrayPool(512 << 20)        # virtual size kept; pages a launch never touched cost no memory
