"""TPipe, TQue and TBuf: on-chip memory partitioning and the buffer life cycle.

A queue owns ``num`` blocks carved out of its position's memory by
``init_buffer``.  A block moves FREE -> ALLOCATED (alloc_tensor) -> ENQUEUED
(enque) -> DEQUEUED (deque) -> FREE (free_tensor).  A dequeued block may also
be enqueued again (DEQUEUED -> ENQUEUED), as the library's ``EnQue`` accepts
both states: a ``TQueBind`` whose tensor is worked on in place between two
stages re-enqueues it instead of allocating a new one.  The block must belong
to the queue it is enqueued into (the library asserts that too), so a tensor
dequeued from one ``TQue`` cannot be enqueued into another.  Misuse that hangs or
corrupts data on hardware (no free block, deque from an empty queue, more than
``depth`` tensors enqueued, more than 8 tensors allocated per position,
freeing twice) is reported here.

A queue also synchronises the two pipes on either side of it (Ascend C's
``TQueBind``): ``enque`` sets a flag from the producing pipe that ``deque``
waits for on the consuming pipe, and ``free_tensor`` sets a flag from the
consumer that the next ``alloc_tensor`` of the block waits for on the
producer.  :func:`queue_pipes` names the two pipes from the queue's
positions, as the library derives its events (``GetQueEvt``); at check level
``full`` the TQue rules hand them to the race checker (``isa/hb.py``).
"""
from __future__ import annotations

from numba import njit

from .linkage import instruction
from .. import errors
from ..language.enums import Hardware, TPosition
from . import hb
from . import state as S
from .fault import Fault, Message, register

F_NO_MEM = 200
F_OVERFLOW = 201
F_TOO_MANY_BUFS = 202
F_REINIT = 203
F_BAD_NUM = 204
F_NOT_INIT = 205
F_NO_FREE = 206
F_POS_LIMIT = 207
F_NOT_BLOCK = 208
F_BAD_STATE_ENQUE = 209
F_DEPTH = 210
F_EMPTY = 211
F_BAD_STATE_FREE = 212
F_TBUF_NOT_INIT = 213
F_TBUF_OVER = 214
F_TBUF_ALIGN = 215
F_BAD_LEN = 216

# --------------------------------------------------------------------------- the pipes of a queue

# a TQue(pos) moves data between these logical positions (the library's GetBufferLogicPos)
_LOGICAL = {
    TPosition.VECIN: (TPosition.GM, TPosition.VECIN), TPosition.VECOUT: (TPosition.VECOUT, TPosition.GM),
    TPosition.A1: (TPosition.GM, TPosition.A1), TPosition.B1: (TPosition.GM, TPosition.B1),
    TPosition.C1: (TPosition.GM, TPosition.C1), TPosition.A2: (TPosition.A1, TPosition.A2),
    TPosition.B2: (TPosition.B1, TPosition.B2), TPosition.C2: (TPosition.C1, TPosition.C2),
    TPosition.CO1: (TPosition.CO1, TPosition.CO2), TPosition.CO2: (TPosition.CO2, TPosition.GM),
}
_MEMORY = {
    TPosition.GM: Hardware.GM, TPosition.CO2: Hardware.GM, TPosition.VECIN: Hardware.UB,
    TPosition.VECOUT: Hardware.UB, TPosition.VECCALC: Hardware.UB, TPosition.A1: Hardware.L1,
    TPosition.B1: Hardware.L1, TPosition.C1: Hardware.L1, TPosition.A2: Hardware.L0A,
    TPosition.B2: Hardware.L0B, TPosition.C2: Hardware.BIAS, TPosition.CO1: Hardware.L0C,
}
# (source memory, destination memory) -> (producing pipe, consuming pipe), after GetQueEvt on A2/A3
_QUEUE_PIPES = {
    (Hardware.GM, Hardware.UB): (hb.MTE2, hb.V),
    (Hardware.GM, Hardware.L1): (hb.MTE2, hb.MTE1),
    (Hardware.GM, Hardware.L0A): (hb.MTE2, hb.M),
    (Hardware.GM, Hardware.L0B): (hb.MTE2, hb.M),
    (Hardware.UB, Hardware.GM): (hb.V, hb.MTE3),
    (Hardware.UB, Hardware.L1): (hb.MTE3, hb.MTE1),
    (Hardware.UB, Hardware.UB): (hb.MTE2, hb.MTE3),
    (Hardware.L1, Hardware.UB): (hb.MTE1, hb.V),
    (Hardware.L1, Hardware.L0A): (hb.MTE1, hb.M),
    (Hardware.L1, Hardware.L0B): (hb.MTE1, hb.M),
    (Hardware.L1, Hardware.BIAS): (hb.MTE1, hb.M),
    (Hardware.L0C, Hardware.GM): (hb.M, hb.FIX),
}


