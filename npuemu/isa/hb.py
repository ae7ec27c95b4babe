"""Happens-before tracking and the race checker (check level ``full``).

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

Shadow memory
-------------
Local memory (UB; L1/L0A/L0B/L0C/BT on an AIC) is shadowed per 32-byte
block: the last write stamp ``W`` and the last read stamp of each of three
reader slots ``R`` (a slot per reading pipe of a core type: AIV V/MTE3, AIC
MTE1/M|MTE3/FIX; a stamp names its pipe, so sharing a slot is safe).  A block
never written (no ``W``) is uninitialised: reading it is an error.

GM is shadowed per core and region with the last write and last read stamp
of *that core's* pipes, byte-exact (cores may write neighbouring bytes of one
block).  An access first checks its own core's ranges, then:

* in a launch whose cores wait for each other (they run one at a time),
  every other core's ranges, ordered by the cross-core clocks the primitives
  published through :func:`release` / :func:`acquire`;
* otherwise, after the launch: nothing orders accesses of different cores,
  so any byte one core writes and another touches is a race
  (:func:`cross_core_conflict`).  Cores then run in parallel: each writes
  only its own ranges.

Kernels touch memory in long runs (tiles, rows), so both shadows are kept
run-length encoded (:mod:`npuemu.isa.shadow_ranges`): a sorted list of
disjoint ranges (in blocks for local memory, in bytes for GM) whose stamps
agree, merged whenever neighbours agree.  An access costs a binary search
plus the ranges it overlaps, not one step per block.  Stamps pack
``clock << 24 | loc << 3 | pipe`` into one int64.

Arrays
------
``sh`` is a core's own int64 state (layout below, :func:`new_core_shadow`);
``gsh`` is the tuple of GM shadows, one per GM region (:func:`new_gm_shadows`);
the last, for npuemu's system region, also holds the cross-core sync
objects.  Below ``full`` both are one-word dummies and nothing here runs.
The arrays are recycled from one launch to the next (see "recycling the
arrays" below): allocating them afresh cost more than the checks.
"""
from __future__ import annotations

import mmap
import threading
import weakref
from collections import OrderedDict
from typing import Any, Sequence

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..language.enums import Hardware, HardEvent, PipeID, enum_name
from . import shadow_ranges as R
from . import state as ST
from .fault import Fault, Message, register
from .shadow_ranges import CLOCK_SHIFT, F_END, F_R, F_START, F_W, L_COUNT, L_OVER, LH

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

LOC_MASK = (1 << 21) - 1
BIG = np.int64(1) << np.int64(62)


@njit(cache=True, inline="always")
def _stamp(clock, loc, pipe):
    return (clock << CLOCK_SHIFT) | ((loc & LOC_MASK) << 3) | pipe


@njit(cache=True, inline="always")
def _clock(stamp):
    return stamp >> CLOCK_SHIFT


@njit(cache=True, inline="always")
def _pipe(stamp):
    return stamp & 7


@njit(cache=True, inline="always")
def _loc(stamp):
    return (stamp >> 3) & LOC_MASK



# --------------------------------------------------------------------------- layout of ``sh``

H_SLOT = 0             # launch slot of the core
H_NCORES = 1
H_LMBYTES = 2
H_RVC = 3              # offset of the cross-core clocks (N_PIPES words per core of the launch)
H_LOCAL = 4            # offset of the local-memory range list
H_PUB = 8              # N_PIPES words: 1 when the pipe has published since its last access
H_LIM = 16             # N_PIPES + 1 words of scratch: what the accessing pipe knows
HDR = 24
LVC = HDR                               # N_PIPES x N_PIPES
SNAP = 8                                # words per snapshot slot: [target pipe + 1, 7 clocks]
FSNAP = LVC + 56                        # one slot per (HardEvent, event id)
QSNAP = FSNAP + ST.N_EVENTS * ST.N_EVENT_IDS * SNAP      # one slot per (queue, block)
FIXED = QSNAP + ST.MAX_QUEUES * ST.MAX_QUEUE_BLOCKS * SNAP

N_RSLOTS = 3
LOCAL_WIDTH = 3 + N_RSLOTS
RSLOT = np.array([-1, 0, 1, 0, 2, 1, 2], np.int64)      # reader slot per pipe (S reads are not recorded)

