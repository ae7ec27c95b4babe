"""Running a kernel binary on emulated cores.

Each core runs its own instance of the generated kernel function with its
own ``st``/``lm``/``log`` arrays; GM is the tuple of argument regions, shared
by all cores and used in place, plus npuemu's system region (the last one),
which holds the cross-core state.  This module builds those arrays, hands the
cores to :mod:`npuemu.runtime.scheduler` and turns what goes wrong into
:class:`npuemu.errors.KernelFault` errors.
"""
from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import numpy as np

from .. import errors
from ..codegen.compiler import compile_numba
from ..isa import cross_core, dcache, hb
from ..isa import state as S
from ..isa.state import LOG_WORDS
from ..language import dtype as dt
from ..language.struct import UnassignedFieldError
from ..options import Options
from . import scheduler
from .blas_threads import single_threaded_blas
from .args import Region, region_for
from .cores import (CoreSpec, core_plan, cube_scratch_bytes, fill_local_memory, new_core_state,
                    recycle_local_memories, residency, type_layout)
from .debuglog import print_launch_logs
from .faults import FaultContext, raise_fault

SYSTEM_REGION_BYTES = 64 * 1024     # least size of npuemu's own GM region (cross-core state and the like)
_DUMMY = np.zeros(1, np.int64)      # stands in for arrays a launch does not use (never written)


