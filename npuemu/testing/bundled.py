"""Invariant checks for npuemu's own tiling functions (``npuemu.tiling``) and the bundled kernels.

Each tiling function's data maps to :class:`~npuemu.testing.plans.TilingPlan`
objects the way its kernels read it; :func:`check_bundled_tiling` runs the
function on a context and checks every invariant that applies.  A user kernel
built on one of these tiling functions can check its tilings the same way::

    from npuemu.testing.bundled import assert_bundled_tiling
    assert_bundled_tiling(elementwise_tiling, ctx)

:func:`capture_tilings` runs a bundled kernel's host function without
launching anything and returns the tilings it asked for, so the property
tests check exactly the contexts (attributes, UB budgets) the kernels build.
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable, Iterator

from ..errors import UsageError
from ..host.tiling import TilingContext, TilingResult
from .cube_invariants import check_block_schedule, check_cube_tiling
from .invariants import check_deterministic, describe_context
from .plans import BlockWork, TilingPlan, check_plan
from .violations import Violation, raise_if

BLOCK = 32
BUFFER_NUM = 2           # every queue of the bundled kernels is double buffered


def _c_tile_loop(length: int, tile_num: int, tile_length: int, last_tile_length: int) -> dict[str, int]:
    """A §3.5(c) tile split as a loop: ``tile_num`` full tiles, then one of ``last_tile_length`` if non-zero."""
    if tile_num == 0:
        return dict(tile_len=last_tile_length, loops=1, last_tile_len=last_tile_length)
    if last_tile_length == 0:
        return dict(tile_len=tile_length, loops=tile_num, last_tile_len=tile_length)
    return dict(tile_len=tile_length, loops=tile_num + 1, last_tile_len=last_tile_length)


def elementwise_plans(ctx: TilingContext, result: TilingResult) -> list[TilingPlan]:
    """``npuemu.tiling.elementwise.elementwise_tiling``: a tail-core split with tail tiles (§3.5 (b), (c))."""
    t = result.tiling_data
    tensors = (*ctx.inputs, *ctx.outputs)
    s = min(d.itemsize for d in tensors)
    total = ctx.input(0).size
    unit = BLOCK // s
    blocks = []
    for i in range(t.former_num + t.tail_num):
        if i < t.former_num:
            off, n = t.former_length * i, t.former_length
            loop = _c_tile_loop(n, t.former_tile_num, t.former_tile_length, t.former_last_tile_length)
        else:
            off = t.former_length * t.former_num + t.tail_length * (i - t.former_num)
            n = t.tail_length
            loop = _c_tile_loop(n, t.tail_tile_num, t.tail_tile_length, t.tail_last_tile_length)
        blocks.append(BlockWork(off, n, **loop))
    per_element = BUFFER_NUM * sum(d.itemsize for d in tensors) + int(ctx.attr("scratch_bytes_per_element", 0))
    plan = TilingPlan(total=total, elem_bytes=s, block_dim=result.block_dim, blocks=blocks,
                      core_count=_aiv(ctx), ub_size=ctx.platform.ub_size, ub_bytes_per_element=per_element,
                      ub_extra_bytes=int(ctx.attr("ub_reserved_bytes", 0)), align_bytes=BLOCK,
                      tile_align_bytes=BLOCK, padded_total=-(-total // unit) * unit, balance="even",
                      label="elementwise_tiling")
    return [plan]


def row_plans(ctx: TilingContext, result: TilingResult) -> list[TilingPlan]:
    """``npuemu.tiling.rows.row_tiling``: rows over cores (tail-core rule per row), row tiles, column tiles.

    Two plans: rows over blocks (an element is one UB row of ``cols_padded``
    elements; GM slices need no alignment, rows move with ``data_copy_pad``),
    and the column tiles of one row.
    """
    t = result.tiling_data
    x = ctx.input(0)
    s = x.itemsize
    cols = x.shape[-1]
    rows = x.size // cols
    per_elem = int(ctx.attr("tile_bytes_per_element", 2 * s))
    per_col = int(ctx.attr("scratch_bytes_per_col", 0))
    fixed = int(ctx.attr("fixed_bytes", 0))
    width = t.cols_padded if t.col_tile_num == 1 else t.col_tile_len      # UB columns of one tile row
    blocks = []
    for i in range(result.block_dim):
        if i < t.former_num:
            off, n = t.former_rows * i, t.former_rows
        else:
            off, n = t.former_rows * t.former_num + t.tail_rows * (i - t.former_num), t.tail_rows
        blocks.append(BlockWork(off, n, tile_len=t.tile_rows))
    row_plan = TilingPlan(total=rows, elem_bytes=width * s, block_dim=result.block_dim, blocks=blocks,
                          core_count=_aiv(ctx), ub_size=ctx.platform.ub_size, ub_bytes_per_element=width * per_elem,
                          ub_extra_bytes=fixed + width * per_col, align_bytes=None, tile_align_bytes=BLOCK,
                          balance="even", label="row_tiling: rows over blocks (one element = one UB row)")
    col_plan = TilingPlan(total=cols, elem_bytes=s, block_dim=1, core_count=1, align_bytes=None,
                          tile_align_bytes=BLOCK, padded_total=t.cols_padded,
                          blocks=[BlockWork(0, cols, tile_len=t.col_tile_len, loops=t.col_tile_num)],
                          label="row_tiling: column tiles of one row")
    return [row_plan, col_plan]


def _row_layout(ctx: TilingContext, result: TilingResult) -> list[Violation]:
    """``cols_padded`` is ``cols`` rounded up to one 32-byte block, and the data describes the input."""
    t = result.tiling_data
    x = ctx.input(0)
    unit = max(1, BLOCK // x.itemsize)
    out = []
    if t.cols != x.shape[-1] or t.rows != x.size // x.shape[-1]:
        out.append(Violation("exact coverage", f"tiling data describes {t.rows} x {t.cols}, the input is "
                                               f"{x.size // x.shape[-1]} x {x.shape[-1]}"))
    if t.cols_padded != -(-x.shape[-1] // unit) * unit:
        out.append(Violation("alignment", f"cols_padded {t.cols_padded} is not {x.shape[-1]} columns rounded up to "
                                          f"a 32-byte block ({unit} elements)"))
    return out


def add_example_plans(ctx: TilingContext, result: TilingResult) -> list[TilingPlan]:
    """``add_example_tiling``: unaligned ``blockFactor`` per block, UB tiles of ``ubFactor`` (2 in + 1 out, x2)."""
    t = result.tiling_data
    total, factor = int(t.totalNum), int(t.blockFactor)
    blocks = []
    for i in range(result.block_dim):
        off = i * factor
        n = min(factor, total - off)
        loops = -(-n // t.ubFactor) if n > 0 else None
        blocks.append(BlockWork(off, n, tile_len=int(t.ubFactor), loops=loops))
    return [TilingPlan(total=ctx.input(0).size, elem_bytes=4, block_dim=result.block_dim, blocks=blocks,
                       core_count=_aiv(ctx), ub_size=ctx.platform.ub_size, ub_bytes_per_element=4 * 6,
                       align_bytes=None, tile_align_bytes=BLOCK, balance="last-short", label="add_example_tiling")]


def matmul_violations(ctx: TilingContext, result: TilingResult) -> list[Violation]:
    """``matmul_tiling``: TCubeTiling legality, core bound and one output block per used core."""
    t = result.tiling_data
    p = ctx.platform
    aic = p.aic_count if ctx.core_num is None else min(p.aic_count, ctx.core_num)
    capped = dataclasses.replace(p, aic_count=aic) if aic != p.aic_count else p
    cfg = (result.extra or {}).get("config")
    out = check_cube_tiling(t, capped, **({"cfg": cfg} if cfg is not None else {}))
    if result.block_dim != t.usedCoreNum:
        out.append(Violation("matmul coverage", f"block_dim {result.block_dim} but usedCoreNum {t.usedCoreNum}"))
    if t.singleCoreM > 0 and t.singleCoreN > 0:
        out += check_block_schedule(t.M, t.N, t.singleCoreM, t.singleCoreN, t.usedCoreNum, core_count=aic)
    return out


def _aiv(ctx: TilingContext) -> int:
    p = ctx.platform
    return p.aiv_count if ctx.core_num is None else min(p.aiv_count, ctx.core_num)


def _planners() -> dict[Callable[..., Any], Callable[[TilingContext, TilingResult], list[Any]]]:
    from ..tiling import elementwise, rows
    table: dict[Callable[..., Any], Callable[[TilingContext, TilingResult], list[Any]]] = {
        elementwise.elementwise_tiling: elementwise_plans,
        rows.row_tiling: row_plans,
    }
    if hasattr(elementwise, "add_example_tiling"):
        table[elementwise.add_example_tiling] = add_example_plans
    try:
        from ..tiling import matmul
    except ImportError:
        return table
    table[matmul.matmul_tiling] = matmul_violations
    return table


def check_bundled_tiling(tiling_fn: Callable[[TilingContext], TilingResult], ctx: TilingContext,
                         result: TilingResult | None = None) -> list[Violation]:
    """Every invariant of one of npuemu's tiling functions on ``ctx`` (``result``: the tiling already run)."""
    planner = _planners().get(tiling_fn)
    if planner is None:
        raise UsageError(f"{getattr(tiling_fn, '__name__', tiling_fn)!r} is not one of npuemu's tiling functions")
    if result is None:
        result = tiling_fn(ctx)
    out: list[Violation] = []
    for item in planner(ctx, result):
        out += check_plan(item) if isinstance(item, TilingPlan) else [item]
    if planner is row_plans:
        out += _row_layout(ctx, result)
    out += check_deterministic(tiling_fn, ctx)
    return out


