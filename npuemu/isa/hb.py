"""Happens-before: the race checker's vector clocks and the synchronisation that moves them (level ``full``).

The hardware rule
-----------------
A core's scalar unit issues every instruction, in program order, into one
in-order queue per pipe (S, V, M, MTE1, MTE2, MTE3, FIX); the queues run in
parallel.  Two instructions on different pipes are ordered only by
synchronisation: ``set_flag``/``wait_flag``, ``pipe_barrier(PIPE_ALL)``,
``data_sync_barrier``, the implicit flags of ``TQue`` (enque/deque,
free_tensor/alloc_tensor) and, between cores, the cross-core primitives.
Two accesses to the same memory, at least one of them a write, that nothing
orders are a race: on hardware the result depends on timing.  npuemu runs
every instruction at issue, so it cannot see the wrong answer; it proves the
order instead, and reports an access that is not ordered after a conflicting
one.

Vector clocks
-------------
Each core keeps a 7 x 7 matrix ``LVC``: row ``p`` is what pipe ``p`` knows of
the core's pipes, ``LVC[p][p]`` its own clock.  An access is stamped with
``(pipe, clock, loc)``; it is ordered before a later access by pipe ``q`` when
``clock <= LVC[q][pipe]``.  Synchronisation moves knowledge:

* a *publication* (``set_flag`` on its source pipe, ``enque`` on the
  producer, ``free_tensor`` on the consumer, a cross-core release) copies the
  pipe's row into a snapshot slot; the pipe's next access starts a new epoch
  (clock + 1), so accesses after the snapshot are not covered by it;
* a *wait* (``wait_flag`` on its destination pipe, ``deque`` on the consumer,
  ``alloc_tensor`` on the producer, a cross-core acquire) joins (element-wise
  max) a snapshot into the waiting pipe's row;
* ``pipe_barrier(PIPE_ALL)`` and ``data_sync_barrier`` join every row into
  every row;
* the scalar unit issues everything, so what the S pipe has waited for is
  known to every pipe from then on: a wait on S is propagated to every row.

Clocks advance per epoch rather than per instruction: all accesses of a pipe
between two of its publications are ordered alike, so counting them would
add nothing.  The same per-pipe clocks are the timeline the cost model will
extend with durations.

Assumptions (documented in docs/checks.md):

* instructions on one pipe complete in program order (pyasc's auto-sync
  inserts the intra-pipe barriers; ``pipe_barrier(PIPE_V)`` and friends are
  therefore no-ops here);
* a scalar *read* of local memory completes before the scalar unit issues
  anything else, so it never races with a later instruction and is not
  recorded; a scalar *write* is posted and needs an ``S_X`` flag (or a
  barrier) before another pipe reads the data;
* ``data_sync_barrier`` is taken as a full barrier whatever its MemDsbT.

The rest of the checker
-----------------------
Accesses are stamped (:func:`stamp`) and recorded in shadow memory, local
memory by :mod:`npuemu.isa.local_shadow` and GM by :mod:`npuemu.isa.gm_shadow`;
:mod:`npuemu.isa.race_report` turns their faults into messages, and
:mod:`npuemu.runtime.shadows` allocates the arrays and compares the cores of
a launch that never synchronise once it is over.

Arrays
------
``sh`` is a core's own int64 state: the header and clocks laid out below,
then the cross-core clocks (``H_RVC``) and the local-memory range list
(``H_LOCAL``).  ``gsh`` is the tuple of GM shadows, one per GM region, each
starting with the ``GH_*`` header; the last, for npuemu's system region, also
holds the cross-core sync objects (``GH_OBJ``).  Below ``full`` both are
one-word dummies and nothing here runs.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..language.enums import HardEvent, PipeID
from . import state as ST
from .fault import Fault, register
from .shadow_ranges import CLOCK_MASK, CLOCK_SHIFT

# pipes, in the order of the clock vectors (PipeID values differ: see PIPE_OF)
S, V, M, MTE1, MTE2, MTE3, FIX = range(7)
N_PIPES = 7
PIPE_NAMES = ("S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX")

# PipeID -> hb pipe (-1: PIPE_ALL and the pipes A2/A3 do not have)
PIPE_OF = {PipeID.PIPE_S: S, PipeID.PIPE_V: V, PipeID.PIPE_M: M, PipeID.PIPE_MTE1: MTE1,
           PipeID.PIPE_MTE2: MTE2, PipeID.PIPE_MTE3: MTE3, PipeID.PIPE_FIX: FIX}


def _event_pipes() -> tuple[np.ndarray, np.ndarray]:
    """Source and destination pipe of every HardEvent (``X_Y``: X sets, Y waits)."""
    src = np.zeros(len(HardEvent), np.int64)
    dst = np.zeros(len(HardEvent), np.int64)
    for e in HardEvent:
        a, b = e.name.split("_")
        src[int(e)], dst[int(e)] = PIPE_NAMES.index(a), PIPE_NAMES.index(b)
    return src, dst


EVENT_SRC, EVENT_DST = _event_pipes()

# kinds of access (the ``write`` argument of checks.local_access / gm_access)
READ = 0
WRITE = 1
READ_SPAN = 2          # a bounding range of lanes that may skip blocks: races only, no uninitialised check

# --------------------------------------------------------------------------- stamps
# A stamp packs ``atomic << 58 | clock << 24 | loc << 3 | pipe`` into one int64 (0: no access); ``atomic``
# marks a GM write made in the core's atomic mode (isa/atomic.py): its operation + 1 (0: a plain write).

LOC_MASK = (1 << 21) - 1
BIG = np.int64(1) << np.int64(62)
ATOMIC_SHIFT = 58


@njit(cache=True)
def stamp(clock, loc, pipe):
    return (clock << CLOCK_SHIFT) | ((loc & LOC_MASK) << 3) | pipe


@njit(cache=True)
def stamp_loc_id(sh, loc):
    """The location id a stamp records for ``loc``: its SuperKernel-wide id in a sub-kernel (H_LOCBASE)."""
    return loc if loc >= GLOBAL_LOC else loc + sh[H_LOCBASE]


@njit(cache=True)
def stamp_clock(s):
    return (s >> CLOCK_SHIFT) & CLOCK_MASK


@njit(cache=True)
def stamp_atomic(s):
    return (s >> ATOMIC_SHIFT) & 3


@njit(cache=True)
def stamp_pipe(s):
    return s & 7


@njit(cache=True)
def stamp_loc(s):
    return (s >> 3) & LOC_MASK


# --------------------------------------------------------------------------- layout of ``sh``

H_SLOT = 0             # launch slot of the core
H_NCORES = 1
H_LMBYTES = 2
H_RVC = 3              # offset of the cross-core clocks (N_PIPES words per core of the launch)
H_LOCAL = 4            # offset of the local-memory range list
H_LOCBASE = 5          # added to the location ids stamps record (a SuperKernel's sub-kernels: see superkernel/)
GLOBAL_LOC = 1 << 20   # location ids from here on are a SuperKernel's global ones: stamped as they are
H_PUB = 8              # N_PIPES words: 1 when the pipe has published since its last access
H_LIM = 16             # N_PIPES + 1 words of scratch: what the accessing pipe knows
HDR = 24
LVC = HDR                               # N_PIPES x N_PIPES
SNAP = 8                                # words per snapshot slot: [target pipe + 1, 7 clocks]
FSNAP = LVC + 56                        # one slot per (HardEvent, event id)
QSNAP = FSNAP + ST.N_EVENTS * ST.N_EVENT_IDS * SNAP      # one slot per (queue, block)
FIXED = QSNAP + ST.MAX_QUEUES * ST.MAX_QUEUE_BLOCKS * SNAP

# --------------------------------------------------------------------------- header of a GM shadow

GH_NCORES = 0
GH_ONLINE = 1          # 1: check other cores' ranges at each access (cores run one at a time)
GH_NBYTES = 2
GH_OBJ = 3             # offset of the sync objects (system region only, else 0)
GH_PART = 4            # words per core list
GH_DIRTY = 5           # 1 once a cross-core primitive has written the sync objects
GH_UNINIT = 6          # 1: the host passed the region uninitialised (a workspace): reading unwritten bytes is an error
GH = 8

MAX_SYNC_OBJECTS = 256

# the one race-checker fault about its own state (the others: race_report)
F_SYNC_OBJECT = 764

register({
    F_SYNC_OBJECT: (errors.KernelFault,
                    lambda a, b, c, env: f"internal error: race-checker sync object {a} outside 0..{b - 1}"),
})


# --------------------------------------------------------------------------- clocks


@njit(cache=True)
def row(p):
    """Where pipe ``p``'s row of ``LVC`` starts in ``sh``."""
    return LVC + p * N_PIPES


