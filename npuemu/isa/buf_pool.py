"""TBufPool: a region of UB or L1 handed out by hand, so that successive phases of a kernel can reuse it.

``pipe.init_buf_pool(pool, len)`` carves ``len`` bytes (rounded up to 32)
from the TPipe's allocator; ``parent.init_buf_pool(child, len)`` carves them
from the parent pool instead.  With a third argument ``share_buf`` the new
pool takes the start address and the length of ``share_buf``: two pools over
the same bytes, used one after the other.  ``pool.init_buffer(que, num, len)``
and ``pool.init_buffer(tbuf, len)`` hand out the pool's bytes from its start
upwards, as ``TPipe.init_buffer`` does with a whole memory.

Each pool may give out ``buf_id_size`` buffers (at most 16): a queue takes
``num``, a TBuf one.  A child pool carved from its parent takes its own
``buf_id_size`` of the parent's remaining ids; a shared child may not ask for
more than its parent's ``buf_id_size`` (the library's rule for both; npuemu
assumes the carved child's ids are no longer the parent's).

``pool.reset()`` ends the pool's phase: the library first waits for every
free flag of the pool's buffers (at check level ``full`` the race checker
joins them, so a later pool over the same bytes is ordered after the
consumers of this one), then empties the pool.  The buffers keep their memory
(the documentation allows switching back to them), so using them again is
not refused; what overlaps unsynchronised is the race checker's to see.  A
pool that was reset has no memory until ``init_buf_pool`` gives it some again,
and its queues may then be initialised again.  Resetting a pool while one of
its queues still holds a tensor (allocated, enqueued or dequeued and not
freed) is reported: the documentation requires alloc/free and enque/deque to
pair up before switching pools.
"""
from __future__ import annotations

from numba import njit

from .. import errors
from . import hb
from . import state as S
from .fault import Fault, Message, register
from .linkage import instruction
from .queue import F_BAD_LEN, F_BAD_NUM, F_REINIT, carve, set_queue

F_POOL_REINIT = 2000
F_POOL_LEN = 2001
F_POOL_OVER = 2002
F_POOL_IDS = 2003
F_POOL_DEAD = 2004
F_SHARE_LEN = 2005
F_RESET_BUSY = 2006
F_FREE_ALL_ENQUEUED = 2007

MAX_ID_SIZE = 16        # the library's limit on buf_id_size

_IDS_WHAT = {0: "the pool's buffers take", 1: "a child pool carved from it asks for",
             2: "a child pool sharing memory asks for"}
_IDS_LIMIT = {0: "its buf_id_size is", 1: "it has left", 2: "its buf_id_size is"}
_STATE = {S.BLK_ALLOCATED: "allocated", S.BLK_ENQUEUED: "enqueued", S.BLK_DEQUEUED: "dequeued"}

register({
    F_POOL_REINIT: (errors.QueueError,
                    lambda a, b, c, env: "init_buf_pool on a TBufPool that already has memory: reset() it first"),
    F_POOL_LEN: (errors.ParamRangeError,
                 lambda a, b, c, env: f"init_buf_pool length {a} bytes: must be positive"),
    F_POOL_OVER: (errors.CapacityError,
                  lambda a, b, c, env: Message(f"TBufPool overflow: what is initialised on the pool needs {a} bytes "
                                               f"but the pool has {b} ({env.hardware(c)})",
                                               buffer=env.hardware(c))),
    F_POOL_IDS: (errors.QueueError,
                 lambda a, b, c, env: f"TBufPool buffer ids: {_IDS_WHAT[c]} {a} but {_IDS_LIMIT[c]} {b} "
                                      f"(TBufPool(pos, buf_id_size), at most {MAX_ID_SIZE})"),
    F_POOL_DEAD: (errors.QueueError,
                  lambda a, b, c, env: ("the TBufPool was reset and has no memory: init_buf_pool it again first"
                                        if a == S.POOL_RESET else
                                        "the TBufPool has no memory yet: pipe.init_buf_pool (or a parent pool's "
                                        "init_buf_pool) gives it some first")),
    F_SHARE_LEN: (errors.CapacityError,
                  lambda a, b, c, env: f"init_buf_pool length {a} bytes exceeds the {b} bytes of the share_buf pool"),
    F_RESET_BUSY: (errors.QueueError,
                   lambda a, b, c, env: f"TBufPool.reset() while a tensor of one of its queues is still "
                                        f"{_STATE.get(a, a)} (taken by {env.source(b)}): free every tensor of the "
                                        f"pool's queues before switching pools"),
    F_FREE_ALL_ENQUEUED: (errors.QueueError,
                          lambda a, b, c, env: "free_all_event while a tensor of the queue is still enqueued "
                                               "(deque it first)"),
})


