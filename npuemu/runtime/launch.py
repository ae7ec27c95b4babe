"""Running a kernel binary on emulated cores.

:func:`launch` takes a built :class:`~npuemu.binary.kernel_binary.KernelBinary`
and its arguments by parameter name.  Each core runs its own instance of the
binary's kernel function with its own ``st``/``lm``/``log`` arrays; GM is the
tuple of argument regions, shared by all cores and used in place, plus
npuemu's system region (the last one), which holds the cross-core state.
This module builds those arrays, hands the cores to
:mod:`npuemu.runtime.scheduler` and turns what goes wrong into
:class:`npuemu.errors.KernelFault` errors.  With a stream the launch is queued
on it and runs when the stream is synchronised (:mod:`.stream`).

:func:`launch_binary` is the same for a binary loaded from disk: it checks
the arguments against the binary's key first.
"""
from __future__ import annotations

import contextlib
import contextvars
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from .. import errors
from ..binary.kernel_binary import KernelBinary
from ..codegen.abi import region_slots
from ..isa import cross_core, dcache
from ..isa import state as S
from ..isa.state import LOG_WORDS
from ..language import dtype as dt
from ..language.struct import UnassignedFieldError
from . import scheduler, shadows
from .args import Region, region_for
from .blas_threads import single_threaded_blas
from .binding import bind_arguments
from .cores import (CoreSpec, check_placement, core_plan, cube_scratch_bytes, local_memory_of, new_core_states,
                    recycle_core_states, recycle_local_memory, residency, type_layout, written_bytes)
from .debuglog import print_launch_logs
from .faults import FaultContext, raise_fault, without_frames
from .leftovers import warn_partial_copies, warn_unfreed
from .stops import CoreState, stop_error
from .stream import Stream
from .watchdog import Watchdog

Recorder = Callable[[KernelBinary, int, Mapping[str, Any], bool], None]
_RECORDER: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("npuemu_launch_recorder", default=None)


@contextlib.contextmanager
def recording(recorder: Recorder) -> Iterator[None]:
    """Within the block, :func:`launch` hands ``(binary, block_dim, values, debug)`` to ``recorder``
    instead of running it (a SuperKernel scope records its sub-kernels this way)."""
    token = _RECORDER.set(recorder)
    try:
        yield
    finally:
        _RECORDER.reset(token)


SYSTEM_REGION_BYTES = 64 * 1024     # least size of npuemu's own GM region (cross-core state and the like)
_DUMMY = np.zeros(1, np.int64)      # stands in for arrays a launch does not use (never written)


def _scalar_args(binary: KernelBinary, values: Mapping[str, Any]) -> list[Any]:
    out: list[Any] = []
    for p in binary.facts.scalar_params:
        pname, path, kind = p.param, p.path, p.kind
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
        return np.array(v, dtype=np.float32, order="C").reshape(-1)       # a copy: the launch may be queued
    a = np.asarray(v)
    if a.size and a.dtype == np.uint64 and int(a.max()) >= 1 << 63:
        raise errors.LaunchError(f"argument '{pname}': {'.'.join(path)} holds {int(a.max())}, which does not "
                                 f"fit in 64 bits")
    return np.array(a, dtype=np.int64, order="C").reshape(-1)


@dataclass(frozen=True)
class LaunchTimes:
    """What the cost model's clocks say at the end of a profiled launch (``npuemu.cost`` reads it).

    ``words[i]`` is core ``i``'s ``st[COST_ISSUE:COST_EVENT]`` (isa/state.py; ticks of
    ``1 / COST_TICK`` cycle); ``active`` the cores that shared the HBM bandwidth (``COST_CORES``);
    ``capacity`` how many cores of each type (AIV, AIC) run at once (more run in waves);
    ``trace[i]`` the instructions core ``i`` recorded (rows of pipe, start, end, source-location id; at
    most ``TRACE_EVENTS``) and ``charged[i]`` how many it charged in all; ``locs`` the binary's source
    locations, by id.
    """

    kernel: str
    platform: Any
    labels: tuple[str, ...]
    core_types: tuple[int, ...]
    words: np.ndarray
    active: int
    capacity: tuple[int, int]
    trace: tuple[np.ndarray, ...] = ()
    charged: tuple[int, ...] = ()
    locs: tuple[Any, ...] = ()


# every profiled launch of the process also hands its clocks to these (npuemu.cost.record_profiles)
TIMES_LISTENERS: list[Callable[[LaunchTimes], None]] = []