def _scalar_args(binary: Any, values: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for pname, path, kind in binary.scalar_params:
        v = values[pname]
        try:
            for part in path:
                v = getattr(v, part)
        except UnassignedFieldError as exc:
            raise errors.LaunchError(f"argument '{pname}': {exc}") from None
        if kind.endswith("[]"):             # an ArrayField of a struct argument
            out.append(_array_arg(pname, path, kind, v))
        elif kind == "float":
            out.append(np.float32(v))
        elif kind == "bool":
            out.append(bool(v))
        else:
            iv = int(v)
            if not -(1 << 63) <= iv < (1 << 63):
                raise errors.LaunchError(f"argument '{pname}' = {iv} does not fit in 64 bits")
            out.append(iv)
    return out


def _array_arg(pname: str, path: tuple[str, ...], kind: str, v: Any) -> np.ndarray:
    """A struct's array field as the kernel's read-only int64 or float32 parameter array."""
    if kind == "float[]":
        return np.ascontiguousarray(v, dtype=np.float32)
    a = np.asarray(v)
    if a.size and a.dtype == np.uint64 and int(a.max()) >= 1 << 63:
        raise errors.LaunchError(f"argument '{pname}': {'.'.join(path)} holds {int(a.max())}, which does not "
                                 f"fit in 64 bits")
    return np.ascontiguousarray(a, dtype=np.int64)


def run(binary: Any, values: dict[str, Any], block_dim: int, options: Options) -> None:
    """Launch ``binary`` on ``block_dim`` blocks with the bound argument ``values``."""
    try:
        regions = [region_for(name, values[name]) for name in binary.gm_params]
        scalars = _scalar_args(binary, values)
    except errors.LaunchError as exc:
        raise errors.LaunchError(f"kernel '{binary.compiled.name}': {exc}") from None
    cores = core_plan(binary.kernel_type, block_dim)
    regions = _padded(regions, Region("npuemu system workspace", _system_region(binary, cores), dt.uint8))
    gm = tuple(r.bytes for r in regions)
    uses_log = bool(binary.facts.get("uses_log"))
    full = options.check == "full"
    # race checker (isa/hb.py): cores that wait for each other check each other's GM accesses as they run
    gsh = hb.new_gm_shadows([r.bytes.size for r in regions], len(cores), bool(binary.facts.get("blocking")),
                            [not r.initialized for r in regions]) if full else tuple(_DUMMY for _ in regions)
    dc = np.zeros(dcache.dc_bytes(len(cores), binary.platform), np.uint8)
    states = []
    scratch = cube_scratch_bytes(binary.platform) if binary.facts.get("blas") else 0
    blocking = bool(binary.facts.get("blocking"))      # plain cores fill their memories as they start
    for slot, spec in enumerate(cores):
        st, lm = new_core_state(spec, binary.platform, scratch, fill=blocking)
        st[S.CORE_SLOT] = slot
        st[S.CHECK_FULL] = full
        log = np.zeros(LOG_WORDS, np.int64) if uses_log else _DUMMY
        sh = hb.new_core_shadow(slot, len(cores), int(st[S.SCRATCH_BASE])) if full else _DUMMY
        states.append((st, lm, log, sh))
    if options.debug:
        fn = binary.compiled.python_fn
    else:
        st0, lm0, log0, sh0 = states[0]
        fn = compile_numba(binary.compiled, (st0, lm0, gm, log0, sh0, gsh, dc, *scalars))
    ctx = FaultContext(binary.compiled.name, regions, binary.compiled.locs, cores)
    try:
        try:
            _schedule(fn, binary, cores, states, (gm, gsh, dc), scalars, ctx, options)
        except Exception:
            # a fault is raised once every core has stopped (or, cooperative, will never run again)
            recycle_local_memories([s[1] for s in states])
            raise
        recycle_local_memories([s[1] for s in states])
        if full:     # cores that never synchronise: compare their GM accesses now
            hb.check_launch(gsh, [ctx.region(i) for i in range(len(regions))], binary.compiled.locs,
                            [c.label for c in cores], binary.compiled.name)
    finally:
        for r in regions:
            r.finish()
        if uses_log:
            print_launch_logs(binary, cores, states, block_dim)


_NO_BYTES = np.zeros(0, np.uint8)


def _padded(regions: list[Region], system: Region) -> list[Region]:
    """The launch's regions, padded with empty ones to 8, 16, 32, ... and npuemu's system region last.

    The region tuple is an argument of the GM instructions (the DCache may
    write back a line of any region), and every distinct tuple length is
    another compiled specialisation of each of them: padding keeps that to
    one length for almost every kernel.
    """
    size = 8
    while size < len(regions) + 1:
        size *= 2
    pad = [Region("(unused)", _NO_BYTES, dt.uint8) for _ in range(size - len(regions) - 1)]
    return [*regions, *pad, system]


def _system_region(binary: Any, cores: list[CoreSpec]) -> np.ndarray:
    """npuemu's GM region; a kernel with cross-core primitives finds the launch's core layout in it."""
    if not binary.facts.get("cross_core"):
        return np.zeros(SYSTEM_REGION_BYTES, np.uint8)
    sysmem = np.zeros(max(SYSTEM_REGION_BYTES, cross_core.system_bytes(len(cores))), np.uint8)
    cross_core.init_system(sysmem.view(np.int64), *type_layout(binary.kernel_type, cores))
    return sysmem


def _schedule(fn: Any, binary: Any, cores: list[CoreSpec], states: list[tuple[np.ndarray, ...]],
              shared: tuple[Any, ...], scalars: list[Any], ctx: FaultContext, options: Options) -> None:
    """Run every core to completion (see npuemu/runtime/scheduler.py)."""
    args = [_core_args(state, shared, scalars) for state in states]

    def on_fault(exc: BaseException, slot: int) -> None:
        raise_fault(exc, cores[slot], ctx)

    if not binary.facts.get("blocking"):
        # no core ever waits for another: each runs start to finish in one call
        gens = [scheduler.PlainCore(fn, a, partial(fill_local_memory, *s[:2])) for a, s in zip(args, states)]
        # the race checker keeps each core's state apart and compares cores after the launch; the
        # DCache checks read other cores' caches as they go, so those kernels run one core at a time
        parallel = not (options.debug or (options.check == "full" and binary.facts.get("dcache")))
        blas = single_threaded_blas() if parallel and binary.facts.get("blas") else contextlib.nullcontext()
        with blas:
            scheduler.run_to_completion(gens, parallel, _thread_pool, on_fault)
        return
    # cores that wait for each other run one at a time: they share the cross-core state
    words = shared[0][-1].view(np.int64)
    locs = binary.compiled.locs
    plan = residency(binary.kernel_type, cores[0].block_num, binary.platform)

    def view(finished: list[bool], waiting_at: dict[int, int], not_started: list[int]) -> scheduler.LaunchView:
        return scheduler.LaunchView(binary.compiled.name, cores, [s[0] for s in states], words, locs,
                                    plan, binary.platform.name, finished, waiting_at, not_started)

    scheduler.run_cooperative([fn(*a) for a in args], plan, words, on_fault, view)
    if binary.facts.get("cross_core") and options.check != "off":
        err = scheduler.unfinished_flags(binary.compiled.name, cores, words, locs)
        if err is not None:
            raise err


def _core_args(state: tuple[np.ndarray, ...], shared: tuple[Any, ...], scalars: list[Any]) -> tuple[Any, ...]:
    """Arguments of one kernel instance, in the order of ``codegen.module.CORE_ARRAYS``."""
    st, lm, log, sh = state
    gm, gsh, dc = shared
    return (st, lm, gm, log, sh, gsh, dc, *scalars)


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
