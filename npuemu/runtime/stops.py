"""Where each core was when a launch was stopped, and the error that says so.

A launch stopped by Ctrl-C raises ``KeyboardInterrupt``; one stopped by its
time budget (``timeout=``), or with a core past its step budget
(``max_steps=``), raises :class:`~npuemu.errors.KernelTimeoutError`.  Both
list every core: the loop it was stopped in and the iterations it had run,
the cross-core wait it waited at, or that it finished or never started
(runtime/watchdog.py stops the cores).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import errors
from ..isa import runaway as R
from ..isa.fault import Fault
from .cores import core_ranges
from .faults import FaultContext
from .watchdog import Watchdog

FINISHED = "finished"
NOT_STARTED = "has not started"
STOPPED = "stopped"
OUT_OF_STEPS = "out of steps"
WAITING = "waits"
FAULTED = "faulted"


@dataclass(frozen=True)
class CoreState:
    """What one core was doing when its launch ended."""

    what: str             # one of the constants above
    loc: int = -1         # location id of its loop, wait or fault; -1: none
    steps: int = 0        # loop iterations it had run (stopped, out of steps)


NOT_RUN = CoreState(NOT_STARTED)


def ended(outcome: BaseException | CoreState | None) -> CoreState:
    """A core's state from what running it returned: None (it finished), the exception it raised, or
    :data:`NOT_RUN`."""
    if outcome is None:
        return CoreState(FINISHED)
    if isinstance(outcome, CoreState):
        return outcome
    if isinstance(outcome, Fault) and len(outcome.args) >= 4:
        code, loc, _, steps = (int(a) for a in outcome.args[:4])
        if code == R.F_STOPPED:
            return CoreState(STOPPED, loc, steps)
        if code == R.F_STEPS:
            return CoreState(OUT_OF_STEPS, loc, steps - 1)
        return CoreState(FAULTED, loc)
    return CoreState(FAULTED)


def stop_error(watchdog: Watchdog, ctx: FaultContext, states: Sequence[CoreState]) -> BaseException:
    """``KeyboardInterrupt`` after Ctrl-C, else the ``KernelTimeoutError`` of a launch past a budget."""
    where = "where each core was:\n" + "\n".join(_lines(ctx, states))
    if watchdog.interrupted:
        return KeyboardInterrupt(f"kernel '{ctx.kernel}' stopped by Ctrl-C; {where}")
    out = [i for i, s in enumerate(states) if s.what == OUT_OF_STEPS]
    if out and watchdog.reason != R.STOP_TIMEOUT:
        first = out[0]
        head = (f"{ctx.core_label(first)} ran more than max_steps={watchdog.max_steps} loop iterations "
                f"and was stopped; ")
        rule = "step budget"
    else:
        first = next((i for i, s in enumerate(states) if s.what == STOPPED),
                     next((i for i, s in enumerate(states) if s.what != FINISHED), 0))
        budget = f" (timeout={watchdog.timeout:g} s)" if watchdog.timeout is not None else ""
        head = f"the launch ran longer than its time budget{budget} and was stopped; "
        rule = "timeout"
    loc_id = states[first].loc
    err = errors.KernelTimeoutError(head + where, kernel=ctx.kernel, core=ctx.core_label(first),
                                    loc=ctx.locs[loc_id] if 0 <= loc_id < len(ctx.locs) else None, rule=rule)
    err.cores = [(ctx.core_label(i), ctx.locs[s.loc] if 0 <= s.loc < len(ctx.locs) else None, _what(s))
                 for i, s in enumerate(states)]
    return err


def _what(s: CoreState, alone: bool = True) -> str:
    """What the core was doing; ``alone``: with its own iteration count (not one of a group)."""
    if s.what == STOPPED:
        return f"stopped in a loop after {s.steps} iterations" if alone else "stopped in a loop"
    if s.what == OUT_OF_STEPS:
        return f"ran out of its {s.steps} loop iterations" if alone else "ran out of their loop iterations"
    return s.what


def _lines(ctx: FaultContext, states: Sequence[CoreState]) -> list[str]:
    """``  AIV 0 at k.py:9 `while i < n:`: stopped in a loop ...``; cores in the same state share a line."""
    groups: dict[tuple[int, str], list[int]] = {}
    for i, s in enumerate(states):
        groups.setdefault((s.loc, s.what), []).append(i)
    out = []
    for (loc, _), slots in groups.items():
        at = f" at {ctx.source(loc)}:" if loc >= 0 else ""
        what = _what(states[slots[0]], len(slots) == 1)
        if len(slots) > 1 and what.startswith("has "):
            what = "have " + what[4:]
        out.append(f"  {core_ranges(ctx.cores, slots)}{at} {what}")
    return out
