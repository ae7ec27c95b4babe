"""Running a launch's cores: in parallel, or cooperatively with deadlock detection.

Every core is one instance of the generated kernel.  A kernel that never
waits for another core is a plain function: each core runs start to finish
in one step, on a thread pool when the launch allows it.  A kernel with
cross-core waits is a generator that yields ``loc + 1`` whenever a wait
cannot complete yet (``Lowerer.wait_until``) and ``0`` when the core is done.
:func:`run_cooperative` resumes the live cores round-robin, one at a time
(they share the cross-core state in npuemu's system GM region):

* **Residency.**  At most as many blocks as the platform has physical cores
  (AI Cores for the mix types) are resident; a further block starts when a
  resident one has finished, as the hardware runs a launch in waves.
* **Deadlock.**  Cross-core state changes only through the cross-core
  instructions, and each of them bumps the region's progress word; a core
  runs kernel code only after it started or passed a wait.  A round in which
  every live core was resumed, none had just started, none finished and the
  word did not move, leaves the state exactly as it was: no core can ever
  proceed.  That is a hang on hardware; here it is a
  :class:`~npuemu.errors.DeadlockError` listing each core, what it waits for
  and the source line.

The order of resumes is fixed (slot order, blocks started in block order), so
a launch behaves the same every time.  A runaway core (a loop that never
ends, a fault elsewhere while it spins) is stopped by the launch's
:class:`~npuemu.runtime.watchdog.Watchdog`, which both loops consult.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .. import errors
from ..isa import cross_core as X
from ..isa import state as S
from ..isa.fault import Fault
from .cores import AIC, AIV, CoreSpec, Residency, core_ranges
from .stops import FINISHED, NOT_RUN, OUT_OF_STEPS, WAITING, CoreState, ended
from .watchdog import Watchdog, is_runaway

# below this much predicted work, cores run on the launching thread alone: waking a pool thread and
# handing it cores costs ~0.3 ms on a quiet machine and several on a busy one
INLINE_SECONDS = 0.002

OnFault = Callable[[BaseException, int], None]     # (exception, core slot) -> raises
OnStop = Callable[[list[CoreState]], None]         # (each core's state) -> raises


class PlainCore:
    """A non-blocking kernel instance behind the generator protocol: one step takes the core's arguments
    (``start()``: its memories are taken then), runs the kernel to its end and calls ``finish()``."""

    __slots__ = ("fn", "start", "finish")

    def __init__(self, fn: Any, start: Callable[[], tuple[Any, ...]], finish: Callable[[], None] = lambda: None):
        self.fn = fn
        self.start = start
        self.finish = finish

    def __next__(self) -> Any:
        args = self.start()
        try:
            self.fn(*args)
        finally:
            self.finish()
        raise StopIteration


# --------------------------------------------------------------------------- non-blocking kernels


def run_to_completion(gens: Sequence[Any], parallel: bool, pool: Callable[[], ThreadPoolExecutor],
                      on_fault: OnFault, watchdog: Watchdog | None = None, on_stop: OnStop | None = None) -> None:
    """Run cores that never wait for each other; report the fault of the lowest-numbered faulting core.

    Every core runs, as on hardware, even when one faults (for the
    watchdog's grace; then the others are stopped).  Compiled cores release
    the GIL, so with ``parallel`` they run on the thread pool and on this
    thread, which takes one thread's share; picking the lowest core keeps
    the error independent of thread timing.  The first core runs on this
    thread, timed: if the others would take less than
    :data:`INLINE_SECONDS` at its pace, they run here too, as handing cores
    to the pool and waking its threads costs more than such cores' work.
    A launch the watchdog stopped, or with a core past its step budget,
    ends with ``on_stop(states)`` instead (runtime/stops.py).
    """
    watchdog = watchdog if watchdog is not None else Watchdog(())
    cores = list(range(len(gens)))
    if not cores:
        return
    rest = _Handoff(gens, cores[1:], pool, watchdog)
    # the first core runs here, timed; one still running after INLINE_SECONDS hands the others to the
    # pool from its poll, so that they run beside it (a first core that spins cannot hide their faults)
    watchdog.arm(on_thread=True, slots=cores[:1])
    start = time.monotonic()
    if parallel and rest.slots:
        watchdog.on_slow, watchdog.slow_after = (lambda: rest.submit(keep_share=False)), start + INLINE_SECONDS
    outcomes: dict[int, BaseException | CoreState | None] = {0: _finish(gens[0], watchdog)}
    watchdog.on_slow = None
    if not rest.submitted:
        # the others at the first one's pace: here if that is quick, else the pool and a share here
        quick = (time.monotonic() - start) * len(rest.slots) <= INLINE_SECONDS
        mine = rest.slots if not parallel or quick else rest.submit(keep_share=True)
        watchdog.arm(on_thread=True, slots=mine)
        outcomes.update(zip(mine, _finish_all(gens, mine, watchdog)))
    outcomes.update(rest.results())
    faults = [(i, exc) for i, exc in outcomes.items() if isinstance(exc, BaseException)]
    _settle(faults, [ended(outcomes[i]) for i in cores], watchdog, on_fault, on_stop)


class _Handoff:
    """The cores of a launch after the first, handed to the thread pool when it is worth it."""

    def __init__(self, gens: Sequence[Any], slots: list[int], pool: Callable[[], ThreadPoolExecutor],
                 watchdog: Watchdog):
        self.gens, self.slots, self.pool, self.watchdog = gens, slots, pool, watchdog
        self.submitted: list[tuple[list[int], Any]] = []

    def submit(self, keep_share: bool) -> list[int]:
        """Give the cores to the pool's threads; with ``keep_share``, one share stays for this thread
        (returned: its slots)."""
        executor = self.pool()
        n = min(executor._max_workers + int(keep_share), len(self.slots))  # noqa: SLF001 - the pool's size
        chunks = [self.slots[k::n] for k in range(n)]
        mine, theirs = (chunks[0], chunks[1:]) if keep_share else ([], chunks)
        self.watchdog.arm(on_thread=False, slots=[i for chunk in theirs for i in chunk])
        self.submitted = [(chunk, executor.submit(_finish_all, self.gens, chunk, self.watchdog))
                          for chunk in theirs]
        return mine

    def results(self) -> list[tuple[int, BaseException | CoreState | None]]:
        """Each submitted core's outcome, once all have ended (the watchdog looks at the clock meanwhile)."""
        self.watchdog.wait([future for _, future in self.submitted])
        return [pair for chunk, future in self.submitted for pair in zip(chunk, future.result())]


def _finish_all(gens: Sequence[Any], slots: list[int], watchdog: Watchdog) -> list[BaseException | CoreState | None]:
    return [_finish(gens[i], watchdog) for i in slots]


def _finish(gen: Any, watchdog: Watchdog) -> BaseException | CoreState | None:
    """Run one core to its end; the exception it raised, if any (``NOT_RUN``: the launch was stopped first)."""
    if watchdog.stopped:
        return NOT_RUN
    try:
        while next(gen):
            pass
    except StopIteration:
        pass
    except Exception as exc:  # noqa: BLE001 - classified by the launcher
        if isinstance(exc, Fault):
            # a fault's traceback is no use (the launcher names the kernel line) and would tie the core's
            # arrays into a reference cycle with the thread pool's future that returns it
            exc.__traceback__ = None
        watchdog.core_faulted(exc)
        return exc
    return None


def _settle(faults: list[tuple[int, BaseException]], states: list[CoreState], watchdog: Watchdog,
            on_fault: OnFault, on_stop: OnStop | None) -> None:
    """Raise what the launch ended with: Ctrl-C, else the lowest core's own fault, else a budget."""
    own = sorted((f for f in faults if not is_runaway(f[1])), key=lambda f: f[0])
    unfinished = any(s.what != FINISHED for s in states)
    budget = any(s.what == OUT_OF_STEPS for s in states) or (watchdog.stopped and unfinished)
    if watchdog.interrupted or (budget and not own):
        if on_stop is None:
            raise RuntimeError("the launch was stopped")
        on_stop(states)
    if own:
        on_fault(own[0][1], own[0][0])
        raise own[0][1]


# --------------------------------------------------------------------------- cooperative scheduling


@dataclass
class LaunchView:
    """What a deadlock report reads: the cores, their state and the shared cross-core state."""

    kernel: str
    cores: list[CoreSpec]
    states: list[np.ndarray]          # each core's st
    words: np.ndarray                 # the system region as int64
    locs: Sequence[Any]               # SourceLoc per location id
    residency: Residency
    platform: str
    finished: list[bool]
    waiting_at: dict[int, int]        # slot -> location id of the wait
    not_started: list[int]


def run_cooperative(gens: Sequence[Any], residency: Residency, words: np.ndarray, on_fault: OnFault,
                    view: Callable[..., LaunchView], watchdog: Watchdog | None = None,
                    on_stop: OnStop | None = None,
                    explain: Callable[[LaunchView, list[int]], errors.DeadlockError] | None = None) -> list[bool]:
    """Resume cores round-robin until all have finished; raise DeadlockError when none can proceed.

    ``words`` is the system region as int64 (its PROGRESS word is bumped by
    every cross-core state change).  ``view(finished, waiting_at,
    not_started)`` builds the deadlock report's view of the launch.  The
    ``watchdog`` is consulted before every resume; a launch it stopped ends
    with ``on_stop(states)``, as in :func:`run_to_completion`.  ``explain(view, live)`` builds the
    deadlock error (default :func:`deadlock_error`; a SuperKernel names its sub-kernels).
    """
    watchdog = watchdog if watchdog is not None else Watchdog(())
    watchdog.arm(on_thread=True)
    ncores = len(gens)
    unit_of = [0] * ncores
    for u, slots in enumerate(residency.units):
        for s in slots:
            unit_of[s] = u
    left = [len(slots) for slots in residency.units]      # cores of each block still running
    finished = [False] * ncores
    yielded = [0] * ncores          # each core's last request: 1 + location of its wait
    next_unit = 0
    resident = 0
    live: list[int] = []
    fresh: set[int] = set()         # started, not yet resumed: their first steps run new code

    def start_blocks() -> None:
        nonlocal next_unit, resident
        while next_unit < len(residency.units) and resident < residency.capacity:
            live.extend(residency.units[next_unit])
            fresh.update(residency.units[next_unit])
            next_unit += 1
            resident += 1

    start_blocks()
    while live:
        watchdog.tick()
        mark = words[X.PROGRESS]
        moved = bool(fresh)
        fresh.clear()
        still: list[int] = []
        faults: list[tuple[int, BaseException]] = []
        for i in live:
            if watchdog.stopped:
                still.append(i)
                continue
            watchdog.resumed(i)
            try:
                request = next(gens[i])
            except StopIteration:
                request = 0
            except Exception as exc:  # noqa: BLE001 - classified by the launcher
                faults.append((i, exc))
                watchdog.core_faulted(exc)
                continue
            finally:
                watchdog.suspended(i)
            if request:
                yielded[i] = request
                still.append(i)
                continue
            finished[i] = moved = True
            u = unit_of[i]
            left[u] -= 1
            if left[u] == 0:
                resident -= 1
        if faults or watchdog.stopped:
            # the round's other cores have run on; report the lowest-numbered fault (or the stop)
            failed = dict(faults)
            states = [ended(failed[i]) if i in failed else CoreState(FINISHED) if finished[i] else
                      CoreState(WAITING, yielded[i] - 1) if yielded[i] else NOT_RUN for i in range(ncores)]
            _settle(faults, states, watchdog, on_fault, on_stop)
        live = still
        start_blocks()
        if live and not moved and words[X.PROGRESS] == mark:
            not_started = [s for u in residency.units[next_unit:] for s in u]
            report = view(finished, {i: yielded[i] - 1 for i in live}, not_started)
            raise (explain or deadlock_error)(report, sorted(live))
    return finished


# --------------------------------------------------------------------------- deadlock report


def deadlock_error(v: LaunchView, live: list[int]) -> errors.DeadlockError:
    """The error for a launch in which the cores ``live`` wait and none can proceed."""
    groups: dict[tuple[int, str], list[int]] = {}
    for i in live:
        groups.setdefault((v.waiting_at[i], _reason(v, i)), []).append(i)
    lines = [f"  {_cores(v, slots)} at {_where(v, loc)}: {reason}" for (loc, reason), slots in groups.items()]
    if v.not_started:
        lines.append(f"  {_cores(v, v.not_started)} {_not_started(v)}")
    first = live[0]
    loc_id = v.waiting_at[first]
    detail = ("no core can make progress (on hardware the kernel hangs until the task times out); "
              "waiting cores:\n" + "\n".join(lines))
    err = errors.DeadlockError(detail, kernel=v.kernel, core=v.cores[first].label,
                               loc=v.locs[loc_id] if 0 <= loc_id < len(v.locs) else None)
    err.waits = [(v.cores[i].label, v.locs[v.waiting_at[i]], _reason(v, i)) for i in live]
    return err


def wait_reason(v: LaunchView, slot: int) -> str:
    """What the core at ``slot`` waits for, from its ``st`` wait words (for deadlock reports)."""
    return _reason(v, slot)


def _where(v: LaunchView, loc_id: int) -> str:
    if 0 <= loc_id < len(v.locs):
        loc = v.locs[loc_id]
        return f"{loc.short()} `{loc.line_text.strip()}`"
    return f"location {loc_id}"


def _cores(v: LaunchView, slots: Sequence[int]) -> str:
    """``AIV 0-6, AIC 2``: core labels with runs of consecutive blocks of one type collapsed."""
    return core_ranges(v.cores, slots)


def _not_started(v: LaunchView) -> str:
    r = v.residency
    return (f"{'has' if len(v.not_started) == 1 else 'have'} not started: all {r.capacity} {r.unit_name}s of "
            f"{v.platform} are held by blocks that wait, and a block starts only when one finishes "
            f"({len(r.units)} blocks > {r.capacity} {r.unit_name}s: the launch runs in waves)")


def _status(v: LaunchView, slot: int, finished: str) -> str:
    if v.finished[slot]:
        return finished
    if slot in v.not_started:
        return f"has not started (no free {v.residency.unit_name})"
    if slot in v.waiting_at:
        return f"waits at {_where(v, v.waiting_at[slot])}"
    return "is running"


def _missing(v: LaunchView, slots: Sequence[int], finished: str) -> str:
    """``AIV 5 finished without ...; AIV 6 waits at ...``: cores grouped by what they do instead."""
    by: dict[str, list[int]] = {}
    for s in slots:
        by.setdefault(_status(v, s, finished), []).append(s)
    return "; ".join(f"{_cores(v, group)} {_plural(status) if len(group) > 1 else status}"
                     for status, group in by.items())


def _plural(status: str) -> str:
    for one, many in (("waits ", "wait "), ("has ", "have ")):
        if status.startswith(one):
            return many + status[len(one):]
    return status


def _of_type(v: LaunchView, core_type: int) -> list[int]:
    return [i for i, c in enumerate(v.cores) if c.core_type == core_type]


def _ai_core_aivs(v: LaunchView, aic_block: int) -> list[int]:
    ratio = int(v.words[X.RATIO])
    base = int(v.words[X.AIV_BASE])
    return [base + aic_block * ratio + k for k in range(ratio)]


def _word(v: LaunchView, slot: int, table: int, flag: int) -> int:
    return int(v.words[X.CORES + slot * X.CORE_WORDS + table + flag])


def _reason(v: LaunchView, slot: int) -> str:
    st = v.states[slot]
    kind, a, b, c, d = (int(st[k]) for k in (S.WAIT_KIND, S.WAIT_A, S.WAIT_B, S.WAIT_C, S.WAIT_D))
    if kind == X.W_FLAG:
        return _flag_reason(v, slot, a, b)
    if kind == X.W_SYNC_ALL:
        return _sync_all_reason(v, slot, bool(b))
    if kind == X.W_SOFT_SYNC:
        return _soft_sync_reason(v, slot, a, b, c, d)
    if kind in (X.W_IB_SET, X.W_IB_WAIT):
        return _ib_reason(v, kind, a, b, c)
    if kind == X.W_PRE_BLOCK:
        return _pre_block_reason(v, slot, a, b, c)
    return "waits"


def _flag_reason(v: LaunchView, slot: int, flag: int, mode: int) -> str:
    head = f"cross_core_wait_flag(flag {flag}, mode {mode}): its counter is 0"
    spec = v.cores[slot]
    if mode == 0:
        group = _of_type(v, spec.core_type)
        table, who = X.PEND0, f"{X.CORE_NAMES[spec.core_type]} cores"
    elif mode == 1:
        if spec.core_type != AIV:
            return head + ", and no core can set it"
        group = _ai_core_aivs(v, spec.block_idx // int(v.words[X.RATIO]))
        table, who = X.PEND1, "AIVs of its AI Core"
    elif spec.core_type == AIC:
        group = _ai_core_aivs(v, spec.block_idx)
        table, who = X.PEND2, "AIVs of its AI Core"
    else:
        aic = int(v.words[X.AIC_BASE]) + spec.block_idx // int(v.words[X.RATIO])
        return (f"{head}, and no core can set it: the AIC of its AI Core "
                f"({_missing(v, [aic], 'has finished')}) is its only mode-2 setter")
    done = [s for s in group if _word(v, s, table, flag) > 0]
    others = [s for s in group if s not in done]
    if not done:
        return f"{head}, and no core can set it: none of the {len(group)} {who} has set it " \
               f"({_missing(v, others, 'has finished')})"
    return (f"{head}: {len(done)} of {len(group)} {who} {'has' if len(done) == 1 else 'have'} set it "
            f"(mode {mode} completes when all have); "
            f"{_missing(v, others, 'finished without setting it')}")


def _sync_all_reason(v: LaunchView, slot: int, aiv_only: bool) -> str:
    if aiv_only:
        core_type = v.cores[slot].core_type
        group = _of_type(v, core_type)
        who = f"{X.CORE_NAMES[core_type]} cores"
    else:
        group = list(range(len(v.cores)))
        who = "cores"
    arrived = [s for s in group if s in v.waiting_at and int(v.states[s][S.WAIT_KIND]) == X.W_SYNC_ALL]
    others = [s for s in group if s not in arrived]
    text = f"sync_all: {len(arrived)} of {len(group)} {who} arrived"
    return text + (f"; {_missing(v, others, 'finished without reaching it')}" if others else "")


def _soft_sync_reason(v: LaunchView, slot: int, need: int, have: int, slots: int, before: int) -> str:
    text = f"sync_all (software, GM workspace): waits until the {slots} slots sum to {need}; they sum to {have}"
    mine = int(v.states[slot][S.SOFT_DONE])
    aivs = [s for s in _of_type(v, AIV) if v.cores[s].block_idx < slots]
    others = [s for s in aivs if not (s in v.waiting_at and int(v.states[s][S.WAIT_KIND]) == X.W_SOFT_SYNC)]
    passed = [s for s in others if v.finished[s] and int(v.states[s][S.SOFT_DONE]) > mine]
    missing = [s for s in others if s not in passed]
    if passed:
        text += f"; {_cores(v, passed)} passed it and finished"
    if missing:
        text += f"; {_missing(v, missing, 'finished without reaching it')}"
    if before != mine:
        text += (f"; this core's slot held {before} when it arrived, where a workspace zeroed before the launch "
                 f"holds {mine} (its earlier soft syncs): the GM workspace was not zeroed")
    return text


def _ib_reason(v: LaunchView, kind: int, block: int, event: int, value: int) -> str:
    if kind == X.W_IB_SET:
        return (f"ib_set(block_idx={block}, event_id={event}): waits until its GM slot is 0; it holds {value} "
                f"(an earlier ib_set no ib_wait consumed, or a workspace not zeroed)")
    aivs = [s for s in _of_type(v, AIV) if v.cores[s].block_idx == block]
    setter = f"; {_missing(v, aivs, 'has finished')}" if aivs else ""
    return f"ib_wait(block_idx={block}, event_id={event}): waits until its GM slot is 1; it holds {value}{setter}"


def _pre_block_reason(v: LaunchView, slot: int, index: int, expect: int, found: int) -> str:
    me = v.cores[slot].block_idx
    if index < me:
        prev = [s for s in _of_type(v, AIV) if v.cores[s].block_idx == index]
        status = _missing(v, prev, "finished without notify_next_block")
        return (f"wait_pre_block: waits for AIV {index} to notify_next_block (its slot holds {found}, "
                f"{expect} is needed); {status}")
    last = [s for s in _of_type(v, AIV) if v.cores[s].block_idx == v.cores[slot].block_num - 1]
    return (f"wait_pre_block: slot {index} holds {found} where 0 is expected: the previous round has not "
            f"ended (the last block clears the slots in notify_next_block; {_missing(v, last, 'has finished')}), "
            f"or the GM workspace was not zeroed (init_determine_compute_workspace)")


# --------------------------------------------------------------------------- leftover flags


def unfinished_flags(kernel: str, cores: list[CoreSpec], words: np.ndarray, locs: Sequence[Any]
                     ) -> errors.SyncError | None:
    """The error for cross-core sets left unconsumed when every core has finished, if any.

    A set nobody waited for, or a mode-0/1/2 set the other cores never
    matched, is undefined behaviour on hardware: the count carries into the
    next kernel on those cores.
    """
    def error(slot: int, flag: int, text: str, setter: int) -> errors.SyncError:
        loc_id = _word_at(words, setter, X.SET_LOC, flag) - 1
        err = errors.SyncError(text, kernel=kernel, core=cores[slot].label,
                               loc=locs[loc_id] if 0 <= loc_id < len(locs) else None)
        err.flag, err.loc_id = flag, loc_id         # type: ignore[attr-defined]
        return err

    for slot in range(len(cores)):
        for flag in range(X.N_FLAGS):
            for table, mode in ((X.PEND0, 0), (X.PEND1, 1), (X.PEND2, 2)):
                if _word_at(words, slot, table, flag):
                    return error(slot, flag, f"cross_core_set_flag(flag {flag}, mode {mode}) by this core never "
                                 f"completed: the other cores of mode {mode} never set flag {flag} (undefined "
                                 f"behaviour on hardware: the pending set carries into the next kernel)", slot)
    for slot in range(len(cores)):
        for flag in range(X.N_FLAGS):
            count = _word_at(words, slot, X.CNT, flag)
            if count:
                setter = _setter(cores, words, slot, flag)
                return error(slot, flag, f"the kernel ends with cross-core flag {flag} of this core counting "
                             f"{count}: {'a set' if count == 1 else f'{count} sets'} no cross_core_wait_flag "
                             f"consumed (undefined behaviour on hardware: the count carries into the next "
                             f"kernel on this core)", setter)
    return None


def _word_at(words: np.ndarray, slot: int, table: int, flag: int) -> int:
    return int(words[X.CORES + slot * X.CORE_WORDS + table + flag])


def _setter(cores: list[CoreSpec], words: np.ndarray, slot: int, flag: int) -> int:
    """A core whose last set of ``flag`` can have raised ``slot``'s counter (for the error's source line)."""
    if _word_at(words, slot, X.SET_LOC, flag):
        return slot
    for other in range(len(cores)):
        if _word_at(words, other, X.SET_LOC, flag) and cores[other].core_type != cores[slot].core_type:
            return other
    return slot
