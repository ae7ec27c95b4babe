"""TBufPool: two phases of a kernel over the same UB bytes (a pool and a second pool sharing its memory), the
pool's own checks (overflow, buffer ids, sharing, reset with tensors held, initialising a reset pool), the race
checker seeing reuse that reset does not order, free_all_event, and the refused buffer-handle API.

One kernel holds the runtime cases, picked by ``case``, so one compilation serves them all.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 64
NB = N * 4
GOOD, SWAPPED, NO_RESET, RESET_BUSY, POOL_OVERFLOW, IDS, SHARE_LEN, DEAD, PIPE_OVERFLOW, FREE_ALL_ENQUEUED = range(10)


@asc.jit
def pool_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, addrs: asc.GlobalAddress,
                case: int, pool0_len: int, blk: int, extra_len: int):
    xg, yg, zg, ag = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    yg.set_global_buffer(y, N)
    zg.set_global_buffer(z, N)
    ag.set_global_buffer(addrs, 4)
    pipe = asc.TPipe()
    pool0 = asc.TBufPool(asc.TPosition.VECCALC, 8)
    pool1 = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pool2 = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pool3 = asc.TBufPool(asc.TPosition.VECCALC, 16)
    q_in1, q_out1 = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)
    q_in2, q_out2 = asc.TQue(asc.TPosition.VECIN, 1), asc.TQue(asc.TPosition.VECOUT, 1)
    tmp = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buf_pool(pool0, pool0_len)
    pool0.init_buf_pool(pool1, 3 * NB)
    pool0.init_buf_pool(pool2, 3 * NB, pool1)            # the same bytes as pool1
    if case == IDS or case == SHARE_LEN:
        pool0.init_buf_pool(pool3, extra_len, pool1)     # 16 ids from a pool of 8 / longer than pool1
    pool1.init_buffer(q_in1, 1, blk)
    pool1.init_buffer(q_out1, 1, NB)

    # phase 1: y = x + x
    t = q_in1.alloc_tensor(asc.float32)
    ag.set_value(0, t.get_phy_addr())
    asc.data_copy(t, xg, N)
    q_in1.enque(t)
    t = q_in1.deque(asc.float32)
    o = q_out1.alloc_tensor(asc.float32)
    ag.set_value(1, o.get_phy_addr())
    asc.add(o, t, t, N)
    q_in1.free_tensor(t)
    q_out1.enque(o)
    o = q_out1.deque(asc.float32)
    asc.data_copy(yg, o, N)
    if case != RESET_BUSY:
        q_out1.free_tensor(o)
    q_out1.free_all_event()
    if case != NO_RESET:
        pool1.reset()
    if case == DEAD:
        pool1.init_buffer(tmp, NB)

    # phase 2 on pool2, over pool1's bytes: z = x * x + x
    if case == SWAPPED:
        pool2.init_buffer(q_out2, 1, NB)
        pool2.init_buffer(q_in2, 1, NB)
    else:
        pool2.init_buffer(q_in2, 1, NB)
        pool2.init_buffer(q_out2, 1, NB)
    pool2.init_buffer(tmp, NB)
    t = q_in2.alloc_tensor(asc.float32)
    ag.set_value(2, t.get_phy_addr())
    asc.data_copy(t, xg, N)
    q_in2.enque(t)
    if case == FREE_ALL_ENQUEUED:
        q_in2.free_all_event()
    t = q_in2.deque(asc.float32)
    o = q_out2.alloc_tensor(asc.float32)
    ag.set_value(3, o.get_phy_addr())
    s = tmp.get(asc.float32)
    asc.mul(s, t, t, N)
    asc.add(o, s, t, N)
    q_in2.free_tensor(t)
    q_out2.enque(o)
    o = q_out2.deque(asc.float32)
    asc.data_copy(zg, o, N)
    q_out2.free_tensor(o)
    pool2.reset()
    pool0.reset()


def run(case, pool0_len=4 * NB, blk=NB, extra_len=NB, **kw):
    x = np.linspace(-3, 3, N, dtype=np.float32)
    y, z, addrs = np.zeros(N, np.float32), np.zeros(N, np.float32), np.zeros(4, np.int64)
    pool_kernel[1](x, y, z, addrs, case, pool0_len, blk, extra_len, **kw)
    return x, y, z, addrs


@pytest.mark.parametrize("check", ["default", "full"])
def test_second_phase_reuses_the_first_phases_bytes(mode, check):
    x, y, z, addrs = run(GOOD, check=check, **mode)
    np.testing.assert_array_equal(y, x + x)
    np.testing.assert_array_equal(z, x * x + x)
    assert addrs[2] == addrs[0] and addrs[3] == addrs[1]      # phase 2's queues sit on phase 1's bytes
    assert addrs[1] == addrs[0] + NB


def test_reuse_the_reset_does_not_order_is_a_race():
    # pool2's VECIN queue lands on bytes pool1's VECOUT queue had: reset orders V after MTE3, not MTE2
    with pytest.raises(errors.RaceError, match=r"MTE2 write .* races with the MTE3 read"):
        run(SWAPPED, check="full", debug=True)
    # without pool1.reset() nothing waits for the free of pool1's buffers before pool2 reuses them
    with pytest.raises(errors.RaceError, match=r"WAR: MTE2 write"):
        run(NO_RESET, check="full", debug=True)
    x, y, z, _ = run(NO_RESET, debug=True)                    # the results alone do not show it
    np.testing.assert_array_equal(z, x * x + x)


@pytest.mark.parametrize("case, kw, cls, message", [
    (RESET_BUSY, {}, errors.QueueError, r"TBufPool.reset\(\) while a tensor of one of its queues is still dequeued "
                                        r"\(taken by .*q_out1.alloc_tensor"),
    (POOL_OVERFLOW, {"blk": 2 * NB + 32}, errors.CapacityError,
     r"TBufPool overflow: what is initialised on the pool needs 800 bytes but the pool has 768 \(UB\)"),
    (IDS, {}, errors.QueueError, r"a child pool sharing memory asks for 16 but its buf_id_size is 8"),
    (SHARE_LEN, {"extra_len": 4 * NB}, errors.CapacityError,
     r"init_buf_pool length 1024 bytes exceeds the 768 bytes of the share_buf pool"),
    (DEAD, {}, errors.QueueError, r"the TBufPool was reset and has no memory: init_buf_pool it again first"),
    (PIPE_OVERFLOW, {"pool0_len": 1 << 24}, errors.CapacityError, r"UB overflow"),
    (FREE_ALL_ENQUEUED, {}, errors.QueueError, r"free_all_event while a tensor of the queue is still enqueued"),
], ids=["reset-busy", "pool-overflow", "ids", "share-len", "dead", "pipe-overflow", "free-all-enqueued"])
def test_pool_misuse_is_caught(case, kw, cls, message):
    with pytest.raises(cls, match=message):
        run(case, debug=True, **kw)


def test_parent_pool_overflow_when_carving_a_child():
    with pytest.raises(errors.CapacityError, match=r"needs 768 bytes but the pool has 512"):
        run(GOOD, pool0_len=2 * NB, debug=True)


@asc.jit
def bad_position_kernel(x: asc.GlobalAddress):
    asc.TBufPool(asc.TPosition.A2, 4)


@asc.jit
def bad_ids_kernel(x: asc.GlobalAddress):
    asc.TBufPool(asc.TPosition.VECCALC, 17)


@asc.jit
def wrong_memory_kernel(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    pool = asc.TBufPool(asc.TPosition.VECCALC, 4)
    q = asc.TQue(asc.TPosition.A1, 1)
    pipe.init_buf_pool(pool, 1024)
    pool.init_buffer(q, 1, 256)


@asc.jit
def share_other_memory_kernel(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    ub = asc.TBufPool(asc.TPosition.VECCALC, 4)
    l1 = asc.TBufPool(asc.TPosition.A1, 4)
    pipe.init_buf_pool(ub, 1024)
    pipe.init_buf_pool(l1, 1024, ub)


@asc.jit
def buf_handle_kernel(x: asc.GlobalAddress):
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pool = asc.TBufPool(asc.TPosition.VECCALC, 4)
    pipe.init_buf_pool(pool, 1024)
    q.init_start_buf_handle(0, 1, 256)


@pytest.mark.parametrize("kernel, cls, message", [
    (bad_position_kernel, errors.KernelTypeError, "TBufPool position must be one of VECIN, VECOUT, VECCALC, A1"),
    (bad_ids_kernel, errors.KernelTypeError, r"buf_id_size must be a compile-time int in 1..16, got 17"),
    (wrong_memory_kernel, errors.KernelTypeError, r"TQue\[A1, depth 1\] is not in the memory of TBufPool\[VECCALC\]"),
    (share_other_memory_kernel, errors.KernelTypeError, r"pools sharing memory must be in the same memory"),
    (buf_handle_kernel, errors.UnsupportedSyntaxError, r"init_start_buf_handle is the library's internal"),
], ids=["position", "ids", "queue-memory", "share-memory", "buf-handle"])
def test_static_pool_errors(kernel, cls, message):
    with pytest.raises(cls, match=message):
        kernel[1](np.zeros(8, np.float32))
