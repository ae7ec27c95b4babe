"""Running a kernel binary on emulated cores.

Each core runs its own instance of the generated generator function with its
own ``st``/``lm``/``log`` arrays; GM is the tuple of argument regions, shared
by all cores and used in place.  The scheduler resumes cores in turn; an
instance yields when it must wait for another core, so cross-core waits never
block the host thread.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from .. import errors
from ..codegen.compiler import compile_numba
from ..isa import dcache, hb
from ..isa import state as S
from ..isa.fault import FAULTS, Fault
from ..isa.state import LOG_WORDS
from ..language import dtype as dt
from ..language.enums import Hardware, TPosition
from ..options import Options
from .args import Region, region_for
from .cores import CoreSpec, core_plan, new_core_state
from .debuglog import print_launch_logs

SYSTEM_REGION_BYTES = 64 * 1024
_DUMMY = np.zeros(1, np.int64)      # stands in for arrays a launch does not use (never written)   # npuemu's own GM buffer (workspace for soft syncs and the like)


class FaultContext:
    """Names for fault messages: regions, positions, memories, dtypes."""

    def __init__(self, regions: list[Region], locs: list[Any] = ()):
        self.regions = regions
        self.locs = locs

    def source(self, loc_id: int) -> str:
        """``file:line: source`` of another instruction (e.g. the other side of a race)."""
        if 0 <= loc_id < len(self.locs):
            loc = self.locs[loc_id]
            return f"{loc.short()} `{loc.line_text.strip()}`"
        return f"location {loc_id}"

    def region(self, rid: int) -> str:
        if 0 <= rid < len(self.regions):
            r = self.regions[rid]
            return f"GM argument '{r.name}' ({r.bytes.size} bytes)"
        return f"GM region {rid}"

    def position(self, pos: int) -> str:
        try:
            return TPosition(pos).name
        except ValueError:
            return f"position {pos}"

    def hardware(self, hw: int) -> str:
        try:
            return Hardware(hw).name
        except ValueError:
            return f"memory {hw}"

    def dtype(self, code: int) -> str:
        try:
            return dt.by_code(code).name
        except KeyError:
            return f"dtype {code}"


def translate_fault(exc: Fault, binary: Any, core: CoreSpec, ctx: FaultContext) -> errors.KernelFault:
    code, loc_id, a, b, c = (list(exc.args) + [0] * 5)[:5]
    cls, render = FAULTS.get(int(code), (errors.KernelFault, lambda a, b, c, env: f"fault code {code}"))
    locs = binary.compiled.locs
    loc = locs[loc_id] if 0 <= loc_id < len(locs) else None
    return cls(render(int(a), int(b), int(c), ctx), kernel=binary.compiled.name, core=core.label, loc=loc)


def _scalar_args(binary: Any, values: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for pname, path, kind in binary.scalar_params:
        v = values[pname]
        for part in path:
            v = getattr(v, part)
        if kind == "float":
            out.append(np.float32(v))
        elif kind == "bool":
            out.append(bool(v))
        else:
            iv = int(v)
            if not -(1 << 63) <= iv < (1 << 63):
                raise errors.LaunchError(f"argument '{pname}' = {iv} does not fit in 64 bits")
            out.append(iv)
    return out


def run(binary: Any, values: dict[str, Any], block_dim: int, options: Options) -> None:
    """Launch ``binary`` on ``block_dim`` blocks with the bound argument ``values``."""
    try:
        regions = [region_for(name, values[name]) for name in binary.gm_params]
        scalars = _scalar_args(binary, values)
    except errors.LaunchError as exc:
        raise errors.LaunchError(f"kernel '{binary.compiled.name}': {exc}") from None
    regions.append(Region("npuemu system workspace", np.zeros(SYSTEM_REGION_BYTES, np.uint8), dt.uint8))
    gm = tuple(r.bytes for r in regions)
    cores = core_plan(binary.kernel_type, block_dim)
    uses_log = bool(binary.facts.get("uses_log"))
    full = options.check == "full"
    gsh = tuple(np.zeros(hb.gm_words(r.bytes.size, i == len(regions) - 1, len(cores)), np.int64) if full
                else _DUMMY for i, r in enumerate(regions))
    dc = np.zeros(dcache.dc_bytes(len(cores)), np.uint8)
    states = []
    for slot, spec in enumerate(cores):
        st, lm = new_core_state(spec, binary.platform)
        st[S.CORE_SLOT] = slot
        st[S.CHECK_FULL] = full
        log = np.zeros(LOG_WORDS, np.int64) if uses_log else _DUMMY
        sh = np.zeros(hb.core_words(len(cores), lm.size), np.int64) if full else _DUMMY
        states.append((st, lm, log, sh))
    if options.debug:
        fn = binary.compiled.python_fn
    else:
        st0, lm0, log0, sh0 = states[0]
        fn = compile_numba(binary.compiled, (st0, lm0, gm, log0, sh0, gsh, dc, *scalars))
    ctx = FaultContext(regions, binary.compiled.locs)
    try:
        # the race checker and cross-core waits need one core at a time; the rest runs in parallel
        serial = options.debug or full or bool(binary.facts.get("blocking"))
        _schedule(fn, binary, cores, states, (gm, gsh, dc), scalars, ctx, parallel=not serial)
    finally:
        for r in regions:
            r.finish()
        if uses_log:
            print_launch_logs(binary, cores, states, block_dim)


def _schedule(fn: Any, binary: Any, cores: list[CoreSpec], states: list[tuple[np.ndarray, ...]],
              shared: tuple[tuple[np.ndarray, ...], ...], scalars: list[Any], ctx: FaultContext,
              parallel: bool) -> None:
    """Run every core to completion.

    Each round resumes every live core until it yields (a cross-core wait) or
    ends.  Compiled cores release the GIL, so with ``parallel`` a round runs on
    a thread pool; faults are reported for the lowest-numbered faulting core,
    so the error does not depend on thread timing.
    """
    if not binary.facts.get("blocking"):
        # no core ever waits for another: each runs start to finish in one call
        gens = [_PlainCore(fn, _core_args(state, shared, scalars)) for state in states]
    else:
        gens = [fn(*_core_args(state, shared, scalars)) for state in states]
    live = list(range(len(cores)))
    while live:
        outcomes = _run_round(gens, live, parallel)
        faulted = [(i, exc) for i, (kind, exc) in zip(live, outcomes) if kind == "fault"]
        if faulted:
            i, exc = min(faulted, key=lambda f: f[0])
            _raise_fault(exc, binary, cores[i], ctx)
        live = [i for i, (kind, request) in zip(live, outcomes) if kind == "yield" and request != 0]


def _core_args(state: tuple[np.ndarray, ...], shared: tuple[tuple[np.ndarray, ...], ...],
               scalars: list[Any]) -> tuple[Any, ...]:
    """Arguments of one kernel instance, in the order of ``codegen.module.CORE_ARRAYS``."""
    st, lm, log, sh = state
    gm, gsh, dc = shared
    return (st, lm, gm, log, sh, gsh, dc, *scalars)


class _PlainCore:
    """A non-blocking kernel instance behind the generator protocol: one step runs it to the end."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Any, args: tuple[Any, ...]):
        self.fn = fn
        self.args = args

    def __next__(self) -> Any:
        self.fn(*self.args)
        raise StopIteration


