"""What a tiling decided, as a plan of per-block work, and the invariants a single plan must keep.

A test maps a tiling function's data to a :class:`TilingPlan` (one
:class:`BlockWork` per block, the way the kernel computes them) and checks it
with :func:`check_plan` / :func:`assert_plan`: exact coverage, core bound, no
empty core, alignment, UB capacity, loop/tail consistency and balance (see
:mod:`npuemu.testing.invariants`).  :func:`plan_from_block_factor` and
:func:`plan_from_former_tail` build plans for the two usual splits.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from .violations import Violation, _grouped, raise_if

@dataclass(frozen=True)
class BlockWork:
    """One launched block's share of the work, as the kernel computes it (counts in elements).

    ``tile_len``, ``loops`` and ``last_tile_len`` describe the block's UB tile
    loop: ``loops`` iterations, all of ``tile_len`` elements but the last,
    which has ``last_tile_len``.  Leave them ``None`` for a block that moves
    its whole slice at once (the slice is then the tile).
    """

    offset: int
    length: int
    tile_len: int | None = None
    loops: int | None = None
    last_tile_len: int | None = None

    @property
    def end(self) -> int:
        return self.offset + self.length

    @property
    def largest_tile(self) -> int:
        if self.tile_len is None:
            return self.length
        return max(self.tile_len, self.last_tile_len or 0)


@dataclass(frozen=True)
class TilingPlan:
    """What a tiling decided, in the terms of the invariants.

    ``total`` elements of ``elem_bytes`` bytes are split over ``block_dim``
    blocks on a part with ``core_count`` cores; ``blocks`` lists each block's
    work in block-index order.  Optional parts switch checks on:

    - ``ub_size`` and ``ub_bytes_per_element`` (UB bytes one tile element takes
      across every queue buffer and scratch tensor: ``B * sum(sizeof)``, plus
      ``ub_extra_bytes`` that do not scale with the tile): UB capacity;
    - ``align_bytes``: the GM start of every block must be aligned (None for
      splits whose kernels move unaligned slices with ``data_copy_pad``);
    - ``tile_align_bytes``: a full tile must be a whole number of these bytes;
    - ``padded_total``: an alignment split may cover up to this many elements
      (N rounded up to 32 bytes); tiles may then be rounded up to the unit too;
    - ``balance``: ``"even"`` (tail-core split: lengths differ by at most one
      32-byte unit, longer blocks first), ``"last-short"`` (all blocks but the
      last have the same length) or None.
    """

    total: int
    elem_bytes: int
    block_dim: int
    blocks: Sequence[BlockWork]
    core_count: int
    ub_size: int | None = None
    ub_bytes_per_element: int | None = None
    ub_extra_bytes: int = 0
    align_bytes: int | None = 32
    tile_align_bytes: int | None = 32
    padded_total: int | None = None
    balance: str | None = None
    core_kind: str = "AIV"
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", tuple(self.blocks))
        if self.balance not in (None, "even", "last-short"):
            raise UsageError(f"balance must be 'even', 'last-short' or None, got {self.balance!r}")
        if self.elem_bytes < 1:
            raise UsageError(f"elem_bytes must be positive, got {self.elem_bytes}")

    @property
    def unit(self) -> int:
        """Elements per alignment unit (one 32-byte block for the usual splits)."""
        if not self.align_bytes:
            return 1
        return max(1, self.align_bytes // self.elem_bytes)

    def describe(self) -> str:
        what = f"{self.label}: " if self.label else ""
        ub = f", UB {self.ub_size} bytes" if self.ub_size is not None else ""
        return (f"{what}{self.total} elements of {self.elem_bytes} bytes over block_dim={self.block_dim} "
                f"({self.core_count} {self.core_kind} cores{ub})")


# ---------------------------------------------------------------------------------------- 1-D plans


def check_plan(plan: TilingPlan) -> list[Violation]:
    """Every invariant that a single tiling result can break (1-7); an empty list if it is sound."""
    out: list[Violation] = []
    out += _core_bound(plan)
    out += _coverage(plan)
    per_block: list[tuple[str, str, int]] = []
    for i, b in enumerate(plan.blocks):
        per_block += _no_empty(b, i)
        per_block += _alignment(plan, b, i)
        per_block += _ub_capacity(plan, b, i)
        per_block += _loop_tail(plan, b, i)
    out += _grouped(per_block)
    out += _balance(plan)
    return out


def assert_plan(plan: TilingPlan) -> None:
    """Raise :class:`TilingInvariantError` if :func:`check_plan` finds anything."""
    raise_if(check_plan(plan), plan.describe())


def _core_bound(plan: TilingPlan) -> list[Violation]:
    out = []
    if plan.block_dim < 1:
        out.append(Violation("core bound", f"block_dim is {plan.block_dim}; a launch needs at least one block"))
    elif plan.block_dim > plan.core_count:
        out.append(Violation("core bound", f"block_dim {plan.block_dim} exceeds the {plan.core_count} "
                                           f"{plan.core_kind} cores of the platform"))
    if len(plan.blocks) != plan.block_dim:
        out.append(Violation("core bound", f"the plan describes {len(plan.blocks)} blocks but block_dim is "
                                           f"{plan.block_dim}"))
    return out


def _coverage(plan: TilingPlan) -> list[Violation]:
    out = []
    limit = plan.total if plan.padded_total is None else max(plan.total, plan.padded_total)
    order = sorted(range(len(plan.blocks)), key=lambda i: (plan.blocks[i].offset, i))
    cursor, last = 0, None
    for i in order:
        b = plan.blocks[i]
        if b.length <= 0:
            continue            # reported by "no empty core"; it covers nothing
        if b.offset < 0:
            out.append(Violation("exact coverage", f"starts at element {b.offset}, before the tensor", (i,)))
        elif b.offset > cursor:
            after = f"block {last} ends" if last is not None else "the tensor starts"
            out.append(Violation("exact coverage", f"elements [{cursor}, {b.offset}) are not covered "
                                                   f"({after} at {cursor}, block {i} starts at {b.offset})"))
        elif b.offset < cursor:
            n = min(cursor, b.end) - b.offset
            out.append(Violation("exact coverage", f"starts at element {b.offset}, inside block {last}'s slice "
                                                   f"(which ends at {cursor}): {n} elements covered twice", (i,)))
        if b.end > cursor:
            cursor, last = b.end, i
    if cursor < plan.total:
        who = f"the last slice (block {last}) ends at {cursor}" if last is not None else "no block covers anything"
        out.append(Violation("exact coverage", f"elements [{cursor}, {plan.total}) are not covered: {who}, "
                                               f"the tensor has {plan.total} elements"))
    elif cursor > limit:
        out.append(Violation("exact coverage", f"reads and writes past the end: the slices reach element "
                                               f"{cursor}, the tensor has {plan.total}"
                                               + (f" (padded: {limit})" if limit != plan.total else ""), (last,)))
    return out


def _no_empty(b: BlockWork, i: int) -> list[tuple[str, str, int]]:
    if b.length > 0:
        return []
    return [("no empty core", f"gets {b.length} elements; every launched block needs at least one", i)]


def _alignment(plan: TilingPlan, b: BlockWork, i: int) -> list[tuple[str, str, int]]:
    out = []
    s = plan.elem_bytes
    if plan.align_bytes and (b.offset * s) % plan.align_bytes:
        out.append(("alignment", f"starts at element {b.offset} = byte {b.offset * s}, not a multiple of "
                                 f"{plan.align_bytes}", i))
    if plan.tile_align_bytes and b.tile_len is not None and (b.tile_len * s) % plan.tile_align_bytes:
        out.append(("alignment", f"a tile of {b.tile_len} elements is {b.tile_len * s} bytes, not a multiple "
                                 f"of {plan.tile_align_bytes}", i))
    return out


def _ub_capacity(plan: TilingPlan, b: BlockWork, i: int) -> list[tuple[str, str, int]]:
    if plan.ub_size is None or plan.ub_bytes_per_element is None:
        return []
    tile = b.largest_tile
    need = plan.ub_extra_bytes + plan.ub_bytes_per_element * tile
    if need <= plan.ub_size:
        return []
    extra = f" + {plan.ub_extra_bytes}" if plan.ub_extra_bytes else ""
    return [("UB capacity", f"a tile of {tile} elements needs {tile} x {plan.ub_bytes_per_element}{extra} = "
                            f"{need} bytes of UB, the platform has {plan.ub_size}", i)]


def _loop_tail(plan: TilingPlan, b: BlockWork, i: int) -> list[tuple[str, str, int]]:
    if b.tile_len is None or b.length <= 0:
        return []
    t, n = b.tile_len, b.length
    if t < 1:
        return [("loop/tail consistency", f"tile_len is {t}; a tile loop needs tiles of at least one element", i)]
    loops = b.loops if b.loops is not None else -(-n // t)
    last = b.last_tile_len if b.last_tile_len is not None else n - (loops - 1) * t
    covered = (loops - 1) * t + last if loops >= 1 else 0
    slack = -(-n // plan.unit) * plan.unit - n if plan.padded_total is not None else 0
    out = []
    if loops != -(-n // t):
        out.append(("loop/tail consistency", f"{loops} tile iterations of {t} elements for a slice of {n}; "
                                             f"ceil({n}/{t}) = {-(-n // t)} are needed", i))
    if not 0 < last <= t:
        out.append(("loop/tail consistency", f"the last tile has {last} elements, outside (0, {t}]", i))
    if covered < n:
        out.append(("loop/tail consistency", f"{loops} tiles ({loops - 1} x {t} + last {last}) cover {covered} "
                                             f"of the slice's {n} elements: {n - covered} are never processed", i))
    elif covered > n + slack:
        out.append(("loop/tail consistency", f"{loops} tiles ({loops - 1} x {t} + last {last}) cover {covered} "
                                             f"elements, more than the slice's {n}", i))
    return out


def _balance(plan: TilingPlan) -> list[Violation]:
    lengths = [b.length for b in plan.blocks]
    if plan.balance is None or len(lengths) < 2:
        return []
    if plan.balance == "even":
        a = plan.unit
        lo, hi = min(lengths), max(lengths)
        out = []
        if hi - lo > a:
            out.append(Violation("balance", f"slices range from {lo} to {hi} elements; a tail-core split keeps "
                                            f"them within one unit of {a}"))
        drops = [i for i in range(1, len(lengths)) if lengths[i] > lengths[i - 1]]
        if drops:
            out.append(Violation("balance", f"a longer slice follows a shorter one (block {drops[0]}: "
                                            f"{lengths[drops[0]]} after {lengths[drops[0] - 1]}); the "
                                            f"former blocks come first", (drops[0],)))
        return out
    former = lengths[0]
    odd = [i for i in range(1, len(lengths) - 1) if lengths[i] != former]
    out = [Violation("balance", f"has {lengths[i]} elements; every block but the last has {former}", (i,))
           for i in odd[:1]]
    if lengths[-1] > former:
        out.append(Violation("balance", f"the last block has {lengths[-1]} elements, more than the "
                                        f"{former} of the others", (len(lengths) - 1,)))
    return out


# ------------------------------------------------------------------------- building plans


def tile_loop(length: int, tile_len: int) -> tuple[int, int]:
    """(loops, last_tile_len) of the usual kernel loop over ``length`` elements in tiles of ``tile_len``."""
    loops = -(-length // tile_len)
    return loops, length - (loops - 1) * tile_len


def plan_from_block_factor(total: int, block_factor: int, block_dim: int, **plan: Any) -> TilingPlan:
    """Plan of the "every block but the last gets ``block_factor``" split (ElewiseTiling, add_example).

    Block ``i`` starts at ``i * block_factor`` and gets
    ``min(block_factor, total - i * block_factor)`` elements, as those kernels
    compute it.  ``plan`` holds the other :class:`TilingPlan` fields; a
    ``tile_len`` entry adds each block's tile loop.
    """
    tile_len = plan.pop("tile_len", None)
    blocks = []
    for i in range(block_dim):
        off = i * block_factor
        n = min(block_factor, total - off)
        loop = tile_loop(n, tile_len) if tile_len and n > 0 else (None, None)
        blocks.append(BlockWork(off, n, tile_len, *loop))
    plan.setdefault("balance", "last-short")
    return TilingPlan(total=total, block_dim=block_dim, blocks=blocks, **plan)


def plan_from_former_tail(total: int, former_num: int, former_len: int, tail_num: int, tail_len: int,
                          **plan: Any) -> TilingPlan:
    """Plan of the tail-core split (superkernel-binaries-tiling.md §3.5(b)).

    Blocks ``0 .. former_num-1`` start at ``former_len * i`` with
    ``former_len`` elements; the next ``tail_num`` start at ``former_len *
    former_num + tail_len * (i - former_num)`` with ``tail_len``.  ``total``
    is N; the split may cover up to N rounded up to the alignment unit.
    """
    tile_len = plan.pop("tile_len", None)
    blocks = []
    for i in range(former_num + tail_num):
        if i < former_num:
            off, n = former_len * i, former_len
        else:
            off, n = former_len * former_num + tail_len * (i - former_num), tail_len
        loop = tile_loop(n, tile_len) if tile_len and n > 0 else (None, None)
        blocks.append(BlockWork(off, n, tile_len, *loop))
    plan.setdefault("balance", "even")
    elem_bytes = plan["elem_bytes"]
    align = plan.get("align_bytes", 32) or elem_bytes
    unit = max(1, align // elem_bytes)
    plan.setdefault("padded_total", -(-total // unit) * unit)
    return TilingPlan(total=total, block_dim=former_num + tail_num, blocks=blocks, **plan)
