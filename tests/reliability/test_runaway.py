"""A launch that does not finish is stopped: by its time or step budget, by Ctrl-C, by another core's fault.

The spinning launches run in a child process (this file run as a script) with
a timeout, so a regression fails here instead of hanging the test run.  The
child loads the kernels from the run's kernel cache; the first run compiles
them, so only what follows the child's "ready" line is timed tightly.
"""
from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc

pytest_plugins = ("pytester",)

N = 8
SPIN_ALL = 0b11


@asc.jit
def spin_or_divide(x: asc.GlobalAddress, n: int, spinners: int, step: int, divisor: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(x, n)
    idx = asc.get_block_idx()
    if (spinners >> idx) & 1:
        i = 0
        while i < n:            # the loop
            i += step
        g.set_value(idx, i * 1.0)
    else:
        g.set_value(idx, (n // divisor) * 1.0)


@asc.jit
def runaway(x: asc.GlobalAddress, n: int, spinners: int, step: int, divisor: int):
    """Blocks in the bit mask ``spinners`` count to ``n`` by ``step`` (forever when it is 0); the others
    divide ``n`` by ``divisor`` (a fault when it is 0).  Each writes its result to ``x[block]``."""
    spin_or_divide(x, n, spinners, step, divisor)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def runaway_sync(x: asc.GlobalAddress, n: int, spinners: int, step: int, divisor: int):
    """:func:`runaway`, then a ``sync_all``: its cores wait for each other, so they run cooperatively."""
    spin_or_divide(x, n, spinners, step, divisor)
    asc.sync_all()


@asc.jit
def running_sums(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    """A correct kernel with loops: ``y[k] = x[0] + ... + x[k]`` of each core's ``n`` elements."""
    base = asc.get_block_idx() * n
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + base, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + base, n)
    total = 0.0
    k = 0
    while k < n and xg.get_value(k) != 12345.0:       # a condition that needs statements of its own
        total += xg.get_value(k)
        yg.set_value(k, total)
        k += 1
    for j in range(n - 1, -1, -1):
        yg.set_value(j, yg.get_value(j) * 1.0)


_LOOPS = [i for i, text in enumerate(Path(__file__).read_text().splitlines(), 1) if "# the loop" in text]
LOOP = {"plain": _LOOPS[0], "cooperative": _LOOPS[0]}      # the spinning loop's line (one helper for both)


# --------------------------------------------------------------------------- the child process


def _outcome(fn: Callable[[], None]) -> dict[str, Any]:
    t = time.monotonic()
    try:
        fn()
        out: dict[str, Any] = {"error": None}
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        out = {"error": type(exc).__name__, "message": str(exc)}
        if isinstance(exc, npuemu.KernelFault):
            out.update(core=exc.core, rule=exc.rule, line=exc.loc.lineno if exc.loc else None,
                       cores=[[c, loc.lineno if loc else None, what] for c, loc, what in getattr(exc, "cores", [])])
    out["seconds"] = time.monotonic() - t
    return out


def _scenarios(debug: bool) -> Iterator[tuple[str, Callable[[], None]]]:
    x = np.zeros(N, np.float32)
    for name, kernel in (("plain", runaway), ("cooperative", runaway_sync)):
        yield f"{name}-timeout", lambda k=kernel: k[2](x, N, 0b01, 0, 1, timeout=0.5, debug=debug)
        yield f"{name}-max-steps", lambda k=kernel: k[2](x, N, SPIN_ALL, 0, 1, max_steps=1000, debug=debug)
        yield f"{name}-fault-while-spinning", lambda k=kernel: k[2](x, N, 0b10, 0, 0, debug=debug)
    if not debug:    # debug mode runs the cores one after another: AIV 1 would start only after AIV 0 ends
        yield "plain-fault-on-a-higher-core", lambda: runaway[2](x, N, 0b01, 0, 0, debug=debug)
    yield "plain-one-core-timeout", lambda: runaway[1](x, N, 0b1, 0, 1, timeout=0.5, debug=debug)


def _child_budgets(debug: bool) -> None:
    x = np.zeros(N, np.float32)
    for kernel in (runaway, runaway_sync):         # compile before anything is timed
        kernel[2](x, N, 0, 1, 1, debug=debug)
    print("ready", flush=True)
    for name, fn in _scenarios(debug):
        print(json.dumps({"name": name, **_outcome(fn)}), flush=True)


def _child_interrupts(debug: bool) -> None:
    """Each launch spins until the parent's SIGINT (it sends one per "start" line); the last one is not
    caught, so the process must end with KeyboardInterrupt."""
    x = np.zeros(N, np.float32)
    for kernel in (runaway, runaway_sync):
        kernel[2](x, N, 0, 1, 1, debug=debug)
        # a stopped launch once, so that what stopping runs the first time is not timed below (on a busy
        # machine its first run alone can take seconds)
        _outcome(lambda k=kernel: k[2](x, N, SPIN_ALL, 0, 1, max_steps=1000, debug=debug))
    print("ready", flush=True)
    launches = [("plain-one-core", lambda: runaway[1](x, N, 0b1, 0, 1, debug=debug)),
                ("plain-two-cores", lambda: runaway[2](x, N, SPIN_ALL, 0, 1, debug=debug)),
                ("cooperative", lambda: runaway_sync[2](x, N, SPIN_ALL, 0, 1, debug=debug))]
    for name, fn in launches:
        print("start", flush=True)
        print(json.dumps({"name": name, **_outcome(fn)}), flush=True)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    print("start", flush=True)
    runaway[2](x, N, SPIN_ALL, 0, 1, debug=debug)


class _Child:
    """This file run as a script, its stdout read line by line with timeouts."""

    def __init__(self, role: str, mode: str):
        # SIGINT back to its default in the child: a worker process may run with it ignored (something it ran
        # before set SIG_IGN), and a Python started with SIGINT ignored never raises KeyboardInterrupt
        self.proc = subprocess.Popen([sys.executable, __file__, role, mode], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def line(self, timeout: float) -> str:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            pytest.fail(f"the child printed nothing for {timeout} s: a launch hangs")
        if line is None:
            pytest.fail(f"the child ended early:\n{self.stderr()[-3000:]}")
        return line

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        self.proc.wait(timeout=60)
        return self.proc.stderr.read()

    def __enter__(self) -> "_Child":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.proc.poll() is None:        # a failed test leaves a spinning child behind otherwise
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module", params=["compiled", "debug"])
def budgets(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    """Every scenario of :func:`_scenarios` run in a child, by name."""
    with _Child("budgets", request.param) as child:
        assert child.line(timeout=900) == "ready"
        results = {}
        for name, _ in _scenarios(request.param == "debug"):
            out = json.loads(child.line(timeout=60))
            results[out["name"]] = out
        assert child.proc.wait(timeout=60) == 0
    return results


# --------------------------------------------------------------------------- budgets and faults


@pytest.mark.parametrize("kind", ["plain", "cooperative"])
def test_a_spinning_core_is_stopped_at_the_time_budget(budgets, kind):
    out = budgets[f"{kind}-timeout"]
    assert out["error"] == "KernelTimeoutError", out
    assert (out["core"], out["rule"], out["line"]) == ("AIV 0", "timeout", LOOP[kind])
    assert "timeout=0.5 s" in out["message"] and "stopped in a loop after" in out["message"]
    assert out["cores"][0][:2] == ["AIV 0", LOOP[kind]]
    assert out["cores"][1][0] == "AIV 1" and out["cores"][1][2] in ("finished", "waits", "has not started")
    assert out["seconds"] < 5


def test_a_single_core_on_the_launching_thread_is_stopped_at_the_time_budget(budgets):
    out = budgets["plain-one-core-timeout"]
    assert (out["error"], out["core"], out["line"]) == ("KernelTimeoutError", "AIV 0", LOOP["plain"]), out
    assert out["seconds"] < 5


@pytest.mark.parametrize("kind", ["plain", "cooperative"])
def test_every_core_is_stopped_at_its_step_budget(budgets, kind):
    out = budgets[f"{kind}-max-steps"]
    assert out["error"] == "KernelTimeoutError", out
    assert (out["core"], out["rule"], out["line"]) == ("AIV 0", "step budget", LOOP[kind])
    assert "max_steps=1000" in out["message"]
    assert [c[2] for c in out["cores"]] == ["ran out of its 1000 loop iterations"] * 2


@pytest.mark.parametrize("name", ["plain-fault-while-spinning", "cooperative-fault-while-spinning",
                                  "plain-fault-on-a-higher-core"])
def test_a_fault_is_reported_while_another_core_spins(budgets, name):
    if name not in budgets:
        pytest.skip("debug mode runs one core at a time: a core after a spinning one never starts")
    out = budgets[name]
    assert out["error"] == "DivisionByZeroError", out
    assert out["core"] == ("AIV 1" if name == "plain-fault-on-a-higher-core" else "AIV 0")
    assert out["seconds"] < 5


# --------------------------------------------------------------------------- Ctrl-C


@pytest.mark.parametrize("mode", ["compiled", "debug"])
def test_ctrl_c_stops_a_spinning_launch(mode):
    with _Child("interrupts", mode) as child:
        assert child.line(timeout=900) == "ready"
        for name in ("plain-one-core", "plain-two-cores", "cooperative"):
            assert child.line(timeout=60) == "start"
            time.sleep(0.5)
            child.proc.send_signal(signal.SIGINT)
            out = json.loads(child.line(timeout=60))
            assert (out["name"], out["error"]) == (name, "KeyboardInterrupt"), out
            line = LOOP[name.split("-")[0]]
            assert "stopped by Ctrl-C" in out["message"] and f":{line} `while i < n:" in out["message"], out
        assert child.line(timeout=60) == "start"
        time.sleep(0.5)
        child.proc.send_signal(signal.SIGINT)
        try:
            code = child.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail("the process did not end within 60 s of Ctrl-C")
        assert code != 0 and "KeyboardInterrupt: kernel 'runaway' stopped by Ctrl-C" in child.stderr()


# --------------------------------------------------------------------------- correct kernels


def test_a_correct_kernel_with_loops_gives_the_same_results_under_budgets(mode):
    x = np.random.default_rng(7).standard_normal(4 * 64).astype(np.float32)
    want = np.cumsum(x.reshape(4, 64), axis=1, dtype=np.float32).reshape(-1)
    for budgets in ({}, {"timeout": 60.0}, {"max_steps": 128}, {"timeout": 60.0, "max_steps": 10**12}):
        y = np.zeros_like(x)
        running_sums[4](x, y, 64, **budgets, **mode)
        np.testing.assert_allclose(y, want, rtol=1e-5)
    # each core runs exactly 64 + 64 iterations: one more than its budget allows stops it
    with pytest.raises(npuemu.KernelTimeoutError, match="max_steps=127"):
        running_sums[4](x, np.zeros_like(x), 64, max_steps=127, **mode)


def test_budgets_are_not_part_of_the_binary():
    sig = [asc.float32, asc.float32, int]
    plain = running_sums.compile(sig, debug=True)
    assert running_sums.compile(sig, debug=True, timeout=3, max_steps=10).sha256 == plain.sha256


def test_budgets_are_checked_and_read_from_the_environment(monkeypatch):
    x = np.zeros(N, np.float32)
    for bad in ({"timeout": 0}, {"timeout": -1.0}, {"timeout": "1"}, {"max_steps": 0}, {"max_steps": 1.5}):
        with pytest.raises(npuemu.LaunchError, match="timeout|max_steps"):
            runaway[1](x, N, 0, 1, 1, **bad)
    monkeypatch.setenv("NPUEMU_MAX_STEPS", "5")
    with pytest.raises(npuemu.KernelTimeoutError, match="max_steps=5"):
        runaway[1](x, N, 0b1, 1, 1)
    runaway[1](x, N, 0b1, 1, 1, max_steps=None)       # the launch's own option wins
    monkeypatch.setenv("NPUEMU_TIMEOUT", "soon")
    with pytest.raises(npuemu.LaunchError, match="NPUEMU_TIMEOUT"):
        runaway[1](x, N, 0, 1, 1)


# --------------------------------------------------------------------------- the pytest plugin

PLUGIN_TESTS = """
import numpy as np
import pytest

import npuemu
import npuemu.asc as asc


@asc.jit
def spin(x: asc.GlobalAddress, n: int, step: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(x, n)
    i = 0
    while i < n:
        i += step
    g.set_value(0, i * 1.0)


def test_option():
    with pytest.raises(npuemu.KernelTimeoutError, match="timeout=0.5 s"):
        spin[1](np.zeros(8, np.float32), 8, 0)


@pytest.mark.npuemu_timeout(0.25)
def test_marker():
    with pytest.raises(npuemu.KernelTimeoutError, match="timeout=0.25 s"):
        spin[1](np.zeros(8, np.float32), 8, 0)


def test_own_option_wins():
    with pytest.raises(npuemu.KernelTimeoutError, match="max_steps=3"):
        spin[1](np.zeros(8, np.float32), 8, 1, max_steps=3)
"""


def test_the_plugin_gives_launches_a_time_budget(pytester):
    pytester.makepyfile(test_spin=PLUGIN_TESTS)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "--npuemu-timeout=0.5", timeout=600)
    result.assert_outcomes(passed=3)
    bad = pytester.runpytest_subprocess("-q", "--npuemu-timeout=-1", timeout=600)
    assert bad.ret != 0 and "npuemu-timeout" in bad.stderr.str()


if __name__ == "__main__":
    {"budgets": _child_budgets, "interrupts": _child_interrupts}[sys.argv[1]](sys.argv[2] == "debug")