def _step(gen: Any) -> tuple[str, Any]:
    try:
        return "yield", next(gen)
    except StopIteration:
        return "done", None
    except Exception as exc:  # noqa: BLE001 - classified by _raise_fault
        return "fault", exc


def _run_round(gens: list[Any], live: list[int], parallel: bool) -> list[tuple[str, Any]]:
    if not parallel or len(live) < 2:
        return [_step(gens[i]) for i in live]
    pool = _thread_pool()
    n = min(pool._max_workers, len(live))  # noqa: SLF001 - the pool's own size
    chunks = [live[k::n] for k in range(n)]
    results: dict[int, tuple[str, Any]] = {}
    for chunk, outs in zip(chunks, pool.map(lambda c: [_step(gens[i]) for i in c], chunks)):
        results.update(zip(chunk, outs))
    return [results[i] for i in live]


def _raise_fault(exc: BaseException, binary: Any, core: CoreSpec, ctx: FaultContext) -> None:
    if isinstance(exc, Fault):
        raise translate_fault(exc, binary, core, ctx) from None
    if isinstance(exc, errors.NpuemuError):
        raise exc
    # e.g. ZeroDivisionError in the kernel's own arithmetic
    raise errors.KernelFault(f"{type(exc).__name__}: {exc}", kernel=binary.compiled.name, core=core.label,
                             rule="runtime error") from exc


_POOL: ThreadPoolExecutor | None = None


def _thread_pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=thread_count(), thread_name_prefix="npuemu-core")
    return _POOL


def thread_count() -> int:
    """Host threads that run emulated cores (``NPUEMU_THREADS``, default: the CPUs of this process)."""
    env = os.environ.get("NPUEMU_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
