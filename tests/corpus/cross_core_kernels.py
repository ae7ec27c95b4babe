"""Kernels shared by the cross-core corpus cases and tests/test_cross_core.py.

Each kernel takes a ``bug`` selector, so a broken variant and its corrected
twin share one compiled binary (compiling is the expensive part of a test).
Data moves between cores by DMA only: scalar GM accesses would go through
each core's DCache and need ``data_cache_clean_and_invalid``, which is not
what these kernels are about.
"""
from __future__ import annotations

import numpy as np

import npuemu.asc as asc

CHUNK = 64             # float32 elements each core sums
SLOT = 8               # float32 elements per 32-byte GM slot
MAX_CORES = 64

# ---------------------------------------------------------------------------- two-phase reduction

HARD, SOFT = 0, 1


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def reduce_kernel(x: asc.GlobalAddress, part: asc.GlobalAddress, out: asc.GlobalAddress,
                  ws: asc.GlobalAddress, barrier: int, skip: int):
    """Every core sums its chunk of ``x`` into its slot of ``part``; after a barrier block 0 adds the slots.

    ``barrier``: HARD (``sync_all()``) or SOFT (``sync_all`` through the GM
    workspace ``ws``).  Block ``skip`` (-1: none) leaves out the barrier.
    """
    idx = asc.get_block_idx()
    n = asc.get_block_num()
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + idx * CHUNK, CHUNK)
    pg = asc.GlobalTensor()
    pg.set_global_buffer(part)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, SLOT)
    wg = asc.GlobalTensor()
    wg.set_global_buffer(ws)
    pipe = asc.TPipe()
    data = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(data, MAX_CORES * SLOT * 4)
    acc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(acc, SLOT * 4)
    sync = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(sync, MAX_CORES * SLOT * 4)
    t = data.get(asc.float32)
    a = acc.get(asc.float32)
    asc.data_copy(t, xg, CHUNK)
    asc.set_flag(asc.HardEvent.MTE2_S, 0)
    asc.wait_flag(asc.HardEvent.MTE2_S, 0)
    s = 0.0
    for i in range(CHUNK):
        s += t.get_value(i)
    for i in range(SLOT):
        a.set_value(i, 0.0)
    a.set_value(0, s)
    asc.set_flag(asc.HardEvent.S_MTE3, 0)
    asc.wait_flag(asc.HardEvent.S_MTE3, 0)
    asc.data_copy(pg[idx * SLOT:], a, SLOT)
    if idx != skip:
        if barrier == HARD:
            asc.sync_all()
        else:
            asc.sync_all(wg, sync.get(asc.int32))
    if idx == 0:
        asc.data_copy(t, pg, n * SLOT)
        asc.set_flag(asc.HardEvent.MTE2_S, 0)
        asc.wait_flag(asc.HardEvent.MTE2_S, 0)
        total = 0.0
        for b in range(n):
            total += t.get_value(b * SLOT)
        a.set_value(0, total)
        asc.set_flag(asc.HardEvent.S_MTE3, 0)
        asc.wait_flag(asc.HardEvent.S_MTE3, 0)
        asc.data_copy(og, a, SLOT)


def run_reduce(cores: int, barrier: int = HARD, skip: int = -1, ws: np.ndarray | None = None,
               seed: int = 0, **launch) -> tuple[float, float]:
    """(kernel result, NumPy reference) of a reduction over ``cores`` blocks."""
    x = np.random.default_rng(seed).random(cores * CHUNK, dtype=np.float32)
    part = np.zeros(cores * SLOT, np.float32)
    out = np.zeros(SLOT, np.float32)
    if ws is None:
        ws = np.zeros(cores * SLOT, np.int32)
    reduce_kernel[cores](x, part, out, ws, barrier, skip, **launch)
    return float(out[0]), reduce_reference(x, cores)


def reduce_reference(x: np.ndarray, cores: int) -> float:
    """The kernel's sum, in its order: float32 sums of each chunk, then of the chunk sums."""
    partial = np.cumsum(x.reshape(cores, CHUNK), axis=1, dtype=np.float32)[:, -1]
    return float(np.cumsum(partial, dtype=np.float32)[-1])


