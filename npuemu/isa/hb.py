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

# pipes, in the order of the clock vectors (PipeID values differ: see PIPE_OF)
S, V, M, MTE1, MTE2, MTE3, FIX = range(7)
N_PIPES = 7


def core_words(ncores: int, lm_bytes: int) -> int:
    """Size in int64 words of a core's ``sh`` array at check level ``full``."""
    return 1


def gm_words(nbytes: int, system: bool, ncores: int) -> int:
    """Size in int64 words of one GM region's shadow at check level ``full``."""
    return 1
