"""Sorting: ``sort32``, ``mrg_sort``, ``sort`` and the VMS4_SR register ``get_mrg_sort_result`` reads.

What the hardware computes on Atlas A2/A3 (Ascend C Sort32, MrgSort, Sort
and GetMrgSortResult pages, the C-API pages ``asc_bitsort``/``asc_mrgsort4``
and the A2/A3 library source ``dav_c220/kernel_operator_proposal_impl.h``;
*assumed* marks what they leave open):

* **Entries.** Sorted data is a list of 8-byte (score, index) entries.  A
  float32 score is bytes 0-3, a float16 score bytes 0-1 with bytes 2-3
  reserved; the uint32 index is bytes 4-7.  ``sort32`` writes the reserved
  bytes as 0 (*assumed*); ``mrg_sort`` moves whole entries, reserved bytes
  included.
* **Order.** Descending by score.  Equal scores keep their input order: in
  ``sort32`` the earlier element first, in ``mrg_sort`` the entry of the
  lower-numbered list first (documented: "if i > j, score[j] is selected
  first").  -0.0 and +0.0 are equal.  NaN is not documented; npuemu puts NaN
  (either sign, any payload) after every number, in input order, as
  ``np.argsort(-x, kind="stable")`` does (*assumed*).
* **sort32.** Repeat ``r`` sorts scores ``src0[32r : 32r + 32]`` with indices
  ``src1[32r : 32r + 32]`` into entries ``32r .. 32r + 31`` of ``dst`` (256
  bytes a repeat); repeats are sorted separately.  ``repeat_time`` is
  0..255; 0 does nothing.
* **mrg_sort.** Merges lists 1-2 (``valid_bit`` 3), 1-3 (7) or 1-4 (15) of
  ``element_lengths`` entries (0..4095 each; the library checks all four).
  ``repeat_times`` is 1..255; with more than 1, each repeat merges the next
  four lists, sources and destination moving on by the four lengths, which
  the documentation allows only with four lists of one length stored one
  after the other, ``valid_bit`` 15 and no suspension: npuemu faults
  otherwise.  With ``if_exhausted_suspension`` the merge stops as soon as a
  list has given its last entry (a valid list of length 0 stops it before
  anything moves, *assumed*).
* **VMS4_SR.** After each ``mrg_sort`` the register holds, in 16 bits per
  list (list 1 lowest), how many entries of each list the (last) repeat
  took; lists not merged count 0.  The library reads it only after a
  suspended merge; npuemu sets it after every merge (*assumed*).  It is per
  core and starts at 0.
* **sort.** ``sort32``; with ``is_full_sort`` the library then merges the
  32-entry groups four at a time into one list (``tmp`` is its copy of
  ``dst`` between rounds and ends equal to ``dst``), which with the tie rule
  above is one stable descending sort of all ``32 * repeat_time`` entries.
* Operands start 32-byte aligned.  Sources and destination may not overlap
  (documented for ``mrg_sort``; assumed for ``sort32``, whose 256-byte
  repeats of results do not line up with their sources).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import state as S
from .common import BLOCK, check_aligned
from .fault import Fault, register

MAX_REPEAT = 255
MAX_LIST = 4095
ENTRY = 8                       # bytes of one (score, index) entry
GROUP = 32                      # scores one sort32 repeat sorts
NAN_KEY = -(1 << 40)            # below every number's key: NaN sorts last

F_REPEAT = 1500
F_VALID_BIT = 1501
F_LIST_LEN = 1502
F_REPEAT_LAYOUT = 1503
F_OVERLAP = 1504
F_TOO_SMALL = 1505
F_NO_LIST = 1506

# operand codes of the messages: 0-3 as named, 10 + i list i + 1
_OPERANDS = {0: "dst", 1: "src0 (scores)", 2: "src1 (indices)", 3: "tmp"}


def _operand(code: int) -> str:
    return _OPERANDS.get(code, f"sort_list.src{code - 9}")


_LAYOUT = {1: "valid_bit must be 15", 2: "is_exhausted_suspension must be False",
           3: "the four element lengths must be equal", 4: "the four lists must be stored one after the other"}

register({
    F_REPEAT: (errors.ParamRangeError, lambda a, b, c, env: f"repeat time {a} out of range [{b}, {MAX_REPEAT}]"),
    F_VALID_BIT: (errors.ParamRangeError,
                  lambda a, b, c, env: f"valid_bit {a} is not 3 (lists 1-2), 7 (lists 1-3) or 15 (lists 1-4)"),
    F_LIST_LEN: (errors.ParamRangeError,
                 lambda a, b, c, env: f"element length {b} of list {a + 1} out of range [0, {MAX_LIST}]"),
    F_REPEAT_LAYOUT: (errors.ParamRangeError,
                      lambda a, b, c, env: f"repeat_times {b} > 1 merges four equal, consecutive lists: "
                                           f"{_LAYOUT[a]}"),
    F_OVERLAP: (errors.OverlapError,
                lambda a, b, c, env: f"dst overlaps {_operand(a)} (bytes {b}..{c} of UB); sources and "
                                     f"destination of a sort must be disjoint"),
    F_TOO_SMALL: (errors.BoundsError,
                  lambda a, b, c, env: f"{_operand(a)}: the instruction touches {c} bytes of a tensor that "
                                       f"holds only {b}"),
    F_NO_LIST: (errors.ParamRangeError,
                lambda a, b, c, env: f"valid_bit {b} merges list {a + 1}, but the MrgSortSrcList has no "
                                     f"src{a + 1}"),
})


@njit(cache=True, inline="always")
def _key(u16, u32, addr, half):
    """An order key of the score at byte ``addr``: higher sorts first, equal keeps order, NaN lowest."""
    if half:
        b = np.int64(u16[addr >> 1])
        mag = b & 0x7FFF
        if mag > 0x7C00:
            return np.int64(NAN_KEY)
        return -mag if b & 0x8000 else mag
    b = np.int64(u32[addr >> 2])
    mag = b & 0x7FFFFFFF
    if mag > 0x7F800000:
        return np.int64(NAN_KEY)
    return -mag if b & 0x80000000 else mag


@njit(cache=True)
def _fits(code, tensor_bytes, need, loc):
    if need > tensor_bytes:
        raise Fault(F_TOO_SMALL, loc, code, tensor_bytes, need)


@njit(cache=True)
def _disjoint(code, dst, dst_bytes, src, src_bytes, loc):
    lo = max(dst, src)
    hi = min(dst + dst_bytes, src + src_bytes)
    if dst_bytes > 0 and src_bytes > 0 and lo < hi:
        raise Fault(F_OVERLAP, loc, code, lo, hi - 1)


@njit(cache=True)
def _check_sort32(esize, dst, dst_len, src0, src0_len, src1, src1_len, repeat, loc):
    if repeat < 0 or repeat > MAX_REPEAT:
        raise Fault(F_REPEAT, loc, repeat, 0, 0)
    check_aligned(dst, BLOCK, 1, loc)
    check_aligned(src0, BLOCK, 1, loc)
    check_aligned(src1, BLOCK, 1, loc)
    n = GROUP * repeat
    _fits(0, dst_len * esize, n * ENTRY, loc)
    _fits(1, src0_len * esize, n * esize, loc)
    _fits(2, src1_len * 4, n * 4, loc)
    _disjoint(1, dst, n * ENTRY, src0, n * esize, loc)
    _disjoint(2, dst, n * ENTRY, src1, n * 4, loc)


@njit(cache=True)
def _sort_groups(lm, half, dst, src0, src1, repeat):
    """sort32's effect (operands checked)."""
    u16 = lm.view(np.uint16)
    u32 = lm.view(np.uint32)
    esize = 2 if half else 4
    keys = np.empty(GROUP, np.int64)
    for r in range(repeat):
        base = r * GROUP
        for e in range(GROUP):
            keys[e] = _key(u16, u32, src0 + (base + e) * esize, half)
        order = np.argsort(-keys, kind="mergesort")
        for k in range(GROUP):
            j = base + order[k]
            d = dst + (base + k) * ENTRY
            if half:
                u16[d >> 1] = u16[(src0 + j * 2) >> 1]
                u16[(d >> 1) + 1] = 0
            else:
                u32[d >> 2] = u32[(src0 + j * 4) >> 2]
            u32[(d >> 2) + 1] = u32[(src1 + j * 4) >> 2]


