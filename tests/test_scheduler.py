"""The cooperative scheduler: round-robin resumes, blocks in waves, deadlock detection and its report.

The first tests drive :func:`npuemu.runtime.scheduler.run_cooperative` with plain Python generators
standing in for kernel instances (no compilation); the others use the shared cross-core kernels.
"""
from __future__ import annotations

import numpy as np
import pytest

from corpus.cross_core_kernels import run_order, run_reduce
from npuemu import errors
from npuemu.isa import cross_core as X
from npuemu.runtime import scheduler
from npuemu.runtime.cores import AIC, AIV, CoreSpec, Residency, core_plan, residency
from npuemu.platform import get_platform
from npuemu.language.enums import KernelType

# ---------------------------------------------------------------------------- with stand-in cores


class Deadlock(Exception):
    pass


def _words() -> np.ndarray:
    return np.zeros(X.CORES, np.int64)


def _no_deadlock(*args):
    raise AssertionError("unexpected deadlock report")


def _fail(exc, slot):
    raise exc


def test_cores_run_round_robin_until_all_finish():
    words, trace = _words(), []

    def core(i, waits):
        for k in range(waits):
            trace.append((i, k))
            words[X.PROGRESS] += 1           # what a completed wait does
            yield 7                          # waiting at location 6
        trace.append((i, "end"))

    finished = scheduler.run_cooperative([core(0, 2), core(1, 1)], Residency(((0,), (1,)), 2, "AIV core"),
                                         words, _fail, _no_deadlock)
    assert finished == [True, True]
    assert trace == [(0, 0), (1, 0), (0, 1), (1, "end"), (0, "end")]


def test_blocks_beyond_the_physical_cores_start_when_one_finishes():
    words, started = _words(), []

    def core(i):
        started.append(i)
        yield 1
        words[X.PROGRESS] += 1

    units = tuple((i,) for i in range(5))
    scheduler.run_cooperative([core(i) for i in range(5)], Residency(units, 2, "AIV core"), words, _fail,
                              _no_deadlock)
    assert started == [0, 1, 2, 3, 4]


def test_a_round_without_progress_is_a_deadlock():
    words, seen = _words(), {}

    def stuck():
        while True:
            yield 3

    def view(finished, waiting_at, not_started):
        seen.update(finished=list(finished), waiting_at=dict(waiting_at), not_started=list(not_started))
        raise Deadlock

    def done():
        return
        yield

    units = ((0,), (1,), (2,))
    with pytest.raises(Deadlock):
        scheduler.run_cooperative([stuck(), done(), stuck()], Residency(units, 2, "AIV core"), words, _fail, view)
    # core 1 finished, letting block 2 start; then neither 0 nor 2 moved for a whole round
    assert seen == {"finished": [False, True, False], "waiting_at": {0: 2, 2: 2}, "not_started": []}


def test_a_fault_ends_the_launch_after_the_round():
    words, ran = _words(), []

    def bad():
        raise ZeroDivisionError("x")
        yield

    def other():
        ran.append(1)
        words[X.PROGRESS] += 1
        yield 1
        ran.append(2)

    with pytest.raises(ZeroDivisionError):
        scheduler.run_cooperative([bad(), other()], Residency(((0,), (1,)), 2, "AIV core"), words, _fail,
                                  _no_deadlock)
    assert ran == [1]


def test_residency_per_kernel_type():
    p = get_platform("Ascend910B1")
    r = residency(KernelType.MIX_AIC_1_2, 3, p)
    assert r.units == ((0, 3, 4), (1, 5, 6), (2, 7, 8)) and r.capacity == p.aic_count
    assert [c.label for c in core_plan(KernelType.MIX_AIC_1_2, 3)][:5] == ["AIC 0", "AIC 1", "AIC 2", "AIV 0", "AIV 1"]
    r = residency(KernelType.MIX_AIC_1_1, 2, p)
    assert r.units == ((0, 2), (1, 3)) and r.unit_name == "AI Core"
    assert residency(KernelType.AIV_ONLY, 4, p).capacity == p.aiv_count
    assert residency(KernelType.MIX_AIC_1_0, 4, p).capacity == p.aic_count


def test_deadlock_report_collapses_core_ranges():
    cores = [CoreSpec(AIV, i, 6) for i in range(4)] + [CoreSpec(AIC, 0, 6)]
    v = scheduler.LaunchView("k", cores, [], _words(), [], Residency((), 1, "AIV core"), "p", [False] * 5, {}, [])
    assert scheduler._cores(v, [0, 1, 2, 4]) == "AIV 0-2, AIC 0"
    assert scheduler._cores(v, [3, 1]) == "AIV 1, AIV 3"


# ---------------------------------------------------------------------------- with kernels


def test_deadlock_report_lists_every_core_its_wait_and_line(mode):
    with pytest.raises(errors.DeadlockError) as info:
        run_reduce(6, skip=4, **mode)
    err = info.value
    assert err.core == "AIV 0" and err.loc.line_text.strip() == "asc.sync_all()"
    assert err.rule == "deadlock"
    lines = str(err).splitlines()
    assert lines[0].endswith("[deadlock] no core can make progress (on hardware the kernel hangs until the "
                             "task times out); waiting cores:")
    assert lines[1].startswith("  AIV 0-3, AIV 5 at ")
    assert lines[1].endswith("`asc.sync_all()`: sync_all: 5 of 6 AIV cores arrived; AIV 4 finished without "
                             "reaching it")
    assert [w[0] for w in err.waits] == ["AIV 0", "AIV 1", "AIV 2", "AIV 3", "AIV 5"]


def test_deadlock_report_is_the_same_in_both_modes_and_every_run():
    texts = set()
    for debug in (False, True, False):
        with pytest.raises(errors.DeadlockError) as info:
            run_order(4, 1, skip=1, debug=debug)
        texts.add(str(info.value))
    assert len(texts) == 1


def test_more_blocks_than_cores_run_in_waves(mode):
    """48 AIVs resident; blocks 48 and 49 start as blocks 0 and 1 finish, in block order."""
    cores = get_platform("Ascend910B1").aiv_count + 2
    order = run_order(cores, 1, platform="Ascend910B1", **mode)
    np.testing.assert_array_equal(order, np.arange(cores))


def test_waves_deadlock_when_resident_blocks_wait_for_unstarted_ones(mode):
    """A second round needs the last block to clear the workspace; it never gets a core."""
    with pytest.raises(errors.DeadlockError, match=r"AIV 48-49 have not started: all 48 AIV cores of Ascend910B1 "
                                                   r"are held by blocks that wait, and a block starts only when "
                                                   r"one finishes \(50 blocks > 48 AIV cores"):
        run_order(50, 2, platform="Ascend910B1", **mode)