@njit(cache=True)
def epoch(sh, p):
    """The clock of pipe ``p``'s accesses now: a new epoch if it published since its last access."""
    if sh[H_PUB + p] != 0:
        sh[H_PUB + p] = 0
        sh[row(p) + p] += 1
    return sh[row(p) + p]


@njit(cache=True)
def known_by(sh, pipe):
    """Fill the scratch row ``sh[H_LIM:H_LIM + 8]`` with what ``pipe`` knows (of itself: everything)."""
    r = row(pipe)
    for q in range(N_PIPES):
        sh[H_LIM + q] = sh[r + q]
    sh[H_LIM + pipe] = BIG
    sh[H_LIM + 7] = BIG                          # no pipe 7: keeps the lookups in bounds


@njit(cache=True)
def _snapshot(sh, p, slot, target):
    """Publish pipe ``p``'s knowledge into snapshot ``slot`` (``target``: the pipe meant to join it)."""
    sh[slot] = target + 1
    r = row(p)
    for q in range(N_PIPES):
        sh[slot + 1 + q] = sh[r + q]
    sh[H_PUB + p] = 1


@njit(cache=True)
def _max_into(dst, d, src, s, n):
    """``dst[d:d + n] = max(dst[d:d + n], src[s:s + n])``: merge clock vectors."""
    for i in range(n):
        if src[s + i] > dst[d + i]:
            dst[d + i] = src[s + i]