def queue_pipes(src: TPosition, dst: TPosition) -> tuple[int, int]:
    """``(producer, consumer)`` race-checker pipes of ``TQueBind(src, dst)`` (``TQue(pos)``: src == dst).

    A queue between two vector positions of the same buffer (``TQue(VECCALC)``)
    stays on the vector pipe.  A pair the hardware has no queue event for is
    taken as vector to vector too: such a queue orders nothing between pipes.
    """
    if src == dst:
        if src not in _LOGICAL:
            return hb.V, hb.V
        src, dst = _LOGICAL[src]
    pipes = _QUEUE_PIPES.get((_MEMORY.get(src), _MEMORY.get(dst)))
    return pipes if pipes is not None else (hb.V, hb.V)

_STATE = {S.BLK_FREE: "free", S.BLK_ALLOCATED: "allocated", S.BLK_ENQUEUED: "enqueued",
          S.BLK_DEQUEUED: "dequeued"}

register({
    F_NO_MEM: (errors.PositionError, lambda a, b, c, env: f"this core type has no {env.hardware(a)}: a buffer "
                                                          f"of that memory cannot be taken here (guard the code "
                                                          f"with asc.ascend_is_aiv())"),
    F_OVERFLOW: (errors.CapacityError,
                 lambda a, b, c, env: Message(f"{env.hardware(c)} overflow: buffers need {a} bytes but it has {b}",
                                              buffer=env.hardware(c))),
    F_TOO_MANY_BUFS: (errors.QueueError,
                      lambda a, b, c, env: f"TPipe hands out {a} buffers; at most {b} are allowed"),
    F_REINIT: (errors.QueueError,
               lambda a, b, c, env: "init_buffer called twice for the same queue/buffer without pipe.reset()"),
    F_BAD_NUM: (errors.ParamRangeError,
                lambda a, b, c, env: f"init_buffer num={a}: must be 1..{b}"),
    F_NOT_INIT: (errors.QueueError,
                 lambda a, b, c, env: "queue used before pipe.init_buffer() gave it memory"),
    F_NO_FREE: (errors.QueueError,
                lambda a, b, c, env: f"alloc_tensor: all {a} buffers of the queue are in use; on hardware "
                                     f"this waits forever (free_tensor the tensors you are done with)"),
    F_POS_LIMIT: (errors.QueueError,
                  lambda a, b, c, env: f"more than {b} tensors allocated at once in position "
                                       f"{env.position(a)} (max buffer number in same queue position is {b})"),
    F_NOT_BLOCK: (errors.QueueError,
                  lambda a, b, c, env: f"the tensor at address {a} is not a buffer of this queue (pass the "
                                       f"tensor this queue's alloc_tensor/deque returned, not a sub-tensor or "
                                       f"a tensor of another queue; to hand a tensor on in place, use one "
                                       f"TQueBind for both stages)"),
    F_BAD_STATE_ENQUE: (errors.QueueError,
                        lambda a, b, c, env: f"enque of a buffer that is {_STATE.get(a, a)}, not allocated or "
                                             f"dequeued" + (" (enqueued twice without a deque)"
                                                            if a == S.BLK_ENQUEUED else "")),
    F_DEPTH: (errors.QueueError,
              lambda a, b, c, env: f"enque beyond the queue depth of {a} (deque before enqueuing more)"),
    F_EMPTY: (errors.QueueError,
              lambda a, b, c, env: "deque from an empty queue: on hardware this waits forever"),
    F_BAD_STATE_FREE: (errors.QueueError,
                       lambda a, b, c, env: f"free_tensor of a buffer that is {_STATE.get(a, a)}"
                                            + (" (double free)" if a == S.BLK_FREE else
                                               " (deque it first)" if a == S.BLK_ENQUEUED else "")),
    F_TBUF_NOT_INIT: (errors.QueueError,
                      lambda a, b, c, env: "TBuf.get before pipe.init_buffer() gave the buffer memory"),
    F_TBUF_OVER: (errors.BoundsError,
                  lambda a, b, c, env: f"TBuf.get of bytes [{a}, {a + b}) from a buffer of {c} bytes"),
    F_TBUF_ALIGN: (errors.AlignmentError,
                   lambda a, b, c, env: f"TBuf.get_with_offset byte offset {a} is not 32-byte aligned"),
    F_BAD_LEN: (errors.ParamRangeError,
                lambda a, b, c, env: f"init_buffer length {a} bytes: must be positive"),
})


