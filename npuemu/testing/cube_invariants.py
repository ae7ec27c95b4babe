"""Invariants of matmul tilings: TCubeTiling legality and the block schedule's coverage (9 and 10)."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from ..errors import NpuemuError
from .violations import Violation

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
    formats, split-K).  An ``asc.adv.TCubeTiling`` (snake_case fields, from
    ``asc.lib.host``) is judged by ``npuemu.host.matmul_tiling_check``; its
    options are ``a_dtype=, b_dtype=, c_dtype=`` and the rest of that
    checker's keywords.
    """
    if check is None and hasattr(tiling, "used_core_num"):
        check = _host_checker()             # an asc.adv.TCubeTiling (snake_case): the host library's checker
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


def _host_checker() -> Callable[..., Any]:
    """``npuemu.host.matmul_tiling_check.check_tcube_tiling``: options ``a_dtype=, b_dtype=, c_dtype=``, ..."""
    from ..host.matmul_tiling_check import check_tcube_tiling
    return check_tcube_tiling


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