def assert_bundled_tiling(tiling_fn: Callable[[TilingContext], TilingResult], ctx: TilingContext,
                          result: TilingResult | None = None) -> None:
    """:func:`check_bundled_tiling`, raising :class:`~npuemu.testing.violations.TilingInvariantError`."""
    raise_if(check_bundled_tiling(tiling_fn, ctx, result), describe_context(tiling_fn, ctx))


@dataclasses.dataclass(frozen=True)
class CapturedTiling:
    """One tiling a host function asked for: the function, its context and its result."""

    tiling_fn: Callable[[TilingContext], TilingResult]
    ctx: TilingContext
    result: TilingResult


@contextlib.contextmanager
def capture_tilings() -> Iterator[list[CapturedTiling]]:
    """Within the block, bundled kernels' host functions tile but do not launch; the tilings are collected.

    Outputs are left as allocated (not computed).  Not thread-safe: it swaps
    the bundled kernels' ``run_op`` for the duration of the block.
    """
    from ..host.run import make_context, run_tiling
    from ..kernels import _host
    captured: list[CapturedTiling] = []

    def tile_only(kernel: Any, tiling_fn: Callable[[TilingContext], TilingResult], inputs: Any, outputs: Any, *,
                  args: Any = (), attrs: Any = None, platform: Any = None, cache: Any = None,
                  core_num: int | None = None, deterministic: bool = False, workspace_dtype: Any = None,
                  **launch: Any) -> TilingResult:
        ctx = make_context(inputs, outputs, attrs=attrs, platform=platform, deterministic=deterministic,
                           core_num=core_num)
        result = run_tiling(tiling_fn, ctx, None)
        captured.append(CapturedTiling(tiling_fn, ctx, result))
        return result

    original = _host.run_op
    _host.run_op = tile_only
    try:
        yield captured
    finally:
        _host.run_op = original


@contextlib.contextmanager
def record_tilings() -> Iterator[list[CapturedTiling]]:
    """Within the block, every tiling ``npuemu.host.run_op`` runs before a launch is collected.

    Launches go ahead as usual; the list tells a test which tiling each one
    ran with (cached results included).  Not thread-safe.
    """
    from ..host import run
    recorded: list[CapturedTiling] = []
    original = run.run_tiling

    def run_and_record(tiling_fn: Callable[[TilingContext], TilingResult], ctx: TilingContext,
                       cache: Any = run.DEFAULT_CACHE) -> TilingResult:
        result = original(tiling_fn, ctx, cache)
        recorded.append(CapturedTiling(tiling_fn, ctx, result))
        return result

    run.run_tiling = run_and_record
    try:
        yield recorded
    finally:
        run.run_tiling = original