@instruction
def sort32(lm, half, dst, dst_len, src0, src0_len, src1, src1_len, repeat, loc):
    """``sort32``: ``repeat`` groups of 32 scores (``half``: float16) and uint32 indices into entries."""
    esize = 2 if half else 4
    _check_sort32(esize, dst, dst_len, src0, src0_len, src1, src1_len, repeat, loc)
    _sort_groups(lm, half, dst, src0, src1, repeat)


@instruction
def sort(lm, half, full, dst, dst_len, concat, concat_len, index, index_len, tmp, tmp_len, repeat, loc):
    """``sort``: sort32, then with ``full`` one stable descending sort of all entries; ``tmp`` ends as dst."""
    esize = 2 if half else 4
    _check_sort32(esize, dst, dst_len, concat, concat_len, index, index_len, repeat, loc)
    n = GROUP * repeat
    if full:
        check_aligned(tmp, BLOCK, 1, loc)
        _fits(3, tmp_len * esize, n * ENTRY, loc)
        _disjoint(3, dst, n * ENTRY, tmp, n * ENTRY, loc)
    _sort_groups(lm, half, dst, concat, index, repeat)
    if not full or n == 0:
        return
    u16 = lm.view(np.uint16)
    u32 = lm.view(np.uint32)
    keys = np.empty(n, np.int64)
    for e in range(n):
        keys[e] = _key(u16, u32, dst + e * ENTRY, half)
    order = np.argsort(-keys, kind="mergesort")
    buf = lm[dst:dst + n * ENTRY].copy()
    b32 = buf.view(np.uint32)
    for k in range(n):
        j = order[k]
        u32[(dst >> 2) + 2 * k] = b32[2 * j]
        u32[(dst >> 2) + 2 * k + 1] = b32[2 * j + 1]
    lm[tmp:tmp + n * ENTRY] = lm[dst:dst + n * ENTRY]