@njit(cache=True)
def carve(st, hw, nbytes, nbufs, max_bufs, loc):
    """Take ``nbytes`` of memory ``hw`` from the TPipe allocator; returns the absolute address."""
    size = st[S.SEG_SIZE + hw]
    if size == 0:
        raise Fault(F_NO_MEM, loc, hw, 0, 0)
    cur = st[S.PIPE_CUR + hw]
    if cur + nbytes > size:
        raise Fault(F_OVERFLOW, loc, cur + nbytes, size, hw)
    st[S.PIPE_NBUF] += nbufs
    if st[S.PIPE_NBUF] > max_bufs:
        raise Fault(F_TOO_MANY_BUFS, loc, st[S.PIPE_NBUF], max_bufs, 0)
    st[S.PIPE_CUR + hw] = cur + nbytes
    addr = st[S.SEG_BASE + hw] + cur
    if addr + nbytes > st[S.LM_DIRTY]:
        st[S.LM_DIRTY] = addr + nbytes     # the launch refills only these bytes for the next core
    return addr


@njit(cache=True)
def carve_if_present(st, hw, nbytes, nbufs, max_bufs, loc):
    """:func:`carve`, except on a core type without memory ``hw`` (a UB queue set up by the AIC of a MIX
    kernel, whose source both core types run): then nothing is taken and the address is ``-1 - hw``, which
    the first use of the buffer reports (:func:`check_present`)."""
    if st[S.SEG_SIZE + hw] == 0:
        return -1 - hw
    return carve(st, hw, nbytes, nbufs, max_bufs, loc)


@njit(cache=True)
def check_present(base, loc):
    """A buffer set up on a core type without its memory cannot be used there."""
    if base < 0:
        raise Fault(F_NO_MEM, loc, -1 - base, 0, 0)


@instruction
def init_queue(st, qid, pos, hw, num, length, depth, max_bufs, loc):
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    if st[q + S.Q_NBLK] != 0:
        raise Fault(F_REINIT, loc, 0, 0, 0)
    if num < 1 or num > S.MAX_QUEUE_BLOCKS:
        raise Fault(F_BAD_NUM, loc, num, S.MAX_QUEUE_BLOCKS, 0)
    if length <= 0:
        raise Fault(F_BAD_LEN, loc, length, 0, 0)
    blk = (length + 31) // 32 * 32
    base = carve_if_present(st, hw, num * blk, num, max_bufs, loc)
    set_queue(st, qid, pos, num, blk, base, depth, loc)


@njit(cache=True)
def set_queue(st, qid, pos, num, blk, base, depth, loc):
    """Give queue ``qid`` ``num`` free blocks of ``blk`` bytes from absolute address ``base``."""
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    st[q + S.Q_POS] = pos
    st[q + S.Q_NBLK] = num
    st[q + S.Q_BLKLEN] = blk
    st[q + S.Q_BASE] = base
    st[q + S.Q_DEPTH] = depth
    st[q + S.Q_COUNT] = 0
    st[q + S.Q_HEAD] = 0
    st[q + S.Q_CURSOR] = 0
    st[q + S.Q_INIT_LOC] = loc
    for b in range(num):
        st[q + S.Q_STATE + b] = S.BLK_FREE


@instruction
def alloc_tensor(st, qid, max_per_pos, loc):
    """A free block of the queue: returns (absolute address, block length in bytes)."""
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    n = st[q + S.Q_NBLK]
    if n == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    check_present(st[q + S.Q_BASE], loc)
    cursor = st[q + S.Q_CURSOR]
    for i in range(n):
        b = (cursor + i) % n
        if st[q + S.Q_STATE + b] == S.BLK_FREE:
            pos = st[q + S.Q_POS]
            st[S.POS_ALLOC + pos] += 1
            if st[S.POS_ALLOC + pos] > max_per_pos:
                raise Fault(F_POS_LIMIT, loc, pos, max_per_pos, 0)
            st[q + S.Q_STATE + b] = S.BLK_ALLOCATED
            st[q + S.Q_ALLOC_LOC + b] = loc          # a block never freed is reported with this line
            st[q + S.Q_CURSOR] = (b + 1) % n
            return st[q + S.Q_BASE] + b * st[q + S.Q_BLKLEN], st[q + S.Q_BLKLEN]
    raise Fault(F_NO_FREE, loc, n, 0, 0)


@njit(cache=True)
def _block_of(st, q, addr, loc):
    n = st[q + S.Q_NBLK]
    if n == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    rel = addr - st[q + S.Q_BASE]
    blk = st[q + S.Q_BLKLEN]
    if rel < 0 or rel % blk != 0 or rel // blk >= n:
        raise Fault(F_NOT_BLOCK, loc, addr, 0, 0)
    return rel // blk


