"""``data_copy(dst, src, dst_slices, src_slices, dim_value)``: copying a multi-dimensional slice GM <-> UB.

Each side is described by ``dim_value`` ``SliceInfo(start_index, end_index,
stride, burst_len, shape_value)``, dimension 0 first: dimension 0 is the
contiguous one, and element ``(i0, i1, ...)`` of a side lies at
``i0 + shape0 * (i1 + shape1 * (i2 + ...))`` from the tensor's start.  As
the library does (``DataCopyGetPhyStartIndex``, ``DataCopyGetOffsetList``):

* each side starts at element ``sum_i start_index_i * prod(shape_value_j, j < i)``;
* each dimension ``i >= 1`` selects ``(end - start + 1 + stride) // (1 + stride)``
  indices ``1 + stride`` apart (``stride`` is the gap), dimension 1 varying
  fastest; both sides must select the same number of rows (npuemu checks it:
  the library reads past its list otherwise);
* each selected row is one strided copy whose geometry comes from the
  source's dimension 0: bursts of ``burst_len`` 32-byte blocks,
  ``(end - start + 1 + stride) // (burst_len * 32 / sizeof(T) + stride)`` of
  them, ``stride`` elements apart on the source; the destination's bursts are
  its own dimension-0 ``stride`` apart.  On the UB side that gap is taken in
  whole 32-byte blocks (``stride * sizeof(T) // 32``), as the library
  computes it; on the GM side in elements.
* ``burst_len`` of every dimension but 0 must be 1 (documented); the source's
  dimension-0 ``burst_len`` at least 1.
* ``shape_value`` 0 on the source's dimension 0 makes the library take the
  shapes from the tensors' ShapeInfo, which npuemu does not model: every
  ``shape_value`` must be given.

Every burst's UB address must be 32-byte aligned; every byte must lie inside
both tensors.  ``info`` holds the slices as int64s: side 0 (dst) then side 1
(src), ``dims`` dimensions each, five fields per dimension.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from . import atomic
from . import checks
from . import hb
from .common import BLOCK, memmove
from .datamove import DST, MAX_BLOCK_COUNT, SRC, check_gm, check_gm_size, check_local
from .fault import Fault, register
from .linkage import instruction

F_SLICE_FIELD = 2010
F_SLICE_SHAPE = 2011
F_SLICE_RANGE = 2012
F_SLICE_BURST = 2013
F_SLICE_ROWS = 2014
F_SLICE_COUNT = 2015

U32 = 0xFFFFFFFF
MAX_DIMS = 8           # K_MAX_SHAPE_DIM
FIELDS = ("start_index", "end_index", "stride", "burst_len", "shape_value")
SIDES = ("destination (slice_list1)", "source (slice_list2)")

register({
    F_SLICE_FIELD: (errors.ParamRangeError,
                    lambda a, b, c, env: f"{SIDES[c // 5]} SliceInfo of dimension {b}: {FIELDS[c % 5]} = {a} is "
                                         f"outside its range [0, {U32}]"),
    F_SLICE_SHAPE: (errors.ParamRangeError,
                    lambda a, b, c, env: f"{SIDES[b]} SliceInfo of dimension {a}: shape_value 0 (the library then "
                                         f"reads the tensors' ShapeInfo, which npuemu does not model): give every "
                                         f"dimension's shape_value"),
    F_SLICE_RANGE: (errors.ParamRangeError,
                    lambda a, b, c, env: f"{SIDES[c // MAX_DIMS]} SliceInfo of dimension {c % MAX_DIMS}: end_index "
                                         f"{b} is before start_index {a}"),
    F_SLICE_BURST: (errors.ParamRangeError,
                    lambda a, b, c, env: (f"{SIDES[c]} SliceInfo of dimension {b}: burst_len = {a}, but only "
                                          f"dimension 0 has bursts: the others must have burst_len 1") if b > 0 else
                                         "source (slice_list2) SliceInfo of dimension 0: burst_len = 0; a burst is "
                                         "at least one 32-byte block"),
    F_SLICE_ROWS: (errors.ParamRangeError,
                   lambda a, b, c, env: f"the slices select {a} rows of the destination but {b} of the source: "
                                        f"both sides must select as many"),
    F_SLICE_COUNT: (errors.ParamRangeError,
                    lambda a, b, c, env: f"the source's dimension 0 makes {a} bursts per row; a copy takes at most "
                                         f"{b}"),
})


@njit(cache=True)
def _field(info, dims, side, dim, f):
    return info[(side * dims + dim) * 5 + f]


@njit(cache=True)
def _validate(info, dims, loc):
    for s in range(2):
        for i in range(dims):
            for f in range(5):
                v = _field(info, dims, s, i, f)
                if v < 0 or v > U32:
                    raise Fault(F_SLICE_FIELD, loc, v, i, s * 5 + f)
            if _field(info, dims, s, i, 4) == 0:
                raise Fault(F_SLICE_SHAPE, loc, i, s, 0)
            if _field(info, dims, s, i, 1) < _field(info, dims, s, i, 0):
                raise Fault(F_SLICE_RANGE, loc, _field(info, dims, s, i, 0), _field(info, dims, s, i, 1),
                            s * MAX_DIMS + i)
            if i > 0 and _field(info, dims, s, i, 3) != 1:
                raise Fault(F_SLICE_BURST, loc, _field(info, dims, s, i, 3), i, s)
    if _field(info, dims, 1, 0, 3) == 0:
        raise Fault(F_SLICE_BURST, loc, 0, 0, 1)


@njit(cache=True)
def _rows(info, dims, side):
    """(first element, row offsets in elements) of one side."""
    n = 1
    for i in range(1, dims):
        start, end, gap = _field(info, dims, side, i, 0), _field(info, dims, side, i, 1), _field(info, dims, side, i, 2)
        n *= (end - start + 1 + gap) // (1 + gap)
    offs = np.zeros(n, np.int64)
    first = _field(info, dims, side, 0, 0)
    size = 1
    have = 1
    for i in range(1, dims):
        start, end, gap = _field(info, dims, side, i, 0), _field(info, dims, side, i, 1), _field(info, dims, side, i, 2)
        size *= _field(info, dims, side, i - 1, 4)
        first += start * size
        cnt = (end - start + 1 + gap) // (1 + gap)
        for it in range(1, cnt):
            for k in range(have):
                offs[it * have + k] = offs[k] + it * (1 + gap) * size
        have *= cnt
    return first, offs


@njit(cache=True)
def plan(info, dims, esize, ub_is_dst, loc):
    """Check the slices; returns (dst first, dst rows, src first, src rows, bursts, burst bytes, dst step, src step),
    element offsets and byte steps between bursts."""
    _validate(info, dims, loc)
    dfirst, drows = _rows(info, dims, 0)
    sfirst, srows = _rows(info, dims, 1)
    if drows.size != srows.size:
        raise Fault(F_SLICE_ROWS, loc, drows.size, srows.size, 0)
    burst = _field(info, dims, 1, 0, 3) * BLOCK // esize
    sgap, dgap = _field(info, dims, 1, 0, 2), _field(info, dims, 0, 0, 2)
    count = (_field(info, dims, 1, 0, 1) - _field(info, dims, 1, 0, 0) + 1 + sgap) // (burst + sgap)
    if count > MAX_BLOCK_COUNT:
        raise Fault(F_SLICE_COUNT, loc, count, MAX_BLOCK_COUNT, 0)
    nb = burst * esize
    if ub_is_dst:
        dstep, sstep = nb + dgap * esize // BLOCK * BLOCK, nb + sgap * esize
    else:
        dstep, sstep = nb + dgap * esize, nb + sgap * esize // BLOCK * BLOCK
    return dfirst, drows, sfirst, srows, count, nb, dstep, sstep


@njit(cache=True)
def _extent(first, rows, count, nb, step, esize):
    """Bytes from a side's start to the end of its last burst (0 when nothing moves)."""
    if count == 0 or rows.size == 0:
        return 0
    return (first + rows.max()) * esize + (count - 1) * step + nb


