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

Each checker returns a list of :class:`~npuemu.testing.violations.Violation`;
the ``assert_*`` forms raise :class:`~npuemu.testing.violations.TilingInvariantError`
(an ``AssertionError``) whose message lists every violation as ``[invariant]
blocks ...: what is wrong, with the numbers``.  Invariants 1-7 are checked on
a plan (:mod:`npuemu.testing.plans`), 9-10 on a matmul tiling
(:mod:`npuemu.testing.cube_invariants`); this module runs tiling functions and
checks 8 (determinism, monotonicity).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from .plans import TilingPlan, check_plan
from .violations import Violation, raise_if

__all__ = ["check_tiling", "assert_tiling", "describe_context", "check_deterministic", "check_monotonic"]


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
