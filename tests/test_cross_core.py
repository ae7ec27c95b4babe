"""Cross-core synchronisation: sync_all (hard and soft), cross-core flags in modes 0/1/2, ib_set/ib_wait,
wait_pre_block/notify_next_block.  Correct kernels compute what NumPy does; each misuse raises the
right error.  The kernels live in tests/corpus/cross_core_kernels.py, shared with the corpus cases.
"""
from __future__ import annotations

import numpy as np
import pytest

from corpus.cross_core_kernels import (FIX_ON_AIV, FLAG_16, MODE1_ON_AIC, NOTE_EACH_ROUND, SLOT, SOFT,
                                       WRONG_FLAG, run_ib_pair, run_order, run_reduce, run_relay)
from npuemu import errors


# ---------------------------------------------------------------------------- correct kernels


def test_sync_all_orders_a_two_phase_reduction(mode):
    """Each core writes a partial sum, sync_all(), block 0 adds them up: exact float32 result."""
    got, expect = run_reduce(8, **mode)
    assert got == expect


def test_soft_sync_all_through_a_zeroed_gm_workspace(mode):
    ws = np.zeros(8 * SLOT, np.int32)
    got, expect = run_reduce(8, SOFT, ws=ws, **mode)
    assert got == expect
    np.testing.assert_array_equal(ws[::SLOT], np.ones(8))     # every core counted itself in once


def test_mode2_flags_relay_data_between_the_aivs_of_each_ai_core(mode):
    """AIV 0 produces, the AIC relays its mode-2 report to both AIVs, AIV 1 consumes; then a mode-1
    barrier of the AIVs, a mode-0 barrier of the AICs and the mix sync_all."""
    run_relay(3, 4, **mode)


def test_wait_pre_block_serialises_the_cores_in_block_order(mode):
    order = run_order(5, 3, **mode)
    np.testing.assert_array_equal(order, np.tile(np.arange(5), 3))


def test_ib_wait_sees_the_data_written_before_ib_set(mode):
    np.testing.assert_array_equal(run_ib_pair(**mode), [41, 42])


# ---------------------------------------------------------------------------- misuse


def test_wait_for_a_flag_no_core_sets(mode):
    with pytest.raises(errors.DeadlockError) as info:
        run_relay(1, 2, WRONG_FLAG, **mode)
    text = str(info.value)
    assert ("AIV 0-1 at " in text and "cross_core_wait_flag(flag 1, mode 2): its counter is 0, and no core can "
            "set it: the AIC of its AI Core (AIC 0 waits at") in text
    assert "AIC 0 at " in text and "none of the 2 AIVs of its AI Core has set it" in text


def test_a_flag_set_every_round_and_consumed_once_is_left_set_at_the_end(mode):
    with pytest.raises(errors.SyncError, match=r"the kernel ends with cross-core flag 5 of this core counting 2: "
                                               r"2 sets no cross_core_wait_flag consumed") as info:
        run_relay(1, 3, NOTE_EACH_ROUND, **mode)
    assert info.value.core == "AIV 0"
    assert "cross_core_set_flag(NOTE, 2" in info.value.loc.line_text      # points at the AIC's set


def test_leftover_flags_are_not_checked_at_check_level_off():
    run_relay(1, 3, NOTE_EACH_ROUND, check="off", debug=True)


@pytest.mark.parametrize("bug, cls, message, core", [
    (FIX_ON_AIV, errors.SyncError, r"cross_core_set_flag\(..., PipeID.PIPE_FIX\): an AIV core has no such pipe",
     "AIV 0"),
    (FLAG_16, errors.SyncError, r"cross_core_set_flag: flag id 16 is outside 0..15", "AIV 1"),
    (MODE1_ON_AIC, errors.SyncError, r"mode 1 synchronises the AIVs of one AI Core; an AIC cannot take part",
     "AIC 0"),
])
def test_illegal_cross_core_set(mode, bug, cls, message, core):
    with pytest.raises(cls, match=message) as info:
        run_relay(1, 1, bug, **mode)
    assert info.value.core == core


def test_soft_sync_all_workspace_too_small(mode):
    with pytest.raises(errors.BoundsError, match=r"sync_all needs 256 bytes of GM workspace; the gm_workspace "
                                                 r"GlobalTensor has 128"):
        run_reduce(8, SOFT, ws=np.zeros(4 * SLOT, np.int32), **mode)


def test_soft_sync_all_on_a_workspace_holding_ones_still_works(mode):
    """Not zeroed but uniform: each core's slot becomes 2 and all wait for the sum 2 * cores, as on hardware."""
    ws = np.zeros(4 * SLOT, np.int32)
    ws[::SLOT] = 1
    got, expect = run_reduce(4, SOFT, ws=ws, **mode)
    assert got == expect