def launch(binary: KernelBinary, block_dim: int, values: Mapping[str, Any], *, debug: bool = False,
           stream: Stream | None = None, wait: bool = True, timeout: float | None = None,
           max_steps: int | None = None, on_times: Callable[[LaunchTimes], None] | None = None) -> None:
    """Run ``binary`` on ``block_dim`` blocks with the arguments ``values`` (by parameter name).

    ``debug`` runs the generated code in CPython instead of the machine code.
    With ``stream`` the launch is queued behind the stream's earlier work (the
    arguments are taken now: scalars and struct fields by value, arrays by
    reference); with ``wait`` the stream is then synchronised, as pyasc's
    launcher does after every launch, otherwise the kernel runs when the
    stream is next synchronised.  ``timeout`` (seconds, from when the launch
    starts running) and ``max_steps`` (loop iterations per core) stop a launch
    that does not finish with a ``KernelTimeoutError`` naming each core's line
    (runtime/watchdog.py); Ctrl-C stops it with ``KeyboardInterrupt``.  A binary built with
    ``profile=True`` hands its cores' clocks to ``on_times`` once the launch has run.
    """
    recorder = _RECORDER.get()
    if recorder is not None:        # inside a recording scope (a SuperKernel's): taken, not run
        recorder(binary, block_dim, values, debug)
        return
    try:
        regions = [region_for(name, values[name]) for name in binary.facts.gm_params]
        scalars = _scalar_args(binary, values)
    except errors.LaunchError as exc:
        raise errors.LaunchError(f"kernel '{binary.name}': {exc}") from None
    check_placement(binary.name, binary.kernel_type, block_dim, binary.platform)
    fn = binary.python() if debug else binary.native()
    work = _Launch(binary, block_dim, regions, scalars, fn, debug, timeout, max_steps, on_times)
    if stream is None:
        work.run()
    elif isinstance(stream, Stream):
        stream.enqueue(work.run, f"kernel '{binary.name}' on {block_dim} blocks")
        if wait:
            stream.synchronize()
    else:
        raise errors.LaunchError(f"kernel '{binary.name}': the stream of kernel[core_num, stream] must be an "
                                 f"npuemu.Stream (or None), got {type(stream).__name__}")


def launch_binary(binary: KernelBinary, block_dim: int, *args: Any, debug: bool = False,
                  stream: Stream | None = None, wait: bool = True, timeout: float | None = None,
                  max_steps: int | None = None, on_times: Callable[[LaunchTimes], None] | None = None,
                  **kwargs: Any) -> None:
    """Launch a binary (e.g. one from :func:`~npuemu.binary.kernel_binary.load_binary`) with the kernel's
    arguments, which must match the specialisation it was built for; options as :func:`launch`."""
    values = bind_arguments(binary, block_dim, args, kwargs)
    launch(binary, block_dim, values, debug=debug, stream=stream, wait=wait, timeout=timeout,
           max_steps=max_steps, on_times=on_times)


