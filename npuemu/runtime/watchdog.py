"""Stopping a launch whose cores do not finish: Ctrl-C, the time budget, a fault on another core.

Every iteration of a kernel loop counts a step and compares the count with
its core's ``st[STEP_LIMIT]`` (isa/runaway.py).  A :class:`Watchdog` owns
those words for one launch:

* :meth:`Watchdog.stop` sets every core's ``st[STOP]`` to the reason and its
  limit to -1: a running core stops at its next loop iteration with a fault
  that names the loop's line, and a core not started yet is not started.
* While the launch runs on the main thread, Ctrl-C (SIGINT) calls
  :meth:`~Watchdog.stop` instead of raising ``KeyboardInterrupt`` wherever
  the thread happens to be; the launch then raises it, naming each core's
  line.  The handler is installed only over Python's default one and is put
  back after the launch (or at once on the first Ctrl-C, so that a second
  one interrupts whatever the first could not).
* Cores on the thread pool hold no GIL; the launching thread waits for them
  in slices (:meth:`~Watchdog.wait`), which lets Python run the handler,
  and checks the deadline between slices.
* Cores on the launching thread (one core, debug mode, cooperative kernels)
  keep that thread busy, in compiled code that never returns to Python;
  their loops call :meth:`~Watchdog.poll` through ``st[POLL]`` every so many
  iterations (aimed at ``POLL_INTERVAL`` seconds of running), where Python
  runs the handler and the watchdog looks at the clock.
* When a core faults, the others get ``FAULT_GRACE`` seconds to finish, as
  every core runs to its end on hardware (and the lowest faulting core is
  reported, whatever the threads' timing); then they are stopped, so a core
  that spins cannot hide the fault.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import signal
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from ..isa import runaway as R
from ..isa import state as S
from ..isa.fault import Fault

INT64_MAX = (1 << 63) - 1
POLL_INTERVAL = 0.02         # seconds a core on the launching thread runs between two polls
FIRST_CHUNK = 256            # iterations before a core's first poll
FAULT_GRACE = 0.5            # seconds the other cores may run on after a fault
WAIT_SLICE = 0.05            # seconds the launching thread sleeps between looks at the clock


def is_runaway(exc: BaseException) -> bool:
    """Whether ``exc`` is a core stopped by its launch or by its step budget (not a fault of its own)."""
    return isinstance(exc, Fault) and bool(exc.args) and exc.args[0] in (R.F_STOPPED, R.F_STEPS)


class Watchdog:
    """The stop words, the budgets and the Ctrl-C handler of one launch (see the module docstring).

    Use it as a context manager around running the cores, after :meth:`arm`.
    """

    def __init__(self, states: Sequence[np.ndarray], timeout: float | None = None,
                 max_steps: int | None = None):
        self.states = states
        self.timeout = timeout
        self.max_steps = min(max_steps, INT64_MAX) if max_steps else INT64_MAX
        self.reason = 0                       # why the cores were stopped (runaway.STOP_*); 0: they were not
        self.interrupted = False              # Ctrl-C was pressed during the launch
        self.deadline: float | None = None
        self.fault_at: float | None = None    # when the first core faulted
        self._previous: Any = None            # the SIGINT handler to put back
        self._handler = self._on_sigint
        self._outer: Watchdog | None = None
        # per core on the launching thread: steps and running time since its last poll, its chunk
        self._chunk: dict[int, int] = {}
        self._steps_at: dict[int, int] = {}
        self._ran: dict[int, float] = {}
        self._since: dict[int, float] = {}
        # called once from a poll at or after ``slow_after`` (monotonic seconds): the launch decided to
        # run its cores on this thread and a core turns out to take long (runtime/scheduler.py)
        self.on_slow: Callable[[], None] | None = None
        self.slow_after = 0.0

    # ------------------------------------------------------------------ setting up

    def arm(self, on_thread: bool, slots: Sequence[int] | None = None) -> None:
        """Write the budgets into the state of every core (or of ``slots``); ``on_thread``: those cores run
        on the launching thread (and so must poll it), not on the thread pool.  Cores armed after the
        launch was stopped are stopped too (a core that has not started yet must not start)."""
        for st in (self.states if slots is None else [self.states[i] for i in slots]):
            st[S.MAX_STEPS] = self.max_steps
            st[S.POLL] = _POLL_ADDRESS if on_thread else 0
            st[S.STOP] = self.reason
            if self.reason:
                st[S.STEP_LIMIT] = -1
            else:
                st[S.STEP_LIMIT] = min(FIRST_CHUNK, self.max_steps) if on_thread else self.max_steps

    def __enter__(self) -> "Watchdog":
        if self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout
        self._outer, _ACTIVE.watchdog = getattr(_ACTIVE, "watchdog", None), self
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: Any) -> None:
        _ACTIVE.watchdog = self._outer
        self._restore_handler()

    def _restore_handler(self) -> None:
        if self._previous is not None:
            if signal.getsignal(signal.SIGINT) == self._handler:
                signal.signal(signal.SIGINT, self._previous)
            self._previous = None

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.interrupted = True
        self.stop(R.STOP_INTERRUPT)
        self._restore_handler()        # a second Ctrl-C raises KeyboardInterrupt wherever it lands

    # ------------------------------------------------------------------ stopping

    @property
    def stopped(self) -> bool:
        return self.reason != 0

    def stop(self, reason: int) -> None:
        """Stop every core at its next loop iteration; cores not started yet will not start."""
        if self.reason:
            return
        self.reason = reason
        for st in self.states:
            st[S.STOP] = reason
        for st in self.states:      # after every stop word: a core that sees -1 finds its reason
            st[S.STEP_LIMIT] = -1

    def core_faulted(self, exc: BaseException) -> None:
        """A core raised ``exc``: unless the launch stopped it, the others' grace starts."""
        if self.fault_at is None and not is_runaway(exc):
            self.fault_at = time.monotonic()

    def tick(self, now: float | None = None) -> None:
        """Stop the cores if the deadline or the grace after a fault has passed."""
        if self.reason:
            return
        now = time.monotonic() if now is None else now
        if self.deadline is not None and now >= self.deadline:
            self.stop(R.STOP_TIMEOUT)
        elif self.fault_at is not None and now >= self.fault_at + FAULT_GRACE:
            self.stop(R.STOP_FAULT)

    def wait(self, futures: list[concurrent.futures.Future]) -> None:
        """Wait for the thread pool's cores, looking at the clock between slices (Ctrl-C is handled meanwhile)."""
        pending = set(futures)
        while pending:
            _, pending = concurrent.futures.wait(pending, timeout=WAIT_SLICE)
            self.tick()

    # ------------------------------------------------------------------ cores on the launching thread

    def resumed(self, slot: int) -> None:
        """A cooperative core is resumed: its running time counts again."""
        self._since[slot] = time.monotonic()

    def suspended(self, slot: int) -> None:
        """A cooperative core yielded: the time until it is resumed is not its own."""
        since = self._since.pop(slot, None)
        if since is not None:
            self._ran[slot] = self._ran.get(slot, 0.0) + time.monotonic() - since

    def poll(self, slot: int, steps: int) -> int:
        """Called by a core past its step limit: look at the clock; the core's next limit.

        The chunk of iterations between polls follows the core's speed, so
        that it polls about every ``POLL_INTERVAL`` seconds it runs.
        """
        now = time.monotonic()
        self.tick(now)
        if self.on_slow is not None and now >= self.slow_after:
            hook, self.on_slow = self.on_slow, None
            hook()
        chunk = self._chunk.get(slot, FIRST_CHUNK)
        if slot in self._steps_at:
            ran = self._ran.get(slot, 0.0) + now - self._since.get(slot, now)
            rate = (steps - self._steps_at[slot]) / max(ran, 1e-6)
            chunk = int(min(chunk * 16, max(1.0, rate * POLL_INTERVAL)))
        self._chunk[slot], self._steps_at[slot], self._ran[slot] = chunk, steps, 0.0
        self._since[slot] = now
        return min(steps + chunk, self.max_steps)


class _Active(threading.local):
    watchdog: Watchdog | None = None


_ACTIVE = _Active()


def _dispatch(slot: int, steps: int) -> int:
    """The C callback cores on the launching thread poll: the thread's current watchdog decides."""
    try:
        watchdog = _ACTIVE.watchdog
        return watchdog.poll(slot, steps) if watchdog is not None else INT64_MAX
    except BaseException:  # noqa: BLE001 - nothing may escape into compiled code; poll again soon
        return steps + FIRST_CHUNK


_POLL_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)(_dispatch)
_POLL_ADDRESS = ctypes.cast(_POLL_CALLBACK, ctypes.c_void_p).value or 0
