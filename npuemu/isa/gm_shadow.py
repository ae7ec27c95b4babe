"""GM's shadow: races on GM within a core and between cores, and reads of uninitialised GM (level ``full``).

GM is shadowed per core and region with the last write and last read stamp
of *that core's* pipes, byte-exact (cores may write neighbouring bytes of one
block), as run-length encoded range lists (:mod:`npuemu.isa.shadow_ranges`):
a region's shadow is the ``GH_*`` header (:mod:`npuemu.isa.hb`), then one
list of ``GH_PART`` words per core of the launch.  An access first checks its
own core's ranges, then:

* in a launch whose cores wait for each other (they run one at a time),
  every other core's ranges, ordered by the cross-core clocks the primitives
  published through ``hb.release`` / ``hb.acquire``;
* otherwise, after the launch: nothing orders accesses of different cores,
  so any byte one core writes and another touches is a race
  (:func:`cross_core_conflict`).  Cores then run in parallel: each writes
  only its own ranges.

A region the host passed uninitialised (a workspace) also reports reads of
bytes no write ordered before the read has filled.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from . import shadow_ranges as R
from .fault import Fault
from .hb import (ATOMIC_SHIFT, GH, GH_NBYTES, GH_NCORES, GH_ONLINE, GH_PART, GH_UNINIT, H_LIM, H_RVC, H_SLOT,
                 N_PIPES, READ, epoch, known_by, stamp, stamp_atomic, stamp_clock, stamp_loc, stamp_loc_id,
                 stamp_pipe)
from .race_report import F_RACE_GM, F_RACE_GM_CORES, F_UNINIT_GM, atomic_detail, detail
from .shadow_ranges import F_END, F_R, F_START, F_W, L_COUNT, L_OVER

GM_WIDTH = 4


def capacity(nbytes: int) -> int:
    """GM ranges per core and region: plenty for streaming kernels; a full list is compacted."""
    return int(min(max(nbytes // 256, 256), 1 << 15))


@njit(cache=True)
def part(g, core):
    """Where core ``core``'s range list starts in the region's shadow ``g``."""
    return GH + core * g[GH_PART]


@njit(cache=True)
def _unordered(known, base, s):
    """Stamp ``s`` is an access the pipe whose knowledge is ``known[base:base + 8]`` is not ordered after."""
    return s != 0 and stamp_clock(s) > known[base + stamp_pipe(s)]


@njit(cache=True)
def _check_gm(g, lst, off, end, write, atomic, known, base):
    """The first range of a core's list overlapping [off, end) that holds an access the accessing
    pipe (its knowledge of that core at ``known[base:base + 8]``) is not ordered after.  An atomic
    write (``atomic``: its operation + 1) needs no order after atomic writes of the same operation.

    Returns (record, offending stamp, its kind) or (-1, 0, 0).
    """
    count = g[lst + L_COUNT]
    i = R.first_after(g, lst, off)
    while i < count:
        r = R.rec(g, lst, i)
        if g[r + F_START] >= end:
            break
        w = g[r + F_W]
        if _unordered(known, base, w) and (atomic == 0 or stamp_atomic(w) != atomic):
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
        if g[part(g, c) + L_OVER] != 0:
            return -1
    p = off
    while p < end:
        best = p
        for c in range(ncores):
            if c == me or g[GH_ONLINE] != 0:
                best = max(best, _written_until(g, part(g, c), p, end))
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
            lst = part(g, c)
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
def gm(st, sh, g, rid, pipe, off, nbytes, write, atomic, loc):
    """Check and record a DMA access of pipe ``pipe`` to bytes [off, off + nbytes) of GM region ``rid``;
    ``atomic``: a write in the core's atomic mode, its operation + 1 (0: a plain access)."""
    if nbytes <= 0 or off < 0 or off + nbytes > g[GH_NBYTES] or pipe < 0 or pipe >= N_PIPES:
        return                       # the instruction itself reports a bad range
    end = off + nbytes
    me = sh[H_SLOT]
    lst = part(g, me)
    known_by(sh, pipe)
    r, other, okind = _check_gm(g, lst, off, end, write, atomic, sh, H_LIM)
    if r >= 0:
        lo, hi = max(off, g[r + F_START]), min(end, g[r + F_END])
        raise Fault(F_RACE_GM, loc, lo, hi,
                    detail(pipe, write, stamp_pipe(other), okind, rid, stamp_loc(other), 0)
                    | atomic_detail(atomic, stamp_atomic(other) if okind else 0))
    if g[GH_ONLINE] != 0:
        rvc = sh[H_RVC]
        for c in range(g[GH_NCORES]):
            if c != me:
                r, other, okind = _check_gm(g, part(g, c), off, end, write, atomic, sh, rvc + c * N_PIPES)
                if r >= 0:
                    lo, hi = max(off, g[r + F_START]), min(end, g[r + F_END])
                    raise Fault(F_RACE_GM_CORES, loc, lo, hi,
                                detail(pipe, write, stamp_pipe(other), okind, rid, stamp_loc(other), c)
                                | atomic_detail(atomic, stamp_atomic(other) if okind else 0))
    # an atomic write reads what it combines with: on bytes nothing wrote, whatever was left in memory
    if (write == READ or atomic != 0) and g[GH_UNINIT] != 0:
        gap = _first_unwritten(g, me, off, end)
        if gap >= 0:
            raise Fault(F_UNINIT_GM, loc, gap, _unwritten_end(g, me, gap, end),
                        detail(pipe, 0, 0, 0, rid, 0, 0) | atomic_detail(atomic, 0))
    s = stamp(epoch(sh, pipe), stamp_loc_id(sh, loc), pipe)
    if write:
        s |= np.int64(atomic) << ATOMIC_SHIFT
    slot = -1 if write else 0
    if not R.apply(g, lst, off, end, slot, s):
        R.compact(g, lst)
        if not R.apply(g, lst, off, end, slot, s):
            g[lst + L_OVER] = 1      # overflowed: this access goes unrecorded (can only hide races)


