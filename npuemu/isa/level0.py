"""The level-0 traversal the element-wise vector instructions share: every lane a mask/repeat call runs, in order.

A level-0 instruction (:mod:`npuemu.isa.vmask` describes the iteration
space) applies one lane operation to ``repeats`` repeats of up to ``lanes``
lanes, each operand with its own block and repeat strides.  :func:`walk`
visits those lanes once for every element-wise family (``vec_binary``,
``vec_unary``, ``vec_scalar``); a family supplies only the operation on one
lane, ``lane(d, a, b, t, s)``, which writes ``d[t]`` from ``a[t]``,
``b[t]`` and the scalar ``s`` (``d``, ``a``, ``b`` are slices of the
destination and the two sources; a family with one source passes ``None``
for the second, and its lane gets the first again).
Lanes the mask leaves off keep the destination's old value, and repeats run
in order, so a destination that is also a source with repeat stride 0
accumulates, as on the hardware.

Two paths:

* dense: no lane masked off, and every operand with block stride 1 and a
  repeat stride of one repeat's elements: the lanes are contiguous runs
  (:func:`npuemu.isa.vmask.dense_runs`), walked through slices that start at
  0, so LLVM vectorises the loop as it does the count form's;
* otherwise one DataBlock at a time: within a block the lanes are
  consecutive elements of every operand (``step``, the fewest elements per
  block among the operands, keeps a block of the narrower type inside one
  block of the wider).

How the lane gets in: an instruction is a cached closure over plain
constants, and Numba does not cache a closure over another compiled
function.  So a family registers each lane function under a name
(:func:`lane`), the instruction passes the name as a constant string, and
:func:`walk`, an overload, looks the function up while the instruction
compiles.
"""
from __future__ import annotations

from typing import Callable

from numba import types
from numba.extending import overload

from .vmask import dense_runs, element, lane_table

LANES: dict[str, Callable] = {}


def lane(name: str, fn: Callable) -> str:
    """Register the ``@njit`` lane function ``fn`` as ``name`` (unique per operation and dtypes); returns ``name``."""
    LANES[name] = fn
    return name


def walk(name, plan, d, a, b, s, blk, rep, epb, lanes):
    """Run lane ``name`` over a level-0 instruction's lanes.

    ``plan`` is what :func:`npuemu.isa.vmask.plan` returned; ``d``, ``a``,
    ``b`` are the operands as arrays of their storage type (``b`` may be
    None); ``blk``, ``rep`` and ``epb`` are their block strides, repeat strides
    (32-byte units) and elements per DataBlock, each a ``(d, a, b)`` tuple
    (``b``'s repeating ``a``'s when ``b`` is None); ``lanes`` the lanes per
    repeat.  Callable from compiled code only, with ``name`` a constant.
    """
    raise NotImplementedError("walk is only callable from compiled code")


def _part(x, lo, n, other):
    """``x[lo:lo + n]``, or ``other`` when ``x`` is None (a one-source family: no slice to compute)."""
    raise NotImplementedError("_part is only callable from compiled code")


@overload(_part, inline="always")
def _part_impl(x, lo, n, other):
    if isinstance(x, types.NoneType):
        return lambda x, lo, n, other: other
    return lambda x, lo, n, other: x[lo:lo + n]


# Called, not inlined into each instruction: Numba's inlining of the traversal measured slower on the
# strided and masked paths, and a call costs some 30 ns per instruction.
@overload(walk, prefer_literal=True)
def _walk(name, plan, d, a, b, s, blk, rep, epb, lanes):
    if not isinstance(name, types.StringLiteral):
        return None
    fn = LANES[name.literal_value]

    def impl(name, plan, d, a, b, s, blk, rep, epb, lanes):
        counter, lo, hi, repeats, total, top, every = plan
        dblk, ablk, bblk = blk
        drep, arep, brep = rep
        dpb, apb, bpb = epb
        if (every and dblk == 1 and ablk == 1 and bblk == 1
                and drep * dpb == lanes and arep * apb == lanes and brep * bpb == lanes):
            runs, length, stride = dense_runs(counter, repeats, total, top, lanes)
            for r in range(runs):
                # slices, so the loop index starts at 0 and LLVM can vectorise without wraparound checks
                dd = d[r * stride:r * stride + length]
                aa = a[r * stride:r * stride + length]
                bb = _part(b, r * stride, length, aa)
                for t in range(length):
                    fn(dd, aa, bb, t, s)
        else:
            on = lane_table(lo, hi, lanes)
            step = min(dpb, apb, bpb)
            for r in range(repeats):
                n = min(lanes, total - r * lanes) if counter else top
                for e0 in range(0, n, step):
                    m = min(step, n - e0)
                    i = element(r, e0, dblk, drep, dpb)
                    j = element(r, e0, ablk, arep, apb)
                    dd, aa = d[i:i + m], a[j:j + m]
                    bb = _part(b, element(r, e0, bblk, brep, bpb), m, aa)
                    for t in range(m):
                        if every or on[e0 + t]:
                            fn(dd, aa, bb, t, s)

    return impl
