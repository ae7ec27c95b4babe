"""Happens-before tracking for the race checker (check level ``full``).

Every core keeps one vector clock per pipe; the global clock index of pipe
``p`` of core ``c`` is ``c * N_PIPES + p``.  Instructions tick their pipe's
clock, synchronisation (event flags, queues, barriers, cross-core primitives)
joins clocks, and the shadow memories remember, per 32-byte block, which
pipe of which core last wrote and read it at what clock.  An access that is
not ordered after a conflicting one is a race.

Arrays: ``sh`` is a core's own int64 state (its pipe clocks, event-flag
snapshots, queue-block snapshots and the shadow of its local memories);
``gsh`` is the tuple of GM shadows, one per GM region, shared by all cores
(the last one, for npuemu's system region, also holds the clocks published
by cross-core sync objects).  Below ``full`` both are one-word dummies and
nothing here is called.
"""
from __future__ import annotations

from numba import njit

# pipes, in the order of the clock vectors (PipeID values differ: see PIPE_OF)
S, V, M, MTE1, MTE2, MTE3, FIX = range(7)
N_PIPES = 7


def core_words(ncores: int, lm_bytes: int) -> int:
    """Size in int64 words of a core's ``sh`` array at check level ``full``."""
    return 1


def gm_words(nbytes: int, system: bool, ncores: int) -> int:
    """Size in int64 words of one GM region's shadow at check level ``full``."""
    return 1


# --------------------------------------------------------------------------- cross-core sync objects
# Cross-core primitives (sync_all, cross_core_set_flag/wait_flag, ib_set/ib_wait, ...) publish the
# issuing pipe's clock into a sync object when they release and join it when they acquire, so GM
# accesses ordered by them are not reported as races.  Object ids are allocated by the cross-core
# instructions; MAX_SYNC_OBJECTS bounds them.

MAX_SYNC_OBJECTS = 256


@njit(cache=True)
def release(st, sh, gsh, pipe, obj, loc):
    """Pipe ``pipe`` of this core releases sync object ``obj`` (its past accesses become visible)."""


@njit(cache=True)
def acquire(st, sh, gsh, pipe, obj, loc):
    """Pipe ``pipe`` of this core acquires ``obj``: it is now ordered after every release of it."""
