"""Cross-core synchronisation in software: soft ``sync_all``, ``ib_set``/``ib_wait`` and the block order
(``init_determine_compute_workspace``, ``wait_pre_block``, ``notify_next_block``).

These are library code on hardware, not flags: protocols over a GM
workspace of 32-byte slots that the cores read and write by DMA, through a
UB workspace (asc-devkit ``SoftSyncAllImpl``, ``IBSet``/``IBWait``,
``WaitPreBlockCalc``/``NotifyNextBlockCalc`` of ``dav_c220``).  npuemu runs
exactly those protocols on the real bytes, so a workspace the kernel did not
zero or sized too small misbehaves as it would on the NPU:

* Soft ``sync_all(gm, ub, used_cores)``: a core adds 1 to its own slot, then
  polls until the slots of the ``used_cores`` cores sum to ``used_cores``
  times its own new value.  The workspace must start zeroed; garbage in it
  makes cores pass early or never.
* ``ib_set(gm, ub, b, e)`` waits until slot ``(e, b)`` of the workspace is 0
  and writes 1; ``ib_wait`` waits until it is 1 and writes 0.
* ``init_determine_compute_workspace``/``wait_pre_block``/``notify_next_block``
  serialise the AIVs in block order through one slot per core plus a round
  counter kept after the slots in the UB workspace.

AICs skip them (the hardware implementations return at once on a cube
core).  Waits are *try* functions that yield to the scheduler, and every
change bumps the progress word, as for the hardware flags
(:mod:`npuemu.isa.cross_core`, which also names their race-checker sync
objects).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import state as S
from .common import BLOCK, memmove
from .cross_core import (AIC, IB_OBJECTS, N_FLAGS, OBJ_IB, PROGRESS, W_IB_SET, W_IB_WAIT, W_PRE_BLOCK, W_SOFT_SYNC,
                         done, waiting, words)
from .fault import Fault, register

# --------------------------------------------------------------------------- faults (1205-1210; cross_core: 1200-1204)
F_GM_WS = 1205
F_UB_WS = 1206
F_USED_CORES = 1207
F_IB_BLOCK = 1208
F_IB_EVENT = 1209
F_UB_ALIGN = 1210

# primitives named by the workspace faults (their third argument)
P_SOFT_SYNC, P_IB_SET, P_IB_WAIT, P_INIT_ORDER, P_WAIT_PRE, P_NOTIFY = range(6)
PRIMITIVES = ("sync_all", "ib_set", "ib_wait", "init_determine_compute_workspace", "wait_pre_block",
              "notify_next_block")

register({
    F_GM_WS: (errors.BoundsError,
              lambda a, b, c, env: f"{PRIMITIVES[c]} needs {a} bytes of GM workspace; the gm_workspace "
                                   f"GlobalTensor has {b}"),
    F_UB_WS: (errors.BoundsError,
              lambda a, b, c, env: f"{PRIMITIVES[c]} needs {a} bytes of UB workspace; the ub_workspace "
                                   f"LocalTensor has {b}"),
    F_USED_CORES: (errors.ParamRangeError,
                   lambda a, b, c, env: f"sync_all: used_cores = {a} is outside [0, {b}] (at most "
                                        f"get_block_num() * get_task_ratio() cores)"),
    F_IB_BLOCK: (errors.ParamRangeError,
                 lambda a, b, c, env: f"{PRIMITIVES[c]}: block_idx {a} is outside [0, {b})"),
    F_IB_EVENT: (errors.ParamRangeError,
                 lambda a, b, c, env: f"{PRIMITIVES[c]}: event_id {a} is negative"),
    F_UB_ALIGN: (errors.AlignmentError,
                 lambda a, b, c, env: f"{PRIMITIVES[c]}: the ub_workspace address {a} is not 32-byte aligned"),
})


# --------------------------------------------------------------------------- GM / UB workspaces


@njit(cache=True)
def _i32(mem, at):
    return np.int64(mem[at:at + 4].view(np.int32)[0])


@njit(cache=True)
def _put_i32(mem, at, value):
    mem[at:at + 4].view(np.int32)[0] = np.int32(value)


@njit(cache=True)
def _check_ws(g, off, size, gm_bytes, ub, ub_len, ub_bytes, prim, loc):
    """The GM workspace (int32 GlobalTensor) and UB workspace (int32 LocalTensor) are big enough."""
    have = size * 4 if size >= 0 else g.size - off
    if off + have > g.size:
        have = g.size - off
    if gm_bytes > have:
        raise Fault(F_GM_WS, loc, gm_bytes, max(have, 0), prim)
    if ub % BLOCK != 0:
        raise Fault(F_UB_ALIGN, loc, ub, 0, prim)
    if ub_bytes > ub_len * 4:
        raise Fault(F_UB_WS, loc, ub_bytes, ub_len * 4, prim)


@njit(cache=True)
def _slot_sum(lm, ub, n, skip):
    total = 0
    for i in range(n):
        if i != skip:
            total += _i32(lm, ub + i * BLOCK)
    return total


# --------------------------------------------------------------------------- soft sync_all


@instruction
def try_soft_sync_all(st, lm, g, off, size, ub, ub_len, used_cores, aiv_only, sysmem, loc):
    """Soft ``sync_all(gm_workspace, ub_workspace, used_cores)`` (``SoftSyncAllImpl``).

    Arrival (first call): read this core's 32-byte slot, add one, write it
    back.  Every call: copy the workspace into UB and sum the slots; done when
    the sum reaches ``slots * own value``.  A core whose slot held 0 (its
    first sync) counts itself as 1 and rewrites its slot with 1 on every poll.
    """
    if st[S.CORE_TYPE] == AIC:
        return True
    w = words(sysmem)
    task_ratio = st[S.SUB_BLOCK_NUM]
    limit = st[S.BLOCK_NUM] * task_ratio
    slots = used_cores
    if used_cores == 0:
        slots = st[S.BLOCK_NUM] if aiv_only else limit
    me = st[S.BLOCK_IDX]
    mine = off + me * BLOCK
    if st[S.SOFT_STAGE] == 0:
        if used_cores < 0 or used_cores > limit:
            raise Fault(F_USED_CORES, loc, used_cores, limit, 0)
        need = max(slots, me + 1) * BLOCK
        _check_ws(g, off, size, need, ub, ub_len, need, P_SOFT_SYNC, loc)
        before = _i32(g, mine)
        st[S.SOFT_ROUND] = before + 1
        st[S.SOFT_FIRST] = before == 0
        _put_i32(lm, ub + me * BLOCK, before + 1)
        memmove(g, mine, lm, ub + me * BLOCK, BLOCK)
        st[S.SOFT_STAGE] = 1
        w[PROGRESS] += 1
    memmove(lm, ub, g, off, slots * BLOCK)
    if st[S.SOFT_FIRST]:
        if _i32(g, mine) != 1:                           # the hardware re-asserts its slot each poll
            w[PROGRESS] += 1
        _put_i32(lm, ub + me * BLOCK, 1)
        memmove(g, mine, lm, ub + me * BLOCK, BLOCK)
        count = 1 + _slot_sum(lm, ub, slots, me)
    else:
        count = _slot_sum(lm, ub, slots, -1)
    need = slots * st[S.SOFT_ROUND]
    if count >= need:
        st[S.SOFT_STAGE] = 0
        st[S.SOFT_DONE] += 1
        w[PROGRESS] += 1
        return done(st)
    return waiting(st, W_SOFT_SYNC, need, count, slots, st[S.SOFT_ROUND] - 1)


# --------------------------------------------------------------------------- ib_set / ib_wait


@njit(cache=True)
def _ib_slot(st, g, off, size, ub, ub_len, block, event, aiv_only, prim, loc):
    """Byte offset in ``g`` of slot (event, block) after checking the arguments and workspaces."""
    n = st[S.BLOCK_NUM] * (1 if aiv_only else 2)
    if block < 0 or block >= n:
        raise Fault(F_IB_BLOCK, loc, block, n, prim)
    if event < 0:
        raise Fault(F_IB_EVENT, loc, event, 0, prim)
    rel = (n * event + block) * BLOCK
    _check_ws(g, off, size, rel + BLOCK, ub, ub_len, BLOCK, prim, loc)
    return off + rel


@njit(cache=True)
def _try_ib(st, lm, g, off, size, ub, ub_len, block, event, aiv_only, sysmem, expect, write, prim, kind, loc):
    if st[S.CORE_TYPE] == AIC:
        return True
    at = _ib_slot(st, g, off, size, ub, ub_len, block, event, aiv_only, prim, loc)
    memmove(lm, ub, g, at, BLOCK)
    value = _i32(lm, ub)
    if value != expect:
        return waiting(st, kind, block, event, value, 0)
    _put_i32(lm, ub, write)
    memmove(g, at, lm, ub, BLOCK)
    words(sysmem)[PROGRESS] += 1
    return done(st)


@instruction
def try_ib_set(st, lm, g, off, size, ub, ub_len, block, event, aiv_only, sysmem, loc):
    """``ib_set``: wait until slot (event, block) is 0, then write 1."""
    return _try_ib(st, lm, g, off, size, ub, ub_len, block, event, aiv_only, sysmem, 0, 1, P_IB_SET,
                   W_IB_SET, loc)


@instruction
def try_ib_wait(st, lm, g, off, size, ub, ub_len, block, event, aiv_only, sysmem, loc):
    """``ib_wait``: wait until slot (event, block) is 1, then write 0."""
    return _try_ib(st, lm, g, off, size, ub, ub_len, block, event, aiv_only, sysmem, 1, 0, P_IB_WAIT,
                   W_IB_WAIT, loc)


@instruction
def ib_object(block, event, loc):
    """Race-checker object of the ib_set/ib_wait pair (block, event); ``loc`` is unused."""
    return OBJ_IB + (event * N_FLAGS + block) % IB_OBJECTS


# --------------------------------------------------------------------------- block-order primitives


@njit(cache=True)
def _order_ws(st, g, off, size, ub, ub_len, prim, loc):
    """Check the workspaces of the block-order primitives; return the UB offset of the round counter."""
    n = st[S.BLOCK_NUM]
    _check_ws(g, off, size, n * BLOCK, ub, ub_len, n * BLOCK + BLOCK, prim, loc)
    return ub + n * BLOCK


@instruction
def init_determine_compute_workspace(st, lm, g, off, size, ub, ub_len, sysmem, loc):
    """Block 0 zeroes the GM slots; every AIV starts its round counter (in UB) at 1."""
    if st[S.CORE_TYPE] == AIC:
        return
    counter = _order_ws(st, g, off, size, ub, ub_len, P_INIT_ORDER, loc)
    n = st[S.BLOCK_NUM]
    if st[S.BLOCK_IDX] == 0:
        lm[ub:ub + n * BLOCK] = 0
        memmove(g, off, lm, ub, n * BLOCK)
        words(sysmem)[PROGRESS] += 1
    _put_i32(lm, counter, 1)


@instruction
def try_wait_pre_block(st, lm, g, off, size, ub, ub_len, sysmem, loc):
    """``wait_pre_block``: slots before this block hold the round number, the others 0."""
    if st[S.CORE_TYPE] == AIC:
        return True
    counter = _order_ws(st, g, off, size, ub, ub_len, P_WAIT_PRE, loc)
    n = st[S.BLOCK_NUM]
    me = st[S.BLOCK_IDX]
    rnd = _i32(lm, counter)
    memmove(lm, ub, g, off, n * BLOCK)
    for i in range(n):
        expect = rnd if i < me else 0
        found = _i32(lm, ub + i * BLOCK)
        if found != expect:
            return waiting(st, W_PRE_BLOCK, i, expect, found, rnd)
    words(sysmem)[PROGRESS] += 1
    return done(st)


@instruction
def notify_next_block(st, lm, g, off, size, ub, ub_len, sysmem, loc):
    """``notify_next_block``: write the round number into this block's slot (the last block zeroes
    every slot instead), then count the round up."""
    if st[S.CORE_TYPE] == AIC:
        return
    counter = _order_ws(st, g, off, size, ub, ub_len, P_NOTIFY, loc)
    n = st[S.BLOCK_NUM]
    me = st[S.BLOCK_IDX]
    rnd = _i32(lm, counter)
    if me + 1 == n:
        lm[ub:ub + n * BLOCK] = 0
        memmove(g, off, lm, ub, n * BLOCK)
    else:
        slot = ub + me * BLOCK
        for k in range(BLOCK // 4):
            _put_i32(lm, slot + 4 * k, rnd)
        memmove(g, off + me * BLOCK, lm, slot, BLOCK)
    _put_i32(lm, counter, rnd + 1)
    words(sysmem)[PROGRESS] += 1
