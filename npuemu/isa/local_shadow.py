"""Local memory's shadow: races and uninitialised reads in UB, L1, L0A/L0B/L0C and BT (level ``full``).

Local memory (UB; L1/L0A/L0B/L0C/BT on an AIC) is shadowed per 32-byte
block: the last write stamp ``W`` and the last read stamp of each of three
reader slots ``R`` (a slot per reading pipe of a core type: AIV V/MTE3, AIC
MTE1/M|MTE3/FIX; a stamp names its pipe, so sharing a slot is safe).  A block
never written (no ``W``) is uninitialised: reading it is an error.

Kernels touch memory in long runs (tiles, rows), so the shadow is kept
run-length encoded (:mod:`npuemu.isa.shadow_ranges`): a sorted list of
disjoint block ranges whose stamps agree, at ``sh[H_LOCAL]`` in the core's
race-checker array (:mod:`npuemu.isa.hb`).  An access costs a binary search
plus the ranges it overlaps, not one step per block.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import shadow_ranges as R
from . import state as ST
from . import watch
from .fault import Fault
from .hb import (H_LMBYTES, H_LOCAL, N_PIPES, READ, S, WRITE, epoch, row, stamp, stamp_clock, stamp_loc,
                 stamp_loc_id, stamp_pipe)
from .race_report import F_RACE_LOCAL, F_UNINIT_LOCAL, detail
from .shadow_ranges import F_END, F_R, F_START, F_W, L_COUNT, LH

N_RSLOTS = 3
LOCAL_WIDTH = 3 + N_RSLOTS
RSLOT = np.array([-1, 0, 1, 0, 2, 1, 2], np.int64)      # reader slot per pipe (S reads are not recorded)


def capacity(lm_bytes: int) -> int:
    """Ranges the list of a core with ``lm_bytes`` of local memory can hold."""
    return (lm_bytes + 31) // 32 + 1     # disjoint ranges of whole blocks: never more than the blocks


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
        raise Fault(F_UNINIT_LOCAL, loc, lo, hi, detail(pipe, 0, 0, 0, hw, 0, 0))
    raise Fault(F_RACE_LOCAL, loc, lo, hi,
                detail(pipe, write, stamp_pipe(ostamp), owrite, hw, stamp_loc(ostamp), 0))


@njit(cache=True)
def _local_race(st, sh, pipe, write, lo, hi, rec, addr, nbytes, loc):
    """Raise the race of an access to blocks [lo, hi) with an access recorded at ``rec``."""
    r = row(pipe)
    w = sh[rec + F_W]
    if w != 0 and stamp_pipe(w) != pipe and stamp_clock(w) > sh[r + stamp_pipe(w)]:
        _local_fault(st, pipe, write, lo, hi, w, 1, addr, nbytes, loc)
    for k in range(N_RSLOTS):
        rd = sh[rec + F_R + k]
        if rd != 0 and stamp_pipe(rd) != pipe and stamp_clock(rd) > sh[r + stamp_pipe(rd)]:
            _local_fault(st, pipe, write, lo, hi, rd, 0, addr, nbytes, loc)


@njit(cache=True)
def local(st, sh, pipe, addr, nbytes, kind, loc):
    """Check and record an access of pipe ``pipe`` to ``nbytes`` of local memory at ``addr``.

    ``kind``: READ, WRITE or READ_SPAN (a bounding range: races only).  One
    binary search finds the ranges the access overlaps; they are checked
    (unwritten blocks, unordered accesses) and then updated.
    """
    if st[ST.WATCH] | st[ST.WATCH + 3] | st[ST.WATCH + 6] | st[ST.WATCH + 9]:
        watch.check(st, pipe, addr, nbytes, kind, loc)      # check_local_memory_ia's exception registers
    if nbytes <= 0 or addr < 0 or addr + nbytes > sh[H_LMBYTES] or pipe < 0 or pipe >= N_PIPES:
        return                       # the instruction itself reports a bad operand
    b0 = addr >> 5
    b1 = (addr + nbytes + 31) >> 5
    write = kind == WRITE
    lst = sh[H_LOCAL]
    r = row(pipe)
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
        bad = w != 0 and stamp_pipe(w) != pipe and stamp_clock(w) > sh[r + stamp_pipe(w)]
        if write:
            for k in range(N_RSLOTS):
                rd = sh[rec + F_R + k]
                bad |= rd != 0 and stamp_pipe(rd) != pipe and stamp_clock(rd) > sh[r + stamp_pipe(rd)]
        if bad:
            _local_race(st, sh, pipe, write, max(s, b0), min(e, b1), rec, addr, nbytes, loc)
        cur = e
        i += 1
    if kind == READ and cur < b1:
        _local_fault(st, pipe, 0, cur, b1, 0, 0, addr, nbytes, loc)
    if kind != WRITE and pipe == S:
        return                       # a scalar read is over before anything else is issued
    R.apply_at(sh, lst, i0, i, b0, b1, -1 if write else RSLOT[pipe], stamp(epoch(sh, pipe),
                                                                           stamp_loc_id(sh, loc), pipe))
