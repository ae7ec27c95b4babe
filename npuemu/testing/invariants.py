"""Invariants of tiling functions, checked on a small description of what a tiling decided.

A tiling function's data is specific to its kernel, but what it *means* is
always the same: ``block_dim`` blocks each get a slice ``[offset, offset +
length)`` of the work, and stream it through UB in tiles.  A test maps the
tiling data to a :class:`TilingPlan` (one :class:`BlockWork` per block, the
way the kernel computes them) and checks it::

    plan = TilingPlan(total=n, elem_bytes=2, block_dim=r.block_dim, core_count=ctx.platform.aiv_count,
                      blocks=[BlockWork(off, ln, tile_len=t, loops=k, last_tile_len=last) for ...],
                      ub_size=ctx.platform.ub_size, ub_bytes_per_element=2 * 3 * 2)
    assert_plan(plan)

The invariants are those of superkernel-binaries-tiling.md ("10 invariants
for property tests of tiling functions"):

============================  ==============================================================
name                          what must hold
============================  ==============================================================
``exact coverage``            the slices cover ``[0, total)`` with no gap and no overlap
``core bound``                ``1 <= block_dim <= core_count``; one slice per launched block
``no empty core``             every launched block gets at least one element
``alignment``                 every slice starts on a ``align_bytes`` boundary in GM, every
                              full tile is a whole number of ``tile_align_bytes``
``UB capacity``               ``ub_extra_bytes + ub_bytes_per_element * max tile <= ub_size``
``loop/tail consistency``     ``loops == ceil(length / tile_len)`` and the last tile holds
                              ``length - (loops - 1) * tile_len`` elements, in ``(0, tile_len]``
``balance``                   slices differ by at most one alignment unit (``"even"``), or all
                              but the last are equal (``"last-short"``)
``determinism``               the same context gives the same result, byte for byte
``monotonicity``              more work never launches fewer blocks, until all cores are used
``TCubeTiling legality``      the matmul tiling fits L0A/L0B/L0C/L1/BiasTable and is aligned
``matmul coverage``           the block schedule is a bijection onto the tile grid and the
                              actual tile shapes add up to M and N
============================  ==============================================================

Each checker returns a list of :class:`Violation`; the ``assert_*`` forms
raise :class:`TilingInvariantError` (an ``AssertionError``) whose message lists
every violation as ``[invariant] blocks ...: what is wrong, with the numbers``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..errors import NpuemuError, UsageError

__all__ = [
    "BlockWork", "TilingPlan", "Violation", "TilingInvariantError",
    "check_plan", "assert_plan", "check_tiling", "assert_tiling", "describe_context",
    "check_deterministic", "check_monotonic",
    "check_cube_tiling", "check_block_schedule", "raise_if", "tile_loop",
    "plan_from_block_factor", "plan_from_former_tail",
]

INVARIANTS = (
    "exact coverage", "core bound", "no empty core", "alignment", "UB capacity", "loop/tail consistency",
    "balance", "determinism", "monotonicity", "TCubeTiling legality", "matmul coverage",
)

MAX_LISTED = 12      # violations shown in one error message; the rest are counted


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


@dataclass(frozen=True)
class Violation:
    """One broken invariant: its name, the blocks it concerns (may be empty) and what is wrong."""

    invariant: str
    detail: str
    blocks: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = f"{_blocks_text(self.blocks)}: " if self.blocks else ""
        return f"[{self.invariant}] {where}{self.detail}"


class TilingInvariantError(AssertionError):
    """A tiling broke one or more invariants; ``violations`` lists them."""

    def __init__(self, subject: str, violations: Sequence[Violation]):
        self.subject = subject
        self.violations = tuple(violations)
        super().__init__(_report(subject, self.violations))


def _report(subject: str, violations: Sequence[Violation]) -> str:
    names = sorted({v.invariant for v in violations}, key=lambda n: (INVARIANTS + (n,)).index(n))
    head = f"tiling violates {', '.join(names)} ({subject})"
    lines = [head] + [f"  {v}" for v in violations[:MAX_LISTED]]
    if len(violations) > MAX_LISTED:
        lines.append(f"  ... and {len(violations) - MAX_LISTED} more")
    return "\n".join(lines)


def _blocks_text(blocks: tuple[int, ...]) -> str:
    """``block 3``, ``blocks 0-46``, ``blocks 1, 5, 9-11``."""
    runs: list[str] = []
    start = prev = None
    for b in sorted(blocks):
        if prev is not None and b == prev + 1:
            prev = b
            continue
        if start is not None:
            runs.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = b
    if start is not None:
        runs.append(str(start) if start == prev else f"{start}-{prev}")
    plural = len(blocks) > 1
    return ("blocks " if plural else "block ") + ", ".join(runs)


def _grouped(found: Iterable[tuple[str, str, int]]) -> list[Violation]:
    """One Violation per distinct (invariant, detail), listing every block it was found on."""
    order: dict[tuple[str, str], list[int]] = {}
    for invariant, detail, block in found:
        order.setdefault((invariant, detail), []).append(block)
    return [Violation(inv, detail, tuple(blocks)) for (inv, detail), blocks in order.items()]


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


def raise_if(violations: Sequence[Violation], subject: str) -> None:
    """Raise :class:`TilingInvariantError` for ``violations`` unless there are none."""
    if violations:
        raise TilingInvariantError(subject, violations)


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


# ------------------------------------------------------------------- properties of the function


def check_tiling(tiling_fn: Callable[[Any], Any], ctx: Any,
                 to_plan: Callable[[Any, Any], TilingPlan | Sequence[TilingPlan]], *,
                 deterministic: bool = True) -> list[Violation]:
    """Run ``tiling_fn(ctx)``, map the result with ``to_plan(ctx, result)`` and check it.

    ``to_plan`` returns one :class:`TilingPlan` or several (e.g. one along
    rows and one along the column tiles of a row).  With ``deterministic``
    the function is called a second time and must give the same result.
    """
    result = tiling_fn(ctx)
    plans = to_plan(ctx, result)
    out: list[Violation] = []
    for plan in (plans if isinstance(plans, (list, tuple)) else (plans,)):
        out += check_plan(plan)
    if deterministic:
        out += check_deterministic(tiling_fn, ctx)
    return out


def assert_tiling(tiling_fn: Callable[[Any], Any], ctx: Any,
                  to_plan: Callable[[Any, Any], TilingPlan | Sequence[TilingPlan]], *,
                  deterministic: bool = True) -> None:
    """:func:`check_tiling`, raising :class:`TilingInvariantError` that names the function, inputs and platform."""
    raise_if(check_tiling(tiling_fn, ctx, to_plan, deterministic=deterministic), describe_context(tiling_fn, ctx))


def describe_context(tiling_fn: Callable[[Any], Any], ctx: Any) -> str:
    """``my_tiling on Ascend910B1 (48 AIV, UB 196608 bytes), inputs float16[1999]``."""
    name = getattr(tiling_fn, "__name__", type(tiling_fn).__name__)
    p = getattr(ctx, "platform", None)
    where = f" on {p.name} ({p.aiv_count} AIV, {p.aic_count} AIC, UB {p.ub_size} bytes)" if p is not None else ""
    ins = ", ".join(f"{t.dtype}{list(t.shape)}" for t in getattr(ctx, "inputs", ()))
    attrs = f", attrs {dict(ctx.attrs)}" if getattr(ctx, "attrs", ()) else ""
    return f"{name}{where}, inputs {ins}{attrs}"


def _fingerprint(result: Any) -> dict[str, Any]:
    """The parts of a TilingResult that must be reproducible, tiling data as bytes when it can be."""
    data = getattr(result, "tiling_data", None)
    if data is not None and hasattr(data, "to_bytes"):
        data_view: Any = bytes(data.to_bytes())
    elif data is not None and hasattr(data, "_struct_fields_"):
        data_view = {name: _plain(getattr(data, name)) for name, _ in data._struct_fields_}
    else:
        data_view = data
    return {
        "block_dim": getattr(result, "block_dim", None),
        "tiling_key": getattr(result, "tiling_key", None),
        "workspace_sizes": tuple(getattr(result, "workspace_sizes", ()) or ()),
        "schedule_mode": getattr(result, "schedule_mode", None),
        "tiling_data": data_view,
    }


def _plain(v: Any) -> Any:
    if hasattr(v, "_struct_fields_"):
        return {n: _plain(getattr(v, n)) for n, _ in v._struct_fields_}
    if hasattr(v, "tolist"):
        return v.tolist()
    return v


def check_deterministic(tiling_fn: Callable[[Any], Any], ctx: Any, runs: int = 2) -> list[Violation]:
    """Invariant 8a: ``tiling_fn(ctx)`` gives the same block dim, key, workspaces and tiling data bytes."""
    first = _fingerprint(tiling_fn(ctx))
    for _ in range(runs - 1):
        again = _fingerprint(tiling_fn(ctx))
        for part, value in first.items():
            if again[part] != value:
                shown = _difference(value, again[part])
                return [Violation("determinism", f"two calls with the same context differ in {part}: {shown}")]
    return []


def _difference(a: Any, b: Any) -> str:
    if isinstance(a, bytes) and isinstance(b, bytes):
        if len(a) != len(b):
            return f"{len(a)} bytes, then {len(b)} bytes"
        k = next(i for i in range(len(a)) if a[i] != b[i])
        return f"byte {k} is 0x{a[k]:02x}, then 0x{b[k]:02x}"
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if a.get(k) != b.get(k):
                return f"field {k} is {a.get(k)!r}, then {b.get(k)!r}"
    return f"{a!r}, then {b!r}"


def check_monotonic(tiling_fn: Callable[[Any], Any], contexts: Sequence[Any],
                    sizes: Sequence[int] | None = None, core_count: int | None = None) -> list[Violation]:
    """Invariant 8b: over ``contexts`` of growing size, block_dim never drops while cores are left.

    ``sizes`` (default: each context's first input size) orders the
    contexts; ``core_count`` defaults to the first context's vector cores.
    Once a tiling has used every core it may rebalance to fewer blocks, so
    only a drop from below ``core_count`` is a violation.
    """
    if not contexts:
        return []
    if sizes is None:
        sizes = [_first_size(c) for c in contexts]
    if core_count is None:
        core_count = contexts[0].platform.aiv_count
    runs = sorted(zip(sizes, range(len(contexts))))
    prev_size = prev_dim = None
    for size, i in runs:
        dim = tiling_fn(contexts[i]).block_dim
        if prev_dim is not None and size > prev_size and dim < prev_dim < core_count:
            return [Violation("monotonicity", f"{prev_size} elements launch {prev_dim} blocks but {size} launch "
                                              f"only {dim} (fewer blocks for more work, with "
                                              f"{core_count} cores available)")]
        if prev_dim is None or size > prev_size:
            prev_size, prev_dim = size, dim
    return []


def _first_size(ctx: Any) -> int:
    return math.prod(ctx.inputs[0].shape)


# -------------------------------------------------------------------------------------- matmul


def check_cube_tiling(tiling: Any, platform: Any, *, check: Callable[..., Any] | None = None,
                      **options: Any) -> list[Violation]:
    """Invariants 9 and 10 on a TCubeTiling: legality, core bound and core count.

    Legality (L0A/L0B/L0C/L1/BiasTable capacity, alignment, depths, single-core
    shapes) is judged by the tiling framework's ``check_tcube_tiling``
    (``check`` overrides it); each problem it reports becomes a
    ``TCubeTiling legality`` violation.  On top, ``usedCoreNum`` must fit the
    cube cores and equal ``ceil(M/singleCoreM) * ceil(N/singleCoreN)``
    (reported as ``matmul coverage``, whichever check finds it).  ``options``
    go to the legality check (``cfg=MatmulConfig(...)``: dtypes, transposes,
    formats, split-K).
    """
    problems = _legality_problems(tiling, platform, check, options)
    out = [Violation("TCubeTiling legality", p) for p in problems if not p.startswith("usedCoreNum")]
    used = _get(tiling, "usedCoreNum", "used_core_num")
    m, n = _get(tiling, "M", "m"), _get(tiling, "N", "n")
    sm, sn = _get(tiling, "singleCoreM", "single_core_m"), _get(tiling, "singleCoreN", "single_core_n")
    if None in (used, m, n, sm, sn):
        return out
    aic = platform.aic_count
    if not 1 <= used <= aic:
        out.append(Violation("matmul coverage", f"usedCoreNum {used} is outside [1, {aic}] (cube cores of "
                                                f"{platform.name})"))
    if sm > 0 and sn > 0:
        want = -(-m // sm) * -(-n // sn)
        if used != want:
            out.append(Violation("matmul coverage", f"usedCoreNum {used} but ceil(M/singleCoreM) x "
                                                    f"ceil(N/singleCoreN) = ceil({m}/{sm}) x ceil({n}/{sn}) "
                                                    f"= {want} blocks of work"))
    return out


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        try:
            value = getattr(obj, name)
        except AttributeError:
            continue
        return int(value)
    return None


def _legality_problems(tiling: Any, platform: Any, check: Callable[..., Any] | None,
                       options: dict[str, Any]) -> list[str]:
    """Problems the TCubeTiling checker reports, whatever form it reports them in."""
    if check is None:
        check = _framework_checker()
    try:
        found = check(tiling, platform, **options)
    except AssertionError as exc:               # a checker that raises instead of returning
        return [str(exc)]
    except ValueError as exc:
        return [str(exc)]
    if found is None or found is True:
        return []
    if found is False:
        return ["the TCubeTiling checker rejected the tiling"]
    if isinstance(found, str):
        return [found]
    return [str(p) for p in found]


def _framework_checker() -> Callable[..., Any]:
    """``npuemu.tiling.matmul.check_tcube_tiling``; without it no tiling could be judged, so that is an error."""
    try:
        from ..tiling.matmul import check_tcube_tiling
    except ImportError as exc:
        raise NpuemuError(f"check_cube_tiling needs the TCubeTiling checker npuemu.tiling.matmul."
                          f"check_tcube_tiling, which cannot be imported ({exc}); pass check= to use "
                          f"another checker") from exc
    return check_tcube_tiling


def check_block_schedule(m: int, n: int, tile_m: int, tile_n: int, block_dim: int,
                         block_coord: Callable[[int], tuple[int, int]] | None = None, *,
                         actual_shape: Callable[[tuple[int, int]], tuple[int, int]] | None = None,
                         tasks_of: Callable[[int], Iterable[int]] | None = None,
                         core_count: int | None = None) -> list[Violation]:
    """Invariant 10: a catlass-style block schedule covers the ``M x N`` output exactly once.

    Tasks ``t in [0, ceil(M/tile_m) * ceil(N/tile_n))`` are tiles of the
    output; block ``b`` runs ``tasks_of(b)`` (default: ``range(b, tasks,
    block_dim)``, the kernel loop ``for t = idx; t < loops; t += blockNum``);
    ``block_coord(t)`` gives the task's (row, column) in the tile grid
    (default: row-major) and ``actual_shape(coord)`` its clipped shape (default:
    the tile clipped to M and N).  Checked: the tasks are split over blocks
    with no task run twice or never; ``block_coord`` is a bijection onto the
    grid; the actual shapes add up to M down every column and N along every
    row; and ``block_dim`` fits ``core_count`` when given.
    """
    loops_m, loops_n = -(-m // tile_m), -(-n // tile_n)
    tasks = loops_m * loops_n
    if block_coord is None:
        block_coord = lambda t: divmod(t, loops_n)    # noqa: E731 - the default is one expression
    if actual_shape is None:
        actual_shape = lambda c: (min(tile_m, m - c[0] * tile_m), min(tile_n, n - c[1] * tile_n))  # noqa: E731
    if tasks_of is None:
        tasks_of = lambda b: range(b, tasks, block_dim)   # noqa: E731
    out: list[Violation] = []
    if core_count is not None and not 1 <= block_dim <= core_count:
        out.append(Violation("matmul coverage", f"block_dim {block_dim} is outside [1, {core_count}] cores"))

    owner: dict[int, int] = {}
    for b in range(block_dim):
        for t in tasks_of(b):
            if not 0 <= t < tasks:
                out.append(Violation("matmul coverage", f"runs task {t}, outside [0, {tasks})", (b,)))
            elif t in owner:
                out.append(Violation("matmul coverage", f"runs task {t}, which block {owner[t]} runs too", (b,)))
            else:
                owner[t] = b
    missing = [t for t in range(tasks) if t not in owner]
    if missing:
        out.append(Violation("matmul coverage", f"{len(missing)} of {tasks} tasks are run by no block "
                                                f"(first: task {missing[0]})"))

    seen: dict[tuple[int, int], int] = {}
    shapes: dict[tuple[int, int], tuple[int, int]] = {}
    for t in range(tasks):
        c = tuple(int(v) for v in block_coord(t))
        if not (0 <= c[0] < loops_m and 0 <= c[1] < loops_n):
            out.append(Violation("matmul coverage", f"block_coord({t}) = {c} is outside the "
                                                    f"{loops_m} x {loops_n} tile grid"))
        elif c in seen:
            out.append(Violation("matmul coverage", f"block_coord maps tasks {seen[c]} and {t} to the same tile "
                                                    f"{c}: not a bijection"))
        else:
            seen[c] = t
            shapes[c] = tuple(int(v) for v in actual_shape(c))
    if len(seen) == tasks == loops_m * loops_n and len(shapes) == tasks:
        for j in range(loops_n):
            rows = sum(shapes[(i, j)][0] for i in range(loops_m))
            if rows != m:
                out.append(Violation("matmul coverage", f"tile column {j}: actual block rows add up to {rows}, "
                                                        f"M is {m}"))
                break
        for i in range(loops_m):
            cols = sum(shapes[(i, j)][1] for j in range(loops_n))
            if cols != n:
                out.append(Violation("matmul coverage", f"tile row {i}: actual block columns add up to {cols}, "
                                                        f"N is {n}"))
                break
    return out
