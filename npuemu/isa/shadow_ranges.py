"""Run-length range lists: the shadow-memory store of the race checker (:mod:`npuemu.isa.hb`).

A list lives inside an int64 array at offset ``lst``: a header
``[count, capacity, width, overflowed]`` followed by ``capacity`` records of
``width`` words, ``[start, end, write stamp, read stamp(s)...]``.  Ranges are
sorted, disjoint and non-empty; a stamp of 0 means none.  Neighbours whose
stamps agree are merged, so an access to a long run of memory costs a binary
search plus the ranges it overlaps, not one step per block or byte.  Records
past ``count`` are never read, so resetting a list only resets its header.

Stamps are opaque here except that their clock is in the ``CLOCK_MASK`` bits
above ``CLOCK_SHIFT`` (:func:`compact` keeps the older of two stamps).
"""
from __future__ import annotations

import numpy as np
from numba import njit

L_COUNT, L_CAP, L_WIDTH, L_OVER = range(4)
LH = 4
F_START, F_END, F_W, F_R = range(4)

CLOCK_SHIFT = 24
CLOCK_MASK = (1 << 34) - 1      # bits 58 and up of a stamp are flags (hb.ATOMIC_SHIFT), not clock


def init_list(a: np.ndarray, base: int, cap: int, width: int) -> None:
    """An empty list of ``cap`` records of ``width`` words at ``a[base:]``."""
    a[base + L_COUNT], a[base + L_CAP], a[base + L_WIDTH], a[base + L_OVER] = 0, cap, width, 0


@njit(cache=True)
def clock_of(stamp):
    return (stamp >> CLOCK_SHIFT) & CLOCK_MASK


@njit(cache=True)
def first_after(a, lst, off):
    """Index of the first range of list ``lst`` ending after ``off`` (ends are sorted too)."""
    width = a[lst + L_WIDTH]
    lo, hi = 0, a[lst + L_COUNT]
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[lst + LH + mid * width + F_END] > off:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def rec(a, lst, i):
    return lst + LH + i * a[lst + L_WIDTH]


@njit(cache=True)
def equal(a, x, y, width):
    """Records at ``x`` and ``y`` carry the same stamps."""
    for f in range(F_W, width):
        if a[x + f] != a[y + f]:
            return False
    return True


@njit(cache=True)
def merge_around(a, lst, i):
    """Merge range ``i`` with its neighbours where they touch and agree (lossless)."""
    width = a[lst + L_WIDTH]
    count = a[lst + L_COUNT]
    lo, hi = i, i + 1
    if lo > 0:
        p, x = rec(a, lst, lo - 1), rec(a, lst, lo)
        if a[p + F_END] == a[x + F_START] and equal(a, p, x, width):
            lo -= 1
    if hi < count:
        x, n = rec(a, lst, hi - 1), rec(a, lst, hi)
        if a[x + F_END] == a[n + F_START] and equal(a, x, n, width):
            hi += 1
    if hi - lo == 1:
        return
    first, last = rec(a, lst, lo), rec(a, lst, hi - 1)
    a[first + F_END] = a[last + F_END]
    remove(a, lst, lo + 1, hi)


@njit(cache=True)
def remove(a, lst, i0, i1):
    """Delete ranges [i0, i1)."""
    width = a[lst + L_WIDTH]
    count = a[lst + L_COUNT]
    if i1 <= i0:
        return
    src, dst = rec(a, lst, i1), rec(a, lst, i0)
    n = (count - i1) * width
    if n > 0:
        a[dst:dst + n] = a[src:src + n].copy()
    a[lst + L_COUNT] = count - (i1 - i0)


@njit(cache=True)
def insert(a, lst, i, k):
    """Open ``k`` empty records at index ``i``; False if the list is full."""
    width = a[lst + L_WIDTH]
    count = a[lst + L_COUNT]
    if count + k > a[lst + L_CAP]:
        return False
    src, dst = rec(a, lst, i), rec(a, lst, i + k)
    n = (count - i) * width
    if n > 0:
        a[dst:dst + n] = a[src:src + n].copy()
    a[lst + L_COUNT] = count + k
    return True


@njit(cache=True)
def piece(dst, d, start, end, src, s, width):
    """Record ``[start, end)`` at ``dst[d:]`` with the stamps of the record at ``src[s:]`` (``s < 0``: none)."""
    dst[d + F_START], dst[d + F_END] = start, end
    for f in range(F_W, width):
        dst[d + f] = src[s + f] if s >= 0 else 0