@njit(cache=True)
def _check_ub(addr, first, rows, count, step, esize, loc, which):
    for r in range(rows.size):
        for b in range(count):
            check_local(addr + (first + rows[r]) * esize + b * step, 0, 0, loc, which)


@instruction
def slice_gm_to_ub(lm, g, dst, dst_len, rid, off, size, info, dims, esize, loc):
    """GM -> UB (MTE2): the source's slices read from GlobalTensor (rid, off, size), written to ``dst``."""
    dfirst, drows, sfirst, srows, count, nb, dstep, sstep = plan(info, dims, esize, True, loc)
    _check_ub(dst, dfirst, drows, count, dstep, esize, loc, DST)
    check_local(dst, _extent(dfirst, drows, count, nb, dstep, esize), dst_len * esize, loc, DST)
    gext = _extent(sfirst, srows, count, nb, sstep, esize)
    check_gm_size(size, gext // esize, rid, off, esize, loc)
    check_gm(g, rid, off, gext, loc)
    for r in range(srows.size):
        for b in range(count):
            memmove(lm, dst + (dfirst + drows[r]) * esize + b * dstep, g, off + (sfirst + srows[r]) * esize
                    + b * sstep, nb)


@instruction
def slice_ub_to_gm(st, g, lm, rid, off, size, src, src_len, info, dims, esize, akind, loc):
    """UB -> GM (MTE3): the source's slices read from ``src``, written to GlobalTensor (rid, off, size)."""
    dfirst, drows, sfirst, srows, count, nb, dstep, sstep = plan(info, dims, esize, False, loc)
    _check_ub(src, sfirst, srows, count, sstep, esize, loc, SRC)
    check_local(src, _extent(sfirst, srows, count, nb, sstep, esize), src_len * esize, loc, SRC)
    gext = _extent(dfirst, drows, count, nb, dstep, esize)
    check_gm_size(size, gext // esize, rid, off, esize, loc)
    check_gm(g, rid, off, gext, loc)
    combine = atomic.begin(st, akind, loc)
    for r in range(srows.size):
        for b in range(count):
            d, s = off + (dfirst + drows[r]) * esize + b * dstep, src + (sfirst + srows[r]) * esize + b * sstep
            if combine:
                atomic.combine(st, g, d, lm, s, nb)
            else:
                memmove(g, d, lm, s, nb)
    if combine:
        atomic.end(st)


@instruction
def slice_access(st, sh, gsh, dc, info, dims, esize, ub_is_dst, ub, rid, off, loc):
    """Race checker (level ``full``): declare every burst of a slice copy on both sides."""
    dfirst, drows, sfirst, srows, count, nb, dstep, sstep = plan(info, dims, esize, ub_is_dst, loc)
    pipe = hb.MTE2 if ub_is_dst else hb.MTE3
    for r in range(srows.size):
        if ub_is_dst:
            checks.gm_access_strided(st, sh, gsh, dc, pipe, rid, off + (sfirst + srows[r]) * esize, nb, sstep,
                                     count, 0, loc)
            checks.local_access_strided(st, sh, pipe, ub + (dfirst + drows[r]) * esize, nb, dstep, count,
                                        hb.WRITE, loc)
        else:
            checks.local_access_strided(st, sh, pipe, ub + (sfirst + srows[r]) * esize, nb, sstep, count,
                                        hb.READ, loc)
            checks.gm_access_strided(st, sh, gsh, dc, pipe, rid, off + (dfirst + drows[r]) * esize, nb, dstep,
                                     count, 1, loc)