@instruction
def enque(st, qid, addr, loc):
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    b = _block_of(st, q, addr, loc)
    state = st[q + S.Q_STATE + b]
    if state != S.BLK_ALLOCATED and state != S.BLK_DEQUEUED:
        raise Fault(F_BAD_STATE_ENQUE, loc, state, 0, 0)
    count = st[q + S.Q_COUNT]
    if count >= st[q + S.Q_DEPTH]:
        raise Fault(F_DEPTH, loc, st[q + S.Q_DEPTH], 0, 0)
    n = st[q + S.Q_NBLK]
    st[q + S.Q_RING + (st[q + S.Q_HEAD] + count) % n] = b
    st[q + S.Q_COUNT] = count + 1
    st[q + S.Q_STATE + b] = S.BLK_ENQUEUED


@instruction
def deque(st, qid, loc):
    """The oldest enqueued block: returns (absolute address, block length in bytes)."""
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    n = st[q + S.Q_NBLK]
    if n == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    if st[q + S.Q_COUNT] == 0:
        raise Fault(F_EMPTY, loc, 0, 0, 0)
    head = st[q + S.Q_HEAD]
    b = st[q + S.Q_RING + head]
    st[q + S.Q_HEAD] = (head + 1) % n
    st[q + S.Q_COUNT] -= 1
    st[q + S.Q_STATE + b] = S.BLK_DEQUEUED
    return st[q + S.Q_BASE] + b * st[q + S.Q_BLKLEN], st[q + S.Q_BLKLEN]


@instruction
def free_tensor(st, qid, addr, loc):
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    b = _block_of(st, q, addr, loc)
    state = st[q + S.Q_STATE + b]
    if state != S.BLK_ALLOCATED and state != S.BLK_DEQUEUED:
        raise Fault(F_BAD_STATE_FREE, loc, state, 0, 0)
    st[q + S.Q_STATE + b] = S.BLK_FREE
    st[S.POS_ALLOC + st[q + S.Q_POS]] -= 1


@instruction
def queue_count(st, qid, loc):
    return st[S.QUEUE_BASE + qid * S.QUEUE_STRIDE + S.Q_COUNT]


@instruction
def queue_has_idle(st, qid, loc):
    q = S.QUEUE_BASE + qid * S.QUEUE_STRIDE
    for b in range(st[q + S.Q_NBLK]):
        if st[q + S.Q_STATE + b] == S.BLK_FREE:
            return True
    return False


@instruction
def init_tbuf(st, bid, hw, length, max_bufs, loc):
    t = S.TBUF_BASE + bid * S.TBUF_STRIDE
    if st[t + 1] != 0:
        raise Fault(F_REINIT, loc, 0, 0, 0)
    if length <= 0:
        raise Fault(F_BAD_LEN, loc, length, 0, 0)
    blk = (length + 31) // 32 * 32
    st[t] = carve_if_present(st, hw, blk, 1, max_bufs, loc)
    st[t + 1] = blk


@instruction
def tbuf_get(st, bid, nbytes, offset, loc):
    """Absolute address of ``nbytes`` at byte ``offset`` of a TBuf (nbytes -1: up to its end)."""
    t = S.TBUF_BASE + bid * S.TBUF_STRIDE
    size = st[t + 1]
    if size == 0:
        raise Fault(F_TBUF_NOT_INIT, loc, 0, 0, 0)
    check_present(st[t], loc)
    if offset % 32 != 0:
        raise Fault(F_TBUF_ALIGN, loc, offset, 0, 0)
    if nbytes < 0:
        nbytes = size - offset
    if offset < 0 or offset + nbytes > size:
        raise Fault(F_TBUF_OVER, loc, offset, nbytes, size)
    return st[t] + offset, nbytes


@instruction
def tbuf_size(st, bid, loc):
    return st[S.TBUF_BASE + bid * S.TBUF_STRIDE + 1]


@instruction
def pipe_reset(st, loc):
    """TPipe.reset(): every queue and buffer forgets its memory; allocation starts over."""
    for hw in range(S.N_HARDWARE):
        st[S.PIPE_CUR + hw] = 0
    st[S.PIPE_NBUF] = 0
    for p in range(S.N_POSITIONS):
        st[S.POS_ALLOC + p] = 0
    for i in range(S.QUEUE_BASE, S.PIPE_STATE_END):
        st[i] = 0
    for i in range(S.POOL_BASE, S.POOL_STATE_END):
        st[i] = 0


@instruction
def pop_stack_buffer(st, hw, loc):
    """``PopStackBuffer``: the memory of ``hw`` the TPipe has not handed out, as (absolute address, bytes)."""
    size = st[S.SEG_SIZE + hw]
    if size == 0:
        raise Fault(F_NO_MEM, loc, hw, 0, 0)
    cur = st[S.PIPE_CUR + hw]
    addr = st[S.SEG_BASE + hw] + cur
    if addr + size - cur > st[S.LM_DIRTY]:
        st[S.LM_DIRTY] = addr + size - cur
    return addr, size - cur