@njit(cache=True)
def access(dst, d, slot, stamp, width):
    """Apply an access to the record at ``dst[d:]``: ``slot < 0`` a write, else a read into reader ``slot``."""
    if slot < 0:
        dst[d + F_W] = stamp
        for f in range(F_R, width):
            dst[d + f] = 0
    else:
        dst[d + F_R + slot] = stamp


@njit(cache=True)
def apply(a, lst, off, end, slot, stamp):
    """Record an access to [off, end): ``slot < 0`` a write of ``stamp``, else a read into reader ``slot``.

    Splits the ranges the access cuts, fills the gaps it covers (a read of a
    gap leaves it unwritten) and merges what now agrees.  False if the list
    has no room.
    """
    count = a[lst + L_COUNT]
    i0 = first_after(a, lst, off)
    i1 = i0
    while i1 < count and a[rec(a, lst, i1) + F_START] < end:
        i1 += 1
    return apply_at(a, lst, i0, i1, off, end, slot, stamp)


@njit(cache=True)
def apply_at(a, lst, i0, i1, off, end, slot, stamp):
    """:func:`apply` with the overlapped ranges [i0, i1) already known."""
    width = a[lst + L_WIDTH]
    if i1 == i0:                                        # nothing recorded there yet
        if not insert(a, lst, i0, 1):
            return False
        r = rec(a, lst, i0)
        piece(a, r, off, end, a, -1, width)
        access(a, r, slot, stamp, width)
        merge_around(a, lst, i0)
        return True
    first = rec(a, lst, i0)
    if i1 - i0 == 1 and a[first + F_START] == off and a[first + F_END] == end:
        access(a, first, slot, stamp, width)           # the same range again
        merge_around(a, lst, i0)
        return True
    # the general case: rebuild ranges i0..i1 in a scratch array, then splice them in
    pieces = np.empty(((i1 - i0) * 2 + 3) * width, np.int64)
    n = 0
    cur = off
    for i in range(i0, i1):
        r = rec(a, lst, i)
        s, e = a[r + F_START], a[r + F_END]
        if s < off:                                     # the part before the access keeps its stamps
            piece(pieces, n * width, s, off, a, r, width)
            n += 1
        lo, hi = max(s, off), min(e, end)
        if lo > cur:                                    # a gap inside the access
            piece(pieces, n * width, cur, lo, a, -1, width)
            access(pieces, n * width, slot, stamp, width)
            n += 1
        piece(pieces, n * width, lo, hi, a, r, width)
        access(pieces, n * width, slot, stamp, width)
        n += 1
        cur = hi
        if e > end:                                     # the part after the access keeps its stamps
            piece(pieces, n * width, end, e, a, r, width)
            n += 1
    if cur < end:
        piece(pieces, n * width, cur, end, a, -1, width)
        access(pieces, n * width, slot, stamp, width)
        n += 1
    m = 0                                               # merge pieces that now agree
    for k in range(n):
        if m > 0 and pieces[(m - 1) * width + F_END] == pieces[k * width + F_START] and \
                equal(pieces, (m - 1) * width, k * width, width):
            pieces[(m - 1) * width + F_END] = pieces[k * width + F_END]
        else:
            if m != k:
                pieces[m * width:(m + 1) * width] = pieces[k * width:(k + 1) * width]
            m += 1
    if m > i1 - i0:
        if not insert(a, lst, i1, m - (i1 - i0)):
            return False
    else:
        remove(a, lst, i0 + m, i1)
    a[first:first + m * width] = pieces[:m * width]
    merge_around(a, lst, i0 + m - 1)
    merge_around(a, lst, i0)
    return True


@njit(cache=True)
def compact(a, lst):
    """Make room in a full list: merge touching ranges of the same kind, keeping the older stamps.

    Older stamps can only hide a race, never invent one.
    """
    width = a[lst + L_WIDTH]
    count = a[lst + L_COUNT]
    m = 0
    for i in range(count):
        r = rec(a, lst, i)
        if m > 0:
            p = rec(a, lst, m - 1)
            same = a[p + F_END] == a[r + F_START]
            for f in range(F_W, width):
                same = same and (a[p + f] == 0) == (a[r + f] == 0)
            if same:
                a[p + F_END] = a[r + F_END]
                for f in range(F_W, width):
                    if a[r + f] != 0 and clock_of(a[r + f]) < clock_of(a[p + f]):
                        a[p + f] = a[r + f]
                continue
        if m != i:
            q = rec(a, lst, m)
            a[q:q + width] = a[r:r + width].copy()
        m += 1
    a[lst + L_COUNT] = m