@instruction
def cross_core_conflict(g):
    """The first byte range one core writes and another core accesses, in a launch without cross-core sync.

    Returns ``[found, lo, hi, core_a, stamp_a, kind_a, core_b, stamp_b, kind_b]`` with ``a`` the access
    at the lower address (the earlier core on a tie); a kind is 0 for a read, 1 for a write, 2 + the
    operation for an atomic write.  Atomic writes of the same operation do not conflict with each other.
    """
    out = np.zeros(9, np.int64)
    ncores = g[GH_NCORES]
    total = 0
    for c in range(ncores):
        total += g[part(g, c) + L_COUNT]
    starts = np.empty(total, np.int64)
    owner = np.empty(total, np.int64)
    where = np.empty(total, np.int64)
    n = 0
    for c in range(ncores):
        lst = part(g, c)
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
            wx, wy = g[x + F_W], g[y + F_W]
            if cy == cx or (wx == 0 and wy == 0):
                continue
            ax, ay = stamp_atomic(wx), stamp_atomic(wy)
            sy, ky, sx_, kx = wy, 1 + ay, wx, 1 + ax
            if wy == 0:
                sy, ky = g[y + F_R], 0
            if wx == 0:
                sx_, kx = g[x + F_R], 0
            if wx != 0 and wy != 0 and ax != 0 and ax == ay:
                # atomic writes of one operation are not ordered and need not be: only a read races with them
                if g[x + F_R] == 0 and g[y + F_R] == 0:
                    continue
                if g[y + F_R] != 0:
                    sy, ky = g[y + F_R], 0
                else:
                    sx_, kx = g[x + F_R], 0
            out[0], out[1], out[2] = 1, sx, min(g[x + F_END], g[y + F_END])
            out[3], out[4], out[5] = cy, sy, ky
            out[6], out[7], out[8] = cx, sx_, kx
            return out
        active[nact], active_owner[nact] = x, cx
        nact += 1
    return out