# ---------------------------------------------------------------------------- AIV -> AIC -> AIV relay

UP, DOWN, PAIR, ALL_AIC, NOTE = 1, 2, 3, 4, 5    # cross-core flag ids
OK, ONE_AIV_SETS, NOTE_EACH_ROUND, WRONG_FLAG, FIX_ON_AIV, FLAG_16, MODE1_ON_AIC = range(7)


@asc.jit
def _through_ub(t: asc.LocalTensor, dst: asc.GlobalTensor, src: asc.GlobalTensor):
    """Copy one slot GM -> UB -> GM."""
    asc.data_copy(t, src, SLOT)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(dst, t, SLOT)
    asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)      # t is reloaded next round
    asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def relay_kernel(x: asc.GlobalAddress, mid: asc.GlobalAddress, y: asc.GlobalAddress, rounds: int, bug: int):
    """On every AI Core and round: AIV 0 copies a slot of ``x`` to ``mid`` and both AIVs report (flag UP,
    mode 2); the AIC waits for them and releases both AIVs (flag DOWN, mode 2); AIV 1 then copies the
    slot from ``mid`` to ``y``.  Afterwards: a mode-1 barrier of the two AIVs, a mode-0 barrier of the
    AICs, and the mix sync_all.
    """
    if asc.ascend_is_aiv():
        sub = asc.get_sub_block_idx()
        base = asc.get_block_idx() // 2 * rounds * SLOT
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x)
        mg = asc.GlobalTensor()
        mg.set_global_buffer(mid)
        yg = asc.GlobalTensor()
        yg.set_global_buffer(y)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, SLOT * 4)
        t = buf.get(asc.float32)
        for r in range(rounds):
            row = base + r * SLOT
            if sub == 0:
                _through_ub(t, mg[row:], xg[row:])
            if bug == FIX_ON_AIV:
                asc.cross_core_set_flag(UP, 2, asc.PipeID.PIPE_FIX)
            elif bug == FLAG_16:
                asc.cross_core_set_flag(UP + 15 * sub, 2, asc.PipeID.PIPE_MTE3)
            elif bug != ONE_AIV_SETS or sub == 0:
                asc.cross_core_set_flag(UP, 2, asc.PipeID.PIPE_MTE3)
            if bug == WRONG_FLAG:
                asc.cross_core_wait_flag(UP, 2)
            else:
                asc.cross_core_wait_flag(DOWN, 2)
            if sub == 1:
                _through_ub(t, yg[row:], mg[row:])
        if bug == NOTE_EACH_ROUND:
            asc.cross_core_wait_flag(NOTE, 2)
        asc.cross_core_set_flag(PAIR, 1, asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(PAIR, 1)
    else:
        for r in range(rounds):
            asc.cross_core_wait_flag(UP, 2)
            asc.cross_core_set_flag(DOWN, 2, asc.PipeID.PIPE_FIX)
            if bug == NOTE_EACH_ROUND:                  # the AIVs wait for NOTE once, after the loop
                asc.cross_core_set_flag(NOTE, 2, asc.PipeID.PIPE_FIX)
        if bug == MODE1_ON_AIC:
            asc.cross_core_set_flag(ALL_AIC, 1, asc.PipeID.PIPE_FIX)
        else:
            asc.cross_core_set_flag(ALL_AIC, 0, asc.PipeID.PIPE_FIX)
        asc.cross_core_wait_flag(ALL_AIC, 0)
    asc.sync_all(is_aiv_only=False)


def run_relay(cores: int, rounds: int, bug: int = OK, seed: int = 0, **launch) -> None:
    """Run the relay on ``cores`` AI Cores and check ``y`` against NumPy."""
    x = np.random.default_rng(seed).random(cores * rounds * SLOT, dtype=np.float32)
    mid = np.zeros_like(x)
    y = np.zeros_like(x)
    relay_kernel[cores](x, mid, y, rounds, bug, **launch)
    np.testing.assert_array_equal(y, x)


# ---------------------------------------------------------------------------- soft primitives

IN_ORDER, SKIP_NOTIFY, IB_PAIR = 0, 1, 2


@asc.jit
def order_kernel(log: asc.GlobalAddress, ws: asc.GlobalAddress, rounds: int, mode: int, skip: int):
    """IN_ORDER: every round, each AIV in block order appends its block index to ``log`` (entry 0 of
    ``log`` counts the entries; each entry is one 32-byte slot), between wait_pre_block and
    notify_next_block.  Block ``skip`` leaves out notify_next_block (SKIP_NOTIFY).

    IB_PAIR: block 0 writes a value to ``log`` and signals it with ib_set; block 1 waits for it with
    ib_wait and appends the value plus one.
    """
    idx = asc.get_block_idx()
    lg = asc.GlobalTensor()
    lg.set_global_buffer(log)
    wg = asc.GlobalTensor()
    wg.set_global_buffer(ws)
    pipe = asc.TPipe()
    wbuf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(wbuf, (MAX_CORES + 1) * SLOT * 4)
    ub = wbuf.get(asc.int32)
    cbuf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(cbuf, SLOT * 4)
    c = cbuf.get(asc.int32)
    if mode == IB_PAIR:
        if idx == 0:
            c.set_value(0, 41)
            asc.set_flag(asc.HardEvent.S_MTE3, 0)
            asc.wait_flag(asc.HardEvent.S_MTE3, 0)
            asc.data_copy(lg[SLOT:], c, SLOT)
            asc.ib_set(wg, ub, 0, 0)
        if idx == 1:
            asc.ib_wait(wg, ub, 0, 0)
            asc.data_copy(c, lg[SLOT:], SLOT)
            asc.set_flag(asc.HardEvent.MTE2_S, 0)
            asc.wait_flag(asc.HardEvent.MTE2_S, 0)
            c.set_value(0, c.get_value(0) + 1)
            asc.set_flag(asc.HardEvent.S_MTE3, 0)
            asc.wait_flag(asc.HardEvent.S_MTE3, 0)
            asc.data_copy(lg[2 * SLOT:], c, SLOT)
    else:
        asc.init_determine_compute_workspace(wg, ub)
        for r in range(rounds):
            asc.wait_pre_block(wg, ub)
            asc.data_copy(c, lg, SLOT)                 # the entry count
            asc.set_flag(asc.HardEvent.MTE2_S, 0)
            asc.wait_flag(asc.HardEvent.MTE2_S, 0)
            n = c.get_value(0)
            c.set_value(0, n + 1)
            asc.set_flag(asc.HardEvent.S_MTE3, 0)
            asc.wait_flag(asc.HardEvent.S_MTE3, 0)
            asc.data_copy(lg, c, SLOT)
            asc.set_flag(asc.HardEvent.MTE3_S, 0)
            asc.wait_flag(asc.HardEvent.MTE3_S, 0)
            c.set_value(0, idx)
            asc.set_flag(asc.HardEvent.S_MTE3, 0)
            asc.wait_flag(asc.HardEvent.S_MTE3, 0)
            asc.data_copy(lg[(n + 1) * SLOT:], c, SLOT)
            if idx != skip:
                asc.notify_next_block(wg, ub)


def run_order(cores: int, rounds: int, skip: int = -1, **launch) -> np.ndarray:
    """The block indices in the order the cores appended them."""
    log = np.zeros((cores * rounds + 1) * SLOT, np.int32)
    ws = np.zeros(cores * SLOT, np.int32)
    order_kernel[cores](log, ws, rounds, IN_ORDER if skip < 0 else SKIP_NOTIFY, skip, **launch)
    count = log[0]
    return log[SLOT:(count + 1) * SLOT:SLOT]


def run_ib_pair(**launch) -> np.ndarray:
    log = np.zeros(3 * SLOT, np.int32)
    ws = np.zeros(2 * SLOT, np.int32)
    order_kernel[2](log, ws, 0, IB_PAIR, -1, **launch)
    return log[SLOT::SLOT]
