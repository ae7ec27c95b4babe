"""A tiling cache with the replacement policy of ATB's kernel cache: a ring buffer, not LRU.

Tiling is host work an op repeats for every launch with the same shapes, so
ATB keeps recent tilings keyed by the launch parameters
(superkernel-binaries-tiling.md §3.7):

* insert writes the slot at ``replace_pos`` (wrapping to 0 at capacity), then
  advances it; ``valid_size`` grows up to the capacity.  Entries are evicted in
  insertion order whatever their hits (FIFO);
* lookup scans ``[hit_pos, valid_size)`` then ``[0, hit_pos)`` and moves
  ``hit_pos`` to the first match, so a run of launches with one shape hits
  on the first comparison.

Keys are compared with ``==``: :func:`launch_key` builds one from the tiling
function and its :class:`~npuemu.host.tiling.TilingContext` (shapes, dtypes,
formats, attributes, platform, deterministic flag, core cap).  The default
capacity is 5 (ATB's documented global default; its code defaults to 1),
overridable with ``$NPUEMU_TILING_CACHE_SIZE``; like ATB, sizes are clamped
to [1, 1024].  Cached results are shared: treat them as read-only.
"""
from __future__ import annotations

import copy
import os
import threading
from typing import Any, Callable

from .tiling import TilingContext, TilingFunction, TilingResult

DEFAULT_CAPACITY = 5
MAX_CAPACITY = 1024


def _clamp(capacity: int) -> int:
    return min(max(int(capacity), 1), MAX_CAPACITY)


def launch_key(tiling_fn: TilingFunction, ctx: TilingContext) -> tuple[Any, ...]:
    """The launch parameters a tiling depends on (compared with ``==``)."""
    return (tiling_fn, ctx.inputs, ctx.outputs, ctx.attrs, ctx.platform.name, ctx.platform.key,
            ctx.deterministic, ctx.core_num, ctx.tiling_data_capacity)


class TilingCache:
    """A fixed-size ring of (launch key, tiling result) slots with hit and miss counters."""

    def __init__(self, capacity: int | None = None):
        if capacity is None:
            capacity = int(os.environ.get("NPUEMU_TILING_CACHE_SIZE", DEFAULT_CAPACITY))
        self.capacity = _clamp(capacity)
        self._slots: list[tuple[Any, TilingResult]] = []
        self._replace_pos = 0
        self._hit_pos = 0
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._slots)

    def __repr__(self) -> str:
        return f"TilingCache(capacity={self.capacity}, size={len(self)}, hits={self.hits}, misses={self.misses})"

    def keys(self) -> list[Any]:
        """The cached keys in slot order (slot 0 first)."""
        return [k for k, _ in self._slots]

    def lookup(self, key: Any) -> TilingResult | None:
        """The result cached for ``key`` (counted as a hit), or None (a miss)."""
        with self._lock:
            n = len(self._slots)
            for i in (*range(self._hit_pos, n), *range(0, min(self._hit_pos, n))):
                if self._slots[i][0] == key:
                    self._hit_pos = i
                    self.hits += 1
                    return self._slots[i][1]
            self.misses += 1
            return None

    def insert(self, key: Any, result: TilingResult) -> None:
        """Store ``result`` in the next slot of the ring (evicting the oldest entry when full)."""
        with self._lock:
            if self._replace_pos >= self.capacity:
                self._replace_pos = 0
            entry = (key, copy.deepcopy(result))     # later edits of the caller's result do not leak in
            if self._replace_pos < len(self._slots):
                self._slots[self._replace_pos] = entry
            else:
                self._slots.append(entry)           # valid_size grows with replace_pos
            self._replace_pos += 1

    def get(self, tiling_fn: TilingFunction, ctx: TilingContext,
            compute: Callable[[], TilingResult] | None = None) -> TilingResult:
        """The cached tiling of ``ctx``, computing and inserting it on a miss."""
        key = launch_key(tiling_fn, ctx)
        result = self.lookup(key)
        if result is None:
            result = compute() if compute is not None else tiling_fn(ctx)
            self.insert(key, result)
        return result

    def clear(self) -> None:
        """Drop every entry and reset the counters."""
        with self._lock:
            self._slots.clear()
            self._replace_pos = self._hit_pos = 0
            self.hits = self.misses = 0

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "size": len(self._slots), "capacity": self.capacity}


_DEFAULT: TilingCache | None = None


def default_cache() -> TilingCache:
    """The process-wide cache ``run_op`` uses unless given another."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = TilingCache()
    return _DEFAULT