@njit(cache=True)
def _propagate_scalar(sh):
    """The scalar unit issues every instruction: whatever S has waited for, every pipe now knows."""
    for p in range(1, N_PIPES):
        _max_into(sh, row(p) + 1, sh, row(S) + 1, N_PIPES - 1)


@njit(cache=True)
def _join(sh, p, slot):
    """Pipe ``p`` waits for snapshot ``slot``; an empty slot (never published) is a no-op."""
    if sh[slot] == 0:
        return
    _max_into(sh, row(p), sh, slot + 1, N_PIPES)
    if p == S:
        _propagate_scalar(sh)


# --------------------------------------------------------------------------- flags, barriers, queues


@njit(cache=True)
def _ok_event(event, event_id):
    return 0 <= event < ST.N_EVENTS and 0 <= event_id < ST.N_EVENT_IDS


@instruction
def set_flag(st, sh, event, event_id, loc):
    """``set_flag(event, id)``: the source pipe publishes into the flag's slot."""
    if not _ok_event(event, event_id):
        return
    _snapshot(sh, EVENT_SRC[event], FSNAP + (event * ST.N_EVENT_IDS + event_id) * SNAP, EVENT_DST[event])


@instruction
def wait_flag(st, sh, event, event_id, loc):
    """``wait_flag(event, id)``: the destination pipe joins what the set published."""
    if not _ok_event(event, event_id):
        return
    slot = FSNAP + (event * ST.N_EVENT_IDS + event_id) * SNAP
    _join(sh, EVENT_DST[event], slot)
    sh[slot] = 0


@instruction
def barrier_all(st, sh, loc):
    """``pipe_barrier(PIPE_ALL)`` / ``data_sync_barrier``: every pipe learns everything; all publish."""
    for q in range(N_PIPES):
        top = sh[row(0) + q]
        for p in range(1, N_PIPES):
            top = max(top, sh[row(p) + q])
        for p in range(N_PIPES):
            sh[row(p) + q] = top
    for p in range(N_PIPES):
        sh[H_PUB + p] = 1


@njit(cache=True)
def _qslot(qid, blk):
    return QSNAP + (qid * ST.MAX_QUEUE_BLOCKS + blk) * SNAP


@njit(cache=True)
def _block(st, qid, addr):
    """Block index of a queue buffer at ``addr`` (-1 if it is not one; the queue op reports that)."""
    if qid < 0 or qid >= ST.MAX_QUEUES:
        return -1
    q = ST.QUEUE_BASE + qid * ST.QUEUE_STRIDE
    blk = st[q + ST.Q_BLKLEN]
    if blk <= 0:
        return -1
    rel = addr - st[q + ST.Q_BASE]
    if rel < 0 or rel % blk != 0 or rel // blk >= st[q + ST.Q_NBLK]:
        return -1
    return rel // blk