@dataclass
class _Launch:
    """A launch whose arguments are fixed: :meth:`run` runs it."""

    binary: KernelBinary
    block_dim: int
    regions: list[Region]
    scalars: list[Any]
    fn: Callable[..., Any]
    debug: bool
    timeout: float | None = None
    max_steps: int | None = None
    on_times: Callable[[LaunchTimes], None] | None = None

    def run(self) -> None:
        try:
            self._run()
        except errors.NpuemuError as exc:
            raise without_frames(exc)

    def _run(self) -> None:
        binary, block_dim, scalars = self.binary, self.block_dim, self.scalars
        facts = binary.facts
        cores = core_plan(binary.kernel_type, block_dim)
        regions = _padded(self.regions, Region("npuemu system workspace", _system_region(binary, cores), dt.uint8))
        gm = tuple(r.bytes for r in regions)
        full = binary.check == "full"
        # race checker (isa/hb.py): cores that wait for each other check each other's GM accesses as they run
        gsh = shadows.new_gm_shadows([r.bytes.size for r in regions], len(cores), facts.blocking,
                                [not r.initialized for r in regions]) if full else tuple(_DUMMY for _ in regions)
        # the DCache model holds every core's lines; a kernel without scalar GM accesses needs none
        dc = np.zeros(dcache.dc_bytes(len(cores) if facts.dcache else 0, binary.platform), np.uint8)
        states = []
        scratch = cube_scratch_bytes(binary.platform) if facts.blas else 0
        # plain cores take (and fill) their memories as they start, on their own thread
        for slot, (st, lm) in enumerate(new_core_states(cores, binary.platform, scratch, memory=facts.blocking)):
            if binary.profile:
                st = _with_cost_words(st)
            st[S.CORE_SLOT] = slot
            st[S.CHECK_FULL] = full
            log = np.zeros(LOG_WORDS, np.int64) if facts.uses_log else _DUMMY
            sh = shadows.new_core_shadow(slot, len(cores), int(st[S.SCRATCH_BASE])) if full else _DUMMY
            states.append((st, lm, log, sh))
        if binary.profile:
            capacity, active = _cost_cores(binary, cores)
            for st, *_ in states:
                st[S.COST_CORES] = active
        ctx = FaultContext(binary.name, regions, binary.locs, cores, str(binary.module.path), binary.source)
        watchdog = Watchdog([s[0] for s in states], self.timeout, self.max_steps)
        try:
            try:
                with watchdog:
                    _schedule(self.fn, binary, cores, states, (gm, gsh, dc), scalars, ctx, self.debug,
                              watchdog)
            except Exception:
                # a fault is raised once every core has stopped (or, cooperative, will never run again)
                _recycle(states, binary.check)
                raise
            _recycle(states, binary.check)
            warn_partial_copies(binary.name, cores, [s[0] for s in states], binary.locs)
            if full:     # cores that never synchronise: compare their GM accesses now
                shadows.check_launch(gsh, [ctx.region(i) for i in range(len(regions))], binary.locs,
                                     [c.label for c in cores], binary.name,
                                     buffers=[ctx.region_name(i) for i in range(len(regions))])
                warn_unfreed(binary.name, cores, [s[0] for s in states], binary.locs)
            if binary.profile and (self.on_times is not None or TIMES_LISTENERS):
                words = np.stack([s[0][S.COST_ISSUE:S.COST_EVENT] for s in states])
                charged = tuple(int(s[0][S.TRACE_N]) for s in states)
                trace = tuple(s[0][S.TRACE:S.TRACE + min(n, S.TRACE_EVENTS) * S.TRACE_WORDS].reshape(-1, S.TRACE_WORDS)
                              .copy() for s, n in zip(states, charged))
                times = LaunchTimes(binary.name, binary.platform, tuple(c.label for c in cores),
                                    tuple(c.core_type for c in cores), words, active, capacity, trace, charged,
                                    tuple(binary.locs))
                for listener in ([self.on_times] if self.on_times is not None else []) + TIMES_LISTENERS:
                    listener(times)
        finally:
            for r in regions:
                r.finish()
            if facts.uses_log:
                print_launch_logs(binary, cores, states, block_dim)
            recycle_core_states([s[0] for s in states])


_NO_BYTES = np.zeros(0, np.uint8)


def _with_cost_words(st: np.ndarray) -> np.ndarray:
    """A core's state with the cost model's words past ``STATE_SIZE`` (zero), for a profiled binary."""
    big = np.zeros(S.PROFILE_STATE_SIZE, np.int64)
    big[:S.STATE_SIZE] = st
    recycle_core_states([st])
    return big


def _cost_cores(binary: KernelBinary, cores: list[CoreSpec]) -> tuple[tuple[int, int], int]:
    """(cores of each type that run at once, cores running at once): the latter share the HBM."""
    p = binary.platform
    capacity = (max(1, p.aiv_count), max(1, p.aic_count))
    n_aic = sum(1 for c in cores if c.core_type)
    active = min(len(cores) - n_aic, capacity[0]) + min(n_aic, capacity[1])
    return capacity, max(1, active)


def _padded(regions: list[Region], system: Region) -> list[Region]:
    """The launch's regions, padded with empty ones to 8, 16, 32, ... and npuemu's system region last.

    The region tuple is an argument of the GM instructions (the DCache may
    write back a line of any region), and every distinct tuple length is
    another compiled specialisation of each of them: padding keeps that to
    one length for almost every kernel.
    """
    size = region_slots(len(regions))
    pad = [Region("(unused)", _NO_BYTES, dt.uint8) for _ in range(size - len(regions) - 1)]
    return [*regions, *pad, system]