@njit(cache=True)
def _check_lists(esize, dst, dst_len, addrs, lens, given, lengths, valid, repeat, susp, loc):
    """Every rule of mrg_sort's arguments; returns the number of lists merged."""
    if valid != 3 and valid != 7 and valid != 15:
        raise Fault(F_VALID_BIT, loc, valid, 0, 0)
    for i in range(4):
        if lengths[i] < 0 or lengths[i] > MAX_LIST:
            raise Fault(F_LIST_LEN, loc, i, lengths[i], 0)
    if repeat < 1 or repeat > MAX_REPEAT:
        raise Fault(F_REPEAT, loc, repeat, 1, 0)
    m = 2 if valid == 3 else (3 if valid == 7 else 4)
    for i in range(m):
        if not given[i]:
            raise Fault(F_NO_LIST, loc, i, valid, 0)
    if repeat > 1:
        why = 0
        if valid != 15:
            why = 1
        elif susp:
            why = 2
        elif lengths[1] != lengths[0] or lengths[2] != lengths[0] or lengths[3] != lengths[0]:
            why = 3
        else:
            for i in range(1, 4):
                if addrs[i] != addrs[i - 1] + lengths[0] * ENTRY:
                    why = 4
        if why:
            raise Fault(F_REPEAT_LAYOUT, loc, why, repeat, 0)
    total = 0
    for i in range(m):
        total += lengths[i]
    check_aligned(dst, BLOCK, 1, loc)
    _fits(0, dst_len * esize, repeat * total * ENTRY, loc)
    for i in range(m):
        check_aligned(addrs[i], BLOCK, 1, loc)
        reach = ((repeat - 1) * total + lengths[i]) * ENTRY
        _fits(10 + i, lens[i] * esize, reach, loc)
        _disjoint(10 + i, dst, repeat * total * ENTRY, addrs[i], reach, loc)
    return m


@instruction
def mrg_sort(lm, st, half, dst, dst_len, a1, n1, a2, n2, a3, n3, a4, n4, given3, given4, l1, l2, l3, l4, valid,
             repeat, susp, loc):
    """``mrg_sort``: merge lists 1..m (``valid``) of lengths ``l1..l4``; VMS4_SR gets the counts taken."""
    esize = 2 if half else 4
    addrs = np.array((a1, a2, a3, a4), np.int64)
    lens = np.array((n1, n2, n3, n4), np.int64)
    given = np.array((1, 1, given3, given4), np.int64)
    lengths = np.array((l1, l2, l3, l4), np.int64)
    m = _check_lists(esize, dst, dst_len, addrs, lens, given, lengths, valid, repeat, susp, loc)
    total = 0
    for i in range(m):
        total += lengths[i]
    u16 = lm.view(np.uint16)
    u32 = lm.view(np.uint32)
    pos = np.zeros(4, np.int64)
    for r in range(repeat):
        shift = r * total * ENTRY
        pos[:] = 0
        out = dst + shift
        stop = False
        if susp:
            for i in range(m):
                if lengths[i] == 0:
                    stop = True
        while not stop:
            best = -1
            best_key = np.int64(0)
            for i in range(m):
                if pos[i] < lengths[i]:
                    k = _key(u16, u32, addrs[i] + shift + pos[i] * ENTRY, half)
                    if best < 0 or k > best_key:
                        best = i
                        best_key = k
            if best < 0:
                break
            s = addrs[best] + shift + pos[best] * ENTRY
            u32[out >> 2] = u32[s >> 2]
            u32[(out >> 2) + 1] = u32[(s >> 2) + 1]
            out += ENTRY
            pos[best] += 1
            if susp and pos[best] == lengths[best]:
                stop = True
    st[S.VMS4_SR] = pos[0] | (pos[1] << 16) | (pos[2] << 32) | (pos[3] << 48)


@njit(cache=True)
def mrg_sort_result(st, k):
    """Entries of list ``k`` (0-3) the last mrg_sort took: 16 bits of VMS4_SR."""
    return (st[S.VMS4_SR] >> (16 * k)) & 0xFFFF
