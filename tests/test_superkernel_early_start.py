"""SuperKernel early start (spec §1.5 B, §1.11): set_next_task_start / wait_pre_task_end and their counts."""
from __future__ import annotations

import numpy as np
import pytest

from npuemu import superkernel as sk
from npuemu.errors import DeadlockError, RaceError, SuperKernelError, SyncError

from superkernel_kernels import early_kernel


def _arrays():
    return np.arange(16, dtype=np.int32) * 3 + 1, np.zeros(16, np.int32), np.zeros(16, np.int32)


def _chain(x, y, z, sets=1, waits=1, key=1, options=None, check="full", late=0):
    a = sk.Launch(early_kernel, 2, (x, y, sets, 0, late), {"check": check, "tiling_key": key}, name="a")
    b = sk.Launch(early_kernel, 2, (y, z, 0, waits, 0), {"check": check, "tiling_key": 1}, name="b")
    return sk.combine([a, b], options)


def test_outside_a_superkernel_the_calls_do_nothing():
    x, y, _ = _arrays()
    early_kernel[2](x, y, 1, 1, 0, check="full", tiling_key=1)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("options", ["early-start=1", "early-start=2"])
def test_a_correct_early_start_chain_runs_clean(options):
    x, y, z = _arrays()
    _chain(x, y, z, options=options).run()
    np.testing.assert_array_equal(z, x)


def test_a_tiling_key_branch_without_set_next_task_start_hangs():
    x, y, z = _arrays()
    with pytest.raises(DeadlockError) as e:
        _chain(x, y, z, key=2).run()         # the key-2 binary never calls it; the source does
    msg = str(e.value)
    assert "early-start count mismatch" in msg and "sub-kernel 0 'a'" in msg and "AIV 0-1" in msg
    assert e.value.sub_kernel == "b"


def test_set_next_task_start_twice_is_reported():
    x, y, z = _arrays()
    with pytest.raises(SyncError, match="set_next_task_start\\(\\) is called a second time") as e:
        _chain(x, y, z, sets=2).run()
    assert e.value.sub_kernel == "a" and e.value.core == "AIV 0"
    assert "set_next_task_start()" in e.value.loc.line_text


def test_wait_pre_task_end_missing_on_a_core_is_reported():
    x, y, z = _arrays()
    with pytest.raises(SyncError, match="early-start count mismatch: sub-kernel 1 'b' calls wait_pre_task_end"):
        _chain(x, y, z, waits=0, check="default").run()
    with pytest.raises(SyncError, match="called a second time"):
        _chain(*_arrays(), waits=2).run()


def test_reads_before_a_missing_wait_race_with_the_previous_sub_kernel():
    x, y, z = _arrays()
    with pytest.raises(RaceError) as e:
        _chain(x, y, z, waits=0).run()
    err = e.value
    # the read of y in b is not ordered after a's write of y: the message names both sub-kernels' lines
    assert err.sub_kernel == "b" and "data_copy(t, xg, 8)" in err.loc.line_text
    assert "MTE3 write" in str(err) and "asc.data_copy(yg, t, 8)" in str(err)


def test_early_start_calls_need_early_start_on():
    x, y, z = _arrays()
    with pytest.raises(SuperKernelError, match="early-start=0 does not allow"):
        _chain(x, y, z, options="early-start=0")


def test_a_write_after_set_next_task_start_races_with_the_next_sub_kernel():
    x, y, z = _arrays()
    with pytest.raises(RaceError) as e:
        _chain(x, y, z, late=1).run()
    err = e.value
    # b's read of y (after its wait) is not ordered after a's write of y issued after a's set
    assert err.sub_kernel == "b" and "data_copy(t, xg, 8)" in err.loc.line_text
    assert "asc.data_copy(yg, t, 8)" in str(err)
    x, y, z = _arrays()
    _chain(x, y, z, late=1, options="early-start=2").run()     # the calls are no-ops: a full barrier orders it
    np.testing.assert_array_equal(z, x)