@njit(cache=True)
def _pool(pid):
    return S.POOL_BASE + pid * S.POOL_STRIDE


@njit(cache=True)
def _live(st, p, loc):
    if st[p + S.P_STATE] != S.POOL_LIVE:
        raise Fault(F_POOL_DEAD, loc, st[p + S.P_STATE], 0, 0)


@njit(cache=True)
def _take(st, p, nbytes, nids, hw, loc):
    """Take ``nbytes`` and ``nids`` buffer ids of pool record ``p``; returns the absolute address."""
    _live(st, p, loc)
    if st[p + S.P_CUR] + nbytes > st[p + S.P_LEN]:
        raise Fault(F_POOL_OVER, loc, st[p + S.P_CUR] + nbytes, st[p + S.P_LEN], hw)
    if st[p + S.P_IDS] + nids > st[p + S.P_ID_SIZE]:
        raise Fault(F_POOL_IDS, loc, st[p + S.P_IDS] + nids, st[p + S.P_ID_SIZE], 0)
    addr = st[p + S.P_START] + st[p + S.P_CUR]
    st[p + S.P_CUR] += nbytes
    st[p + S.P_IDS] += nids
    return addr


@instruction
def init_pool(st, pid, hw, length, id_size, parent, share, loc):
    """``init_buf_pool``: pool ``pid`` gets memory from the TPipe (parent -1) or pool ``parent``,
    or the memory of pool ``share`` (>= 0)."""
    p = _pool(pid)
    if st[p + S.P_STATE] == S.POOL_LIVE:
        raise Fault(F_POOL_REINIT, loc, 0, 0, 0)
    if length <= 0:
        raise Fault(F_POOL_LEN, loc, length, 0, 0)
    length = (length + 31) // 32 * 32
    if share >= 0:
        sp = _pool(share)
        _live(st, sp, loc)
        if length > st[sp + S.P_LEN]:
            raise Fault(F_SHARE_LEN, loc, length, st[sp + S.P_LEN], 0)
        if parent >= 0 and id_size > st[_pool(parent) + S.P_ID_SIZE]:
            raise Fault(F_POOL_IDS, loc, id_size, st[_pool(parent) + S.P_ID_SIZE], 2)
        start = st[sp + S.P_START]
        length = st[sp + S.P_LEN]
    elif parent >= 0:
        pp = _pool(parent)
        _live(st, pp, loc)
        left = st[pp + S.P_ID_SIZE] - st[pp + S.P_IDS]
        if id_size > left:
            raise Fault(F_POOL_IDS, loc, id_size, left, 1)
        start = _take(st, pp, length, id_size, hw, loc)
    else:
        start = carve(st, hw, length, 0, 1 << 30, loc)
    st[p + S.P_HW] = hw
    st[p + S.P_START] = start
    st[p + S.P_LEN] = length
    st[p + S.P_CUR] = 0
    st[p + S.P_IDS] = 0
    st[p + S.P_ID_SIZE] = id_size
    st[p + S.P_STATE] = S.POOL_LIVE


@njit(cache=True)
def _reinit_ok(st, owner, gen):
    """A queue or TBuf initialised before may be initialised again once the pool it was on was reset."""
    return owner > 0 and st[_pool(owner - 1) + S.P_GEN] != gen