@instruction
def queue_publish(st, sh, qid, addr, pipe, target, loc):
    """``enque`` (producer publishes for the consumer) or ``free_tensor`` (consumer for the producer)."""
    b = _block(st, qid, addr)
    if b >= 0:
        _snapshot(sh, pipe, _qslot(qid, b), target)


@instruction
def queue_join(st, sh, qid, addr, pipe, loc):
    """``deque`` (consumer waits for the enque) or ``alloc_tensor`` (producer waits for the free)."""
    b = _block(st, qid, addr)
    if b >= 0:
        slot = _qslot(qid, b)
        _join(sh, pipe, slot)
        sh[slot] = 0


@njit(cache=True)
def join_queue(sh, qid):
    """Wait for every flag the blocks of queue ``qid`` hold, each on the pipe it was set for
    (``TBufPool.reset``, ``free_all_event``: the library waits for each buffer's free flag)."""
    for b in range(ST.MAX_QUEUE_BLOCKS):
        slot = _qslot(qid, b)
        if sh[slot] != 0:
            _join(sh, sh[slot] - 1, slot)
            sh[slot] = 0


@instruction
def pipe_reset(st, sh, loc):
    """``TPipe.reset()`` first waits for every freed buffer's flag, as the library does."""
    for i in range(ST.MAX_QUEUES * ST.MAX_QUEUE_BLOCKS):
        slot = QSNAP + i * SNAP
        if sh[slot] != 0:
            _join(sh, sh[slot] - 1, slot)
            sh[slot] = 0


# --------------------------------------------------------------------------- cross-core sync objects
# Cross-core primitives (sync_all, cross_core_set_flag/wait_flag, ib_set/ib_wait, ...) publish the
# issuing pipe's clocks into a sync object when they release and join them when they acquire.  An
# object holds N_PIPES clocks per core of the launch.  A core keeps one cross-core vector (RVC)
# shared by its pipes: what any of its pipes acquired, all of them know (exact when the acquiring
# pipe is S, the default of the cross-core waits; otherwise it can only hide a race).  Joins are
# monotone, so an object reused for successive barriers also hands out later releases: the callers
# choose object ids (0 <= obj < MAX_SYNC_OBJECTS) so that this hides races at worst.


@njit(cache=True)
def _sync_object(sh, g, pipe, obj, loc):
    """Where sync object ``obj``'s clocks start in ``g`` (-1: nothing to record for this pipe)."""
    if obj < 0 or obj >= MAX_SYNC_OBJECTS:
        raise Fault(F_SYNC_OBJECT, loc, obj, MAX_SYNC_OBJECTS, 0)
    if pipe < 0 or pipe >= N_PIPES or g[GH_OBJ] == 0:
        return -1
    return g[GH_OBJ] + obj * sh[H_NCORES] * N_PIPES


@njit(cache=True)
def _release(st, sh, g, pipe, obj, loc):
    base = _sync_object(sh, g, pipe, obj, loc)
    if base < 0:
        return
    g[GH_DIRTY] = 1
    _max_into(g, base, sh, sh[H_RVC], sh[H_NCORES] * N_PIPES)          # what this core knows of all cores
    _max_into(g, base + sh[H_SLOT] * N_PIPES, sh, row(pipe), N_PIPES)    # and what the releasing pipe did
    sh[H_PUB + pipe] = 1


@njit(cache=True)
def _acquire(st, sh, g, pipe, obj, loc):
    base = _sync_object(sh, g, pipe, obj, loc)
    if base < 0:
        return
    _max_into(sh, sh[H_RVC], g, base, sh[H_NCORES] * N_PIPES)
    _max_into(sh, row(pipe), g, base + sh[H_SLOT] * N_PIPES, N_PIPES)
    if pipe == S:
        _propagate_scalar(sh)


@instruction
def release(st, sh, gsh, pipe, obj, loc):
    """Pipe ``pipe`` of this core releases sync object ``obj`` (its past accesses become visible)."""
    _release(st, sh, gsh[len(gsh) - 1], pipe, obj, loc)


@instruction
def acquire(st, sh, gsh, pipe, obj, loc):
    """Pipe ``pipe`` of this core acquires ``obj``: it is now ordered after every release of it."""
    _acquire(st, sh, gsh[len(gsh) - 1], pipe, obj, loc)