def _system_region(binary: KernelBinary, cores: list[CoreSpec]) -> np.ndarray:
    """npuemu's GM region; a kernel with cross-core primitives finds the launch's core layout in it."""
    if not binary.facts.cross_core:
        return np.zeros(SYSTEM_REGION_BYTES, np.uint8)
    sysmem = np.zeros(max(SYSTEM_REGION_BYTES, cross_core.system_bytes(len(cores))), np.uint8)
    cross_core.init_system(sysmem.view(np.int64), *type_layout(binary.kernel_type, cores))
    return sysmem


def _schedule(fn: Any, binary: KernelBinary, cores: list[CoreSpec], states: list[tuple[np.ndarray, ...]],
              shared: tuple[Any, ...], scalars: list[Any], ctx: FaultContext, debug: bool,
              watchdog: Watchdog) -> None:
    """Run every core to completion (see npuemu/runtime/scheduler.py)."""

    def on_fault(exc: BaseException, slot: int) -> None:
        raise_fault(exc, cores[slot], ctx)

    def on_stop(core_states: list[CoreState]) -> None:
        raise stop_error(watchdog, ctx, core_states)

    # BLAS at one thread for every launch that multiplies, however its cores run (docs/cube.md)
    blas = single_threaded_blas() if binary.facts.blas else contextlib.nullcontext()
    if not binary.facts.blocking:
        # no core ever waits for another: each runs start to finish in one call, with memories it takes
        # when it starts and gives back when it ends
        gens = [scheduler.PlainCore(fn, partial(_start_plain, states, slot, shared, scalars),
                                    partial(_finish_plain, states, slot, binary.check)) for slot in range(len(states))]
        # the race checker keeps each core's state apart and compares cores after the launch; the
        # DCache checks read other cores' caches as they go, so those kernels run one core at a time
        parallel = not (debug or (binary.check == "full" and binary.facts.dcache))
        with blas:
            scheduler.run_to_completion(gens, parallel, _thread_pool, on_fault, watchdog, on_stop)
        return
    # cores that wait for each other run one at a time: they share the cross-core state
    words = shared[0][-1].view(np.int64)
    locs = binary.locs
    plan = residency(binary.kernel_type, cores[0].block_num, binary.platform)

    def view(finished: list[bool], waiting_at: dict[int, int], not_started: list[int]) -> scheduler.LaunchView:
        return scheduler.LaunchView(binary.name, cores, [s[0] for s in states], words, locs,
                                    plan, binary.platform.name, finished, waiting_at, not_started)

    with blas:
        scheduler.run_cooperative([fn(*_core_args(s, shared, scalars)) for s in states], plan, words, on_fault,
                                  view, watchdog, on_stop)
    if binary.facts.cross_core and binary.check != "off":
        err = scheduler.unfinished_flags(binary.name, cores, words, locs)
        if err is not None:
            raise err


def _start_plain(states: list[tuple[Any, ...]], slot: int, shared: tuple[Any, ...],
                 scalars: list[Any]) -> tuple[Any, ...]:
    st, _, log, sh = states[slot]
    states[slot] = (st, local_memory_of(st), log, sh)
    return _core_args(states[slot], shared, scalars)


def _finish_plain(states: list[tuple[Any, ...]], slot: int, check: str) -> None:
    st, lm, log, sh = states[slot]
    states[slot] = (st, None, log, sh)
    recycle_local_memory(lm, written_bytes(st, check))


def _recycle(states: list[tuple[Any, ...]], check: str) -> None:
    """Give back the local memories the launch's cores still hold (every core has stopped)."""
    for st, lm, *_ in states:
        recycle_local_memory(lm, written_bytes(st, check))


def _core_args(state: tuple[np.ndarray, ...], shared: tuple[Any, ...], scalars: list[Any]) -> tuple[Any, ...]:
    """Arguments of one kernel instance, in the order of ``codegen.abi.CORE_ARRAYS``."""
    st, lm, log, sh = state
    gm, gsh, dc = shared
    return (st, lm, gm, log, sh, gsh, dc, *scalars)


_THREADS: ThreadPoolExecutor | None = None


def _thread_pool() -> ThreadPoolExecutor:
    global _THREADS
    if _THREADS is None:
        _THREADS = ThreadPoolExecutor(max_workers=thread_count(), thread_name_prefix="npuemu-core")
    return _THREADS


def thread_count() -> int:
    """Host threads that run emulated cores (``NPUEMU_THREADS``, default: the CPUs of this process)."""
    env = os.environ.get("NPUEMU_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)

scalar_args = _scalar_args      # the scalar parameters of a launch, in the binary's order (SuperKernels use it)