@instruction
def pool_init_queue(st, pid, qid, pos, num, length, depth, loc):
    """``pool.init_buffer(que, num, len)``: ``num`` blocks of ``len`` bytes from the pool."""
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    if st[q + S.Q_NBLK] != 0 and not _reinit_ok(st, st[S.QUEUE_POOL + qid], st[S.QUEUE_POOL_GEN + qid]):
        raise Fault(F_REINIT, loc, 0, 0, 0)
    if num < 1 or num > S.MAX_QUEUE_BLOCKS:
        raise Fault(F_BAD_NUM, loc, num, S.MAX_QUEUE_BLOCKS, 0)
    if length <= 0:
        raise Fault(F_BAD_LEN, loc, length, 0, 0)
    p = _pool(pid)
    blk = (length + 31) // 32 * 32
    base = _take(st, p, num * blk, num, st[p + S.P_HW], loc)
    set_queue(st, qid, pos, num, blk, base, depth, loc)
    st[S.QUEUE_POOL + qid] = pid + 1
    st[S.QUEUE_POOL_GEN + qid] = st[p + S.P_GEN]


@instruction
def pool_init_tbuf(st, pid, bid, length, loc):
    """``pool.init_buffer(tbuf, len)``: one buffer of ``len`` bytes from the pool."""
    t = S.TBUF_BASE + bid * S.TBUF_STRIDE
    if st[t + 1] != 0 and not _reinit_ok(st, st[S.TBUF_POOL + bid], st[S.TBUF_POOL_GEN + bid]):
        raise Fault(F_REINIT, loc, 0, 0, 0)
    if length <= 0:
        raise Fault(F_BAD_LEN, loc, length, 0, 0)
    p = _pool(pid)
    blk = (length + 31) // 32 * 32
    st[t] = _take(st, p, blk, 1, st[p + S.P_HW], loc)
    st[t + 1] = blk
    st[S.TBUF_POOL + bid] = pid + 1
    st[S.TBUF_POOL_GEN + bid] = st[p + S.P_GEN]


@njit(cache=True)
def _on_pool(st, pid, qid):
    """Whether queue ``qid`` was initialised on pool ``pid`` since the pool's last reset."""
    return (st[S.QUEUE_POOL + qid] == pid + 1 and st[S.QUEUE_POOL_GEN + qid] == st[_pool(pid) + S.P_GEN]
            and st[S.QUEUE_BASE + qid * S.QUEUE_STRIDE + S.Q_NBLK] != 0)


@instruction
def pool_reset(st, pid, loc):
    """``pool.reset()``: every tensor of the pool's queues must be free; the pool is emptied."""
    for qid in range(S.MAX_QUEUES):
        if _on_pool(st, pid, qid):
            q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
            for b in range(st[q + S.Q_NBLK]):
                state = st[q + S.Q_STATE + b]
                if state != S.BLK_FREE:
                    raise Fault(F_RESET_BUSY, loc, state, st[q + S.Q_ALLOC_LOC + b], 0)
    p = _pool(pid)
    if st[p + S.P_STATE] == S.POOL_LIVE:
        st[p + S.P_STATE] = S.POOL_RESET
    st[p + S.P_START] = 0
    st[p + S.P_LEN] = 0
    st[p + S.P_CUR] = 0
    st[p + S.P_IDS] = 0
    st[p + S.P_GEN] += 1


@instruction
def pool_reset_sync(st, sh, pid, loc):
    """Race checker (level ``full``), before :func:`pool_reset`: wait for the free flags of the pool's queues."""
    for qid in range(S.MAX_QUEUES):
        if _on_pool(st, pid, qid):
            hb.join_queue(sh, qid)


@instruction
def free_all_event(st, qid, loc):
    """``que.free_all_event()``: no tensor of the queue may be enqueued (the library asserts that)."""
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    for b in range(st[q + S.Q_NBLK]):
        if st[q + S.Q_STATE + b] == S.BLK_ENQUEUED:
            raise Fault(F_FREE_ALL_ENQUEUED, loc, 0, 0, 0)


@instruction
def free_all_event_sync(st, sh, qid, loc):
    """Race checker (level ``full``): the free flags of the queue's blocks are waited for."""
    hb.join_queue(sh, qid)
