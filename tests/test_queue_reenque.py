"""Enqueuing a dequeued tensor again (the library's ``EnQue`` takes an allocated or a dequeued buffer), and the
queue misuse that stays an error: enqueuing a freed tensor, enqueuing twice without a deque, and enqueuing a
tensor into a queue it does not belong to.

One kernel holds every case, picked by a runtime ``case`` argument, so a single compilation serves them all.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 64
GOOD, ENQUE_FREED, ENQUE_TWICE, ENQUE_OTHER_QUEUE = range(4)


@asc.jit
def reenque_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, case: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(q_in, 1, N * 4)
    pipe.init_buffer(q_out, 1, N * 4)
    t = q_in.alloc_tensor(asc.float32)
    asc.data_copy(t, xg, N)
    q_in.enque(t)
    t = q_in.deque(asc.float32)
    asc.add(t, t, t, N)                         # worked on in place: 2x
    if case == ENQUE_FREED:
        q_in.free_tensor(t)
        q_in.enque(t)
    elif case == ENQUE_TWICE:
        q_in.enque(t)
        q_in.enque(t)
    elif case == ENQUE_OTHER_QUEUE:
        q_out.enque(t)
    else:
        q_in.enque(t)                           # the dequeued tensor goes round again
        t = q_in.deque(asc.float32)
        o = q_out.alloc_tensor(asc.float32)
        asc.add(o, t, t, N)                     # 4x
        q_in.free_tensor(t)
        q_out.enque(o)
        o = q_out.deque(asc.float32)
        asc.data_copy(zg, o, N)
        q_out.free_tensor(o)


@pytest.mark.parametrize("check", ["default", "full"])
def test_dequeued_tensor_can_be_enqueued_again(rng, mode, check):
    x = rng.uniform(-8, 8, N).astype(np.float32)
    z = np.zeros(N, np.float32)
    reenque_kernel[1](x, z, GOOD, check=check, **mode)
    np.testing.assert_array_equal(z, 4 * x)     # exact: doubling twice


@pytest.mark.parametrize("case, message", [
    (ENQUE_FREED, "enque of a buffer that is free, not allocated or dequeued"),
    (ENQUE_TWICE, "enque of a buffer that is enqueued, not allocated or dequeued (enqueued twice without a deque)"),
    (ENQUE_OTHER_QUEUE, "is not a buffer of this queue"),
], ids=["freed", "twice", "other-queue"])
def test_queue_misuse_is_still_caught(case, message):
    x = np.ones(N, np.float32)
    with pytest.raises(errors.QueueError) as info:
        reenque_kernel[1](x, np.zeros(N, np.float32), case, debug=True)
    assert message in str(info.value)