# --------------------------------------------------------------------------- layout of a GM shadow

GH_NCORES = 0
GH_ONLINE = 1          # 1: check other cores' ranges at each access (cores run one at a time)
GH_NBYTES = 2
GH_OBJ = 3             # offset of the sync objects (system region only, else 0)
GH_PART = 4            # words per core list
GH_DIRTY = 5           # 1 once a cross-core primitive has written the sync objects
GH_UNINIT = 6          # 1: the host passed the region uninitialised (a workspace): reading unwritten bytes is an error
GH = 8
GM_WIDTH = 4

MAX_SYNC_OBJECTS = 256
_LAZY_BYTES = 1 << 20  # arrays at least this large come from mmap: pages never touched cost nothing


def _cap(nbytes: int) -> int:
    """GM ranges per core and region: plenty for streaming kernels; a full list is compacted."""
    return int(min(max(nbytes // 256, 256), 1 << 15))


def _local_cap(lm_bytes: int) -> int:
    return (lm_bytes + 31) // 32 + 1     # disjoint ranges of whole blocks: never more than the blocks


def core_words(ncores: int, lm_bytes: int) -> int:
    """Size in int64 words of a core's ``sh`` array at check level ``full``."""
    return FIXED + ncores * N_PIPES + LH + _local_cap(lm_bytes) * LOCAL_WIDTH


def gm_words(nbytes: int, system: bool, ncores: int) -> int:
    """Size in int64 words of one GM region's shadow at check level ``full``."""
    objs = MAX_SYNC_OBJECTS * ncores * N_PIPES if system else 0
    return GH + ncores * (LH + _cap(nbytes) * GM_WIDTH) + objs


def _zeros(nwords: int) -> np.ndarray:
    """A zeroed int64 array; large ones are mapped lazily so untouched pages cost nothing."""
    if nwords * 8 < _LAZY_BYTES:
        return np.zeros(nwords, np.int64)
    return np.frombuffer(mmap.mmap(-1, nwords * 8), np.int64)


# --------------------------------------------------------------------------- recycling the arrays
# Allocating and zeroing every core's shadow (hundreds of KiB each) and faulting in fresh pages
# would cost a launch more than checking all its accesses.  So the arrays are recycled: a launch gets
# views of pooled arrays, and when a view is dropped (the launch is over) its array returns to the
# pool.  Handing an array out again resets only what a fresh one would differ in: the headers, the
# first word of every snapshot slot (0: empty) and, if a cross-core primitive used them, the sync
# objects.  The records past a list's count are never read (see shadow_ranges).  The pool keeps at
# most _POOL_MAX_BYTES of arrays, dropping those of the least recently used shapes first.

_POOL: OrderedDict[tuple[int, ...], list[np.ndarray]] = OrderedDict()     # least recently returned first
_POOL_LOCK = threading.Lock()
_POOL_MAX_BYTES = 256 << 20    # virtual size kept; the pages a launch never touched cost no memory
_pooled_bytes = 0


def _take(key: tuple[int, ...], nwords: int) -> np.ndarray:
    """A pooled array for ``key`` (its contents are stale: the caller resets them) or a fresh one."""
    global _pooled_bytes
    with _POOL_LOCK:
        free = _POOL.get(key)
        if free:
            base = free.pop()
            _pooled_bytes -= base.nbytes
            return base
    return _zeros(nwords)


def _give_back(key: tuple[int, ...], base: np.ndarray) -> None:
    """Pool ``base``, dropping the arrays of the shapes least recently used if the pool is full."""
    global _pooled_bytes
    if base.nbytes > _POOL_MAX_BYTES:
        return
    with _POOL_LOCK:
        while _pooled_bytes + base.nbytes > _POOL_MAX_BYTES:
            oldest = next(iter(_POOL))
            arrays = _POOL[oldest]
            if arrays:
                _pooled_bytes -= arrays.pop().nbytes
            if not arrays:
                del _POOL[oldest]
        _POOL.setdefault(key, []).append(base)
        _POOL.move_to_end(key)
        _pooled_bytes += base.nbytes


_LOANS: dict[int, tuple[Any, tuple[int, ...], np.ndarray]] = {}


def _returned(ref: Any) -> None:
    loan = _LOANS.pop(id(ref), None)
    if loan is not None:
        _give_back(loan[1], loan[2])


def _lend(key: tuple[int, ...], base: np.ndarray) -> np.ndarray:
    """A view of ``base`` that returns ``base`` to the pool when it is garbage."""
    view = base[:]
    ref = weakref.ref(view, _returned)       # (weakref.finalize costs five times as much)
    _LOANS[id(ref)] = (ref, key, base)
    return view


_TEMPLATES: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _core_template(ncores: int, lm_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """What a fresh ``sh`` holds in its header and clocks, and in its cross-core clocks and list header."""
    t = _TEMPLATES.get((ncores, lm_bytes))
    if t is None:
        head = np.zeros(LVC + N_PIPES * N_PIPES, np.int64)
        head[H_NCORES], head[H_LMBYTES] = ncores, lm_bytes
        head[H_RVC], head[H_LOCAL] = FIXED, FIXED + ncores * N_PIPES
        head[LVC + np.arange(N_PIPES) * (N_PIPES + 1)] = 1       # clocks start at 1: a stamp is never 0
        tail = np.zeros(ncores * N_PIPES + LH, np.int64)         # cross-core clocks, local list header
        R.init_list(tail, ncores * N_PIPES, _local_cap(lm_bytes), LOCAL_WIDTH)
        t = _TEMPLATES[(ncores, lm_bytes)] = (head, tail)
    return t


def new_core_shadow(slot: int, ncores: int, lm_bytes: int) -> np.ndarray:
    """The ``sh`` array of the core at launch slot ``slot``."""
    key = (0, ncores, lm_bytes)
    sh = _take(key, core_words(ncores, lm_bytes))
    head, tail = _core_template(ncores, lm_bytes)
    sh[:head.size] = head
    sh[H_SLOT] = slot
    sh[FSNAP:FIXED:SNAP] = 0                   # every snapshot slot empty
    sh[FIXED:FIXED + tail.size] = tail
    return _lend(key, sh)


def new_gm_shadows(sizes: list[int], ncores: int, online: bool,
                   uninitialized: list[bool] | None = None) -> tuple[np.ndarray, ...]:
    """The GM shadows of a launch: one per region, the last one npuemu's system region.

    ``online``: the cores wait for each other and run one at a time, so each
    access checks the other cores' ranges as it happens; otherwise
    :func:`cross_core_conflict` compares them after the launch.
    ``uninitialized[i]``: region ``i`` holds nothing the host wrote, so a read
    of bytes no core has written is reported.
    """
    out = []
    for i, nbytes in enumerate(sizes):
        system = i == len(sizes) - 1
        key = (1, nbytes, int(system), ncores)
        g = _take(key, gm_words(nbytes, system, ncores))
        cap = _cap(nbytes)
        part = LH + cap * GM_WIDTH
        if system and g[GH_DIRTY]:
            g[GH + ncores * part:] = 0
        g[:GH] = 0
        g[GH_NCORES], g[GH_ONLINE], g[GH_NBYTES], g[GH_PART] = ncores, int(online), nbytes, part
        g[GH_UNINIT] = int(bool(uninitialized and uninitialized[i]))
        g[GH_OBJ] = GH + ncores * part if system else 0
        lists = GH + np.arange(ncores, dtype=np.int64) * part
        g[lists + R.L_COUNT] = 0
        g[lists + R.L_CAP] = cap
        g[lists + R.L_WIDTH] = GM_WIDTH
        g[lists + R.L_OVER] = 0
        out.append(_lend(key, g))
    return tuple(out)


# --------------------------------------------------------------------------- faults

F_RACE_LOCAL = 760
F_UNINIT_LOCAL = 761
F_RACE_GM = 762
F_RACE_GM_CORES = 763
F_SYNC_OBJECT = 764
F_UNINIT_GM = 765

_EVENT_OF = {(PIPE_NAMES.index(e.name.split("_")[0]), PIPE_NAMES.index(e.name.split("_")[1])): e.name
             for e in HardEvent}
_KIND = ("read", "write")


def hazard(write: int, other_write: int) -> str:
    """RAW, WAR or WAW: the later access's kind after the earlier one's."""
    return ("RR", "RAW", "WAR", "WAW")[2 * bool(write) + bool(other_write)]


@njit(cache=True, inline="always")
def _detail(pipe, write, other, other_write, where, other_loc, other_core):
    return (pipe | write << 3 | other << 4 | other_write << 7 | where << 8 | other_core << 16
            | (other_loc & LOC_MASK) << 32)


def unpack_detail(c: int) -> tuple[int, int, int, int, int, int, int]:
    return (c & 7, (c >> 3) & 1, (c >> 4) & 7, (c >> 7) & 1, (c >> 8) & 0xFF, (c >> 16) & 0xFFFF,
            (c >> 32) & LOC_MASK)


def _fix_hint(other: int, pipe: int) -> str:
    """What would have ordered an access of pipe ``other`` before one of pipe ``pipe``."""
    name = _EVENT_OF.get((other, pipe))
    if other == S:
        return f"missing set_flag/wait_flag {name} after the scalar write"
    if name is None:
        return "missing pipe_barrier(PIPE_ALL)"
    return f"missing set_flag/wait_flag {name}, or a queue"


def _memory_name(hw: int) -> str:
    return enum_name(Hardware, hw, "memory {}")


def _core_name(env: Any, slot: int) -> str:
    label = getattr(env, "core_label", None)
    return label(slot) if label is not None else f"the core in launch slot {slot}"


def _render_local_race(a: int, b: int, c: int, env: Any) -> Message:
    pipe, write, other, owrite, hw, _, oloc = unpack_detail(c)
    return Message(f"{hazard(write, owrite)}: {PIPE_NAMES[pipe]} {_KIND[write]} of {_memory_name(hw)} bytes "
                   f"[{a}, {b}) races with the {PIPE_NAMES[other]} {_KIND[owrite]} at {env.source(oloc)}: "
                   f"nothing orders them ({_fix_hint(other, pipe)})", PIPE_NAMES[pipe], _memory_name(hw))


def _render_uninit(a: int, b: int, c: int, env: Any) -> Message:
    pipe, _, _, _, hw, _, _ = unpack_detail(c)
    return Message(f"{PIPE_NAMES[pipe]} read of {_memory_name(hw)} bytes [{a}, {b}), which nothing has written: "
                   f"on hardware this reads whatever an earlier kernel left there", PIPE_NAMES[pipe],
                   _memory_name(hw))


def _render_uninit_gm(a: int, b: int, c: int, env: Any) -> Message:
    pipe, _, _, _, rid, _, _ = unpack_detail(c)
    return Message(f"{PIPE_NAMES[pipe]} read of GM bytes [{a}, {b}) of {env.region(rid)}, which nothing has "
                   f"written: the host passed that buffer uninitialised and no write ordered before this read "
                   f"filled these bytes, so on hardware it reads whatever was left in that memory",
                   PIPE_NAMES[pipe], env.region_name(rid))


def _render_gm_race(a: int, b: int, c: int, env: Any) -> Message:
    pipe, write, other, owrite, rid, _, oloc = unpack_detail(c)
    return Message(f"{hazard(write, owrite)}: {PIPE_NAMES[pipe]} {_KIND[write]} of GM bytes [{a}, {b}) of "
                   f"{env.region(rid)} races with the {PIPE_NAMES[other]} {_KIND[owrite]} at "
                   f"{env.source(oloc)}: nothing orders them ({_fix_hint(other, pipe)})",
                   PIPE_NAMES[pipe], env.region_name(rid))


def _render_gm_cores(a: int, b: int, c: int, env: Any) -> Message:
    pipe, write, other, owrite, rid, core, oloc = unpack_detail(c)
    return Message(f"{hazard(write, owrite)}: {PIPE_NAMES[pipe]} {_KIND[write]} of GM bytes [{a}, {b}) of "
                   f"{env.region(rid)} races with the {PIPE_NAMES[other]} {_KIND[owrite]} by "
                   f"{_core_name(env, core)} at {env.source(oloc)}: no cross-core synchronisation (sync_all, "
                   f"cross_core_set_flag/wait_flag, ...) orders them", PIPE_NAMES[pipe], env.region_name(rid))


register({
    F_RACE_LOCAL: (errors.RaceError, _render_local_race),
    F_UNINIT_LOCAL: (errors.UninitializedReadError, _render_uninit),
    F_RACE_GM: (errors.RaceError, _render_gm_race),
    F_UNINIT_GM: (errors.UninitializedReadError, _render_uninit_gm),
    F_RACE_GM_CORES: (errors.RaceError, _render_gm_cores),
    F_SYNC_OBJECT: (errors.KernelFault,
                    lambda a, b, c, env: f"internal error: race-checker sync object {a} outside 0..{b - 1}"),
})


# --------------------------------------------------------------------------- clocks


@njit(cache=True, inline="always")
def _row(p):
    return LVC + p * N_PIPES


@njit(cache=True, inline="always")
def _epoch(sh, p):
    """The clock of pipe ``p``'s accesses now: a new epoch if it published since its last access."""
    if sh[H_PUB + p] != 0:
        sh[H_PUB + p] = 0
        sh[_row(p) + p] += 1
    return sh[_row(p) + p]


@njit(cache=True, inline="always")
def _snapshot(sh, p, slot, target):
    """Publish pipe ``p``'s knowledge into snapshot ``slot`` (``target``: the pipe meant to join it)."""
    sh[slot] = target + 1
    r = _row(p)
    for q in range(N_PIPES):
        sh[slot + 1 + q] = sh[r + q]
    sh[H_PUB + p] = 1


@njit(cache=True, inline="always")
def _max_into(dst, d, src, s, n):
    """``dst[d:d + n] = max(dst[d:d + n], src[s:s + n])``: merge clock vectors."""
    for i in range(n):
        if src[s + i] > dst[d + i]:
            dst[d + i] = src[s + i]


@njit(cache=True, inline="always")
def _propagate_scalar(sh):
    """The scalar unit issues every instruction: whatever S has waited for, every pipe now knows."""
    for p in range(1, N_PIPES):
        _max_into(sh, _row(p) + 1, sh, _row(S) + 1, N_PIPES - 1)


@njit(cache=True, inline="always")
def _join(sh, p, slot):
    """Pipe ``p`` waits for snapshot ``slot``; an empty slot (never published) is a no-op."""
    if sh[slot] == 0:
        return
    _max_into(sh, _row(p), sh, slot + 1, N_PIPES)
    if p == S:
        _propagate_scalar(sh)


@njit(cache=True, inline="always")
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
        top = sh[_row(0) + q]
        for p in range(1, N_PIPES):
            top = max(top, sh[_row(p) + q])
        for p in range(N_PIPES):
            sh[_row(p) + q] = top
    for p in range(N_PIPES):
        sh[H_PUB + p] = 1


@njit(cache=True, inline="always")
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
    _max_into(g, base + sh[H_SLOT] * N_PIPES, sh, _row(pipe), N_PIPES)   # and what the releasing pipe did
    sh[H_PUB + pipe] = 1


@njit(cache=True)
def _acquire(st, sh, g, pipe, obj, loc):
    base = _sync_object(sh, g, pipe, obj, loc)
    if base < 0:
        return
    _max_into(sh, sh[H_RVC], g, base, sh[H_NCORES] * N_PIPES)
    _max_into(sh, _row(pipe), g, base + sh[H_SLOT] * N_PIPES, N_PIPES)
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



# --------------------------------------------------------------------------- local memory


@njit(cache=True, inline="always")
def _limits(sh, pipe):
    """Fill the scratch row with what ``pipe`` knows (of itself: everything)."""
    r = _row(pipe)
    for q in range(N_PIPES):
        sh[H_LIM + q] = sh[r + q]
    sh[H_LIM + pipe] = BIG
    sh[H_LIM + 7] = BIG                          # no pipe 7: keeps the lookups in bounds


@njit(cache=True, inline="always")
def _unordered(known, base, stamp):
    """Stamp ``stamp`` is an access the pipe whose knowledge is ``known[base:base + 8]`` is not ordered after."""
    return stamp != 0 and _clock(stamp) > known[base + _pipe(stamp)]


@njit(cache=True)
def _memory_of(st, addr):
    """(memory, its base) of the absolute local address ``addr``."""
    for hw in range(ST.N_HARDWARE):
        base = st[ST.SEG_BASE + hw]
        if st[ST.SEG_SIZE + hw] > 0 and base <= addr < base + st[ST.SEG_SIZE + hw]:
            return hw, base
    return 0, 0


@njit(cache=True)
def _local_fault(st, pipe, write, b0, b1, ostamp, owrite, addr, nbytes, loc):
    """Raise the race with ``ostamp`` (or, ``ostamp == 0``, the uninitialised read) on blocks [b0, b1)."""
    hw, base = _memory_of(st, b0 * 32)
    lo = max(b0 * 32, addr) - base
    hi = min(b1 * 32, addr + nbytes) - base
    if ostamp == 0:
        raise Fault(F_UNINIT_LOCAL, loc, lo, hi, _detail(pipe, 0, 0, 0, hw, 0, 0))
    raise Fault(F_RACE_LOCAL, loc, lo, hi, _detail(pipe, write, _pipe(ostamp), owrite, hw, _loc(ostamp), 0))


@njit(cache=True)
def _local_race(st, sh, pipe, write, lo, hi, rec, addr, nbytes, loc):
    """Raise the race of an access to blocks [lo, hi) with an access recorded at ``rec``."""
    r = _row(pipe)
    w = sh[rec + F_W]
    if w != 0 and _pipe(w) != pipe and _clock(w) > sh[r + _pipe(w)]:
        _local_fault(st, pipe, write, lo, hi, w, 1, addr, nbytes, loc)
    for k in range(N_RSLOTS):
        rd = sh[rec + F_R + k]
        if rd != 0 and _pipe(rd) != pipe and _clock(rd) > sh[r + _pipe(rd)]:
            _local_fault(st, pipe, write, lo, hi, rd, 0, addr, nbytes, loc)


@njit(cache=True, inline="always")
def local(st, sh, pipe, addr, nbytes, kind, loc):
    """Check and record an access of pipe ``pipe`` to ``nbytes`` of local memory at ``addr``.

    ``kind``: READ, WRITE or READ_SPAN (a bounding range: races only).  One
    binary search finds the ranges the access overlaps; they are checked
    (unwritten blocks, unordered accesses) and then updated.
    """
    if nbytes <= 0 or addr < 0 or addr + nbytes > sh[H_LMBYTES] or pipe < 0 or pipe >= N_PIPES:
        return                       # the instruction itself reports a bad operand
    b0 = addr >> 5
    b1 = (addr + nbytes + 31) >> 5
    write = kind == WRITE
    lst = sh[H_LOCAL]
    r = _row(pipe)
    count = sh[lst + L_COUNT]
    i0 = R.first_after(sh, lst, b0)
    i = i0
    cur = b0
    while i < count:
        rec = lst + LH + i * LOCAL_WIDTH
        s = sh[rec + F_START]
        if s >= b1:
            break
        e = sh[rec + F_END]
        w = sh[rec + F_W]
        if kind == READ and (s > cur or w == 0):
            _local_fault(st, pipe, 0, cur if s > cur else s, s if s > cur else e, 0, 0, addr, nbytes, loc)
        bad = w != 0 and _pipe(w) != pipe and _clock(w) > sh[r + _pipe(w)]
        if write:
            for k in range(N_RSLOTS):
                rd = sh[rec + F_R + k]
                bad |= rd != 0 and _pipe(rd) != pipe and _clock(rd) > sh[r + _pipe(rd)]
        if bad:
            _local_race(st, sh, pipe, write, max(s, b0), min(e, b1), rec, addr, nbytes, loc)
        cur = e
        i += 1
    if kind == READ and cur < b1:
        _local_fault(st, pipe, 0, cur, b1, 0, 0, addr, nbytes, loc)
    if kind != WRITE and pipe == S:
        return                       # a scalar read is over before anything else is issued
    stamp = _stamp(_epoch(sh, pipe), loc, pipe)
    R.apply_at(sh, lst, i0, i, b0, b1, -1 if write else RSLOT[pipe], stamp)


# --------------------------------------------------------------------------- GM


@njit(cache=True, inline="always")
def _part(g, core):
    return GH + core * g[GH_PART]


@njit(cache=True, inline="always")
def _check_gm(g, lst, off, end, write, known, base):
    """The first range of a core's list overlapping [off, end) that holds an access the accessing
    pipe (its knowledge of that core at ``known[base:base + 8]``) is not ordered after.

    Returns (record, offending stamp, its kind) or (-1, 0, 0).
    """
    count = g[lst + L_COUNT]
    i = R.first_after(g, lst, off)
    while i < count:
        r = R.rec(g, lst, i)
        if g[r + F_START] >= end:
            break
        w = g[r + F_W]
        if _unordered(known, base, w):
            return r, w, 1
        rd = g[r + F_R]
        if write and _unordered(known, base, rd):
            return r, rd, 0
        i += 1
    return -1, 0, 0


@njit(cache=True)
def _written_until(g, lst, p, end):
    """The end of the run of bytes from ``p`` (at most ``end``) that list ``lst`` records as written."""
    count = g[lst + L_COUNT]
    i = R.first_after(g, lst, p)
    while i < count and p < end:
        r = R.rec(g, lst, i)
        if g[r + F_START] > p or g[r + F_W] == 0:
            break
        p = g[r + F_END]
        i += 1
    return min(p, end)


@njit(cache=True)
def _first_unwritten(g, me, off, end):
    """The first byte of [off, end) no core has written (-1: none).

    Only the reading core's own writes count unless the cores run one at a
    time (``GH_ONLINE``): otherwise another core's write is unordered anyway,
    a race reported after the launch.  A list that overflowed lost writes, so
    then nothing is reported.
    """
    ncores = g[GH_NCORES]
    for c in range(ncores):
        if g[_part(g, c) + L_OVER] != 0:
            return -1
    p = off
    while p < end:
        best = p
        for c in range(ncores):
            if c == me or g[GH_ONLINE] != 0:
                best = max(best, _written_until(g, _part(g, c), p, end))
        if best == p:
            return p
        p = best
    return -1


@njit(cache=True)
def _unwritten_end(g, me, p, end):
    """The end of the run of unwritten bytes from ``p`` (an unwritten byte) within [p, end), for the message."""
    q = end
    for c in range(g[GH_NCORES]):
        if c == me or g[GH_ONLINE] != 0:
            lst = _part(g, c)
            i = R.first_after(g, lst, p)
            while i < g[lst + L_COUNT]:
                r = R.rec(g, lst, i)
                if g[r + F_START] >= q:
                    break
                if g[r + F_W] != 0:
                    q = max(p + 1, g[r + F_START])
                    break
                i += 1
    return q


@instruction
def gm(st, sh, g, rid, pipe, off, nbytes, write, loc):
    """Check and record a DMA access of pipe ``pipe`` to bytes [off, off + nbytes) of GM region ``rid``."""
    if nbytes <= 0 or off < 0 or off + nbytes > g[GH_NBYTES] or pipe < 0 or pipe >= N_PIPES:
        return                       # the instruction itself reports a bad range
    end = off + nbytes
    me = sh[H_SLOT]
    lst = _part(g, me)
    _limits(sh, pipe)
    r, other, okind = _check_gm(g, lst, off, end, write, sh, H_LIM)
    if r >= 0:
        lo, hi = max(off, g[r + F_START]), min(end, g[r + F_END])
        raise Fault(F_RACE_GM, loc, lo, hi, _detail(pipe, write, _pipe(other), okind, rid, _loc(other), 0))
    if g[GH_ONLINE] != 0:
        rvc = sh[H_RVC]
        for c in range(g[GH_NCORES]):
            if c != me:
                r, other, okind = _check_gm(g, _part(g, c), off, end, write, sh, rvc + c * N_PIPES)
                if r >= 0:
                    lo, hi = max(off, g[r + F_START]), min(end, g[r + F_END])
                    raise Fault(F_RACE_GM_CORES, loc, lo, hi,
                                _detail(pipe, write, _pipe(other), okind, rid, _loc(other), c))
    if write == READ and g[GH_UNINIT] != 0:
        gap = _first_unwritten(g, me, off, end)
        if gap >= 0:
            raise Fault(F_UNINIT_GM, loc, gap, _unwritten_end(g, me, gap, end), _detail(pipe, 0, 0, 0, rid, 0, 0))
    stamp = _stamp(_epoch(sh, pipe), loc, pipe)
    slot = -1 if write else 0
    if not R.apply(g, lst, off, end, slot, stamp):
        R.compact(g, lst)
        if not R.apply(g, lst, off, end, slot, stamp):
            g[lst + L_OVER] = 1      # overflowed: this access goes unrecorded (can only hide races)


# --------------------------------------------------------------------------- after the launch


@instruction
def cross_core_conflict(g):
    """The first byte range one core writes and another core accesses, in a launch without cross-core sync.

    Returns ``[found, lo, hi, core_a, stamp_a, write_a, core_b, stamp_b, write_b]``
    with ``a`` the access at the lower address (the earlier core on a tie).
    """
    out = np.zeros(9, np.int64)
    ncores = g[GH_NCORES]
    total = 0
    for c in range(ncores):
        total += g[_part(g, c) + L_COUNT]
    starts = np.empty(total, np.int64)
    owner = np.empty(total, np.int64)
    where = np.empty(total, np.int64)
    n = 0
    for c in range(ncores):
        lst = _part(g, c)
        for i in range(g[lst + L_COUNT]):
            r = R.rec(g, lst, i)
            starts[n], owner[n], where[n] = g[r + F_START], c, r
            n += 1
    order = np.argsort(starts, kind="mergesort")
    active = np.empty(total, np.int64)
    active_owner = np.empty(total, np.int64)
    nact = 0
    for k in range(total):
        x = where[order[k]]
        cx = owner[order[k]]
        sx = g[x + F_START]
        m = 0
        for j in range(nact):                 # drop the ranges that end before this one starts
            if g[active[j] + F_END] > sx:
                active[m], active_owner[m] = active[j], active_owner[j]
                m += 1
        nact = m
        for j in range(nact):
            y, cy = active[j], active_owner[j]
            if cy != cx and (g[x + F_W] != 0 or g[y + F_W] != 0):
                wy, wx = g[y + F_W] != 0, g[x + F_W] != 0
                out[0], out[1], out[2] = 1, sx, min(g[x + F_END], g[y + F_END])
                out[3], out[4], out[5] = cy, g[y + F_W] if wy else g[y + F_R], int(wy)
                out[6], out[7], out[8] = cx, g[x + F_W] if wx else g[x + F_R], int(wx)
                return out
        active[nact], active_owner[nact] = x, cx
        nact += 1
    return out


def check_launch(gsh: tuple[np.ndarray, ...], region_names: list[str], locs: list[Any],
                 core_labels: list[str], kernel: str, buffers: Sequence[str] | None = None) -> None:
    """After a launch whose cores never synchronise: raise a RaceError for GM two cores conflict on.

    ``region_names`` describe the GM regions in the message; ``buffers`` are
    the arguments' bare names, the error's ``buffer`` (None when not given).
    """
    for rid, g in enumerate(gsh):
        if g.size <= GH or g[GH_ONLINE]:
            continue
        r = cross_core_conflict(g)
        if not r[0]:
            continue
        lo, hi, ca, sa, wa, cb, sb, wb = (int(v) for v in r[1:])

        def site(stamp: int) -> str:
            i = (stamp >> 3) & LOC_MASK
            return f"{locs[i].short()} `{locs[i].line_text.strip()}`" if i < len(locs) else "an unknown line"

        loc_b = (sb >> 3) & LOC_MASK
        kind = "WAW" if wa and wb else "RAW/WAR"         # the cores run in parallel: either order
        detail = (f"{kind}: {PIPE_NAMES[sb & 7]} {_KIND[wb]} of GM bytes [{lo}, {hi}) of {region_names[rid]} "
                  f"races with the {PIPE_NAMES[sa & 7]} {_KIND[wa]} by {core_labels[ca]} at {site(sa)}: the cores "
                  f"do not synchronise (sync_all, cross_core_set_flag/wait_flag, ...), so nothing orders them")
        raise errors.RaceError(detail, kernel=kernel, core=core_labels[cb],
                               loc=locs[loc_b] if loc_b < len(locs) else None, pipe=PIPE_NAMES[sb & 7],
                               buffer=buffers[rid] if buffers is not None else None)
