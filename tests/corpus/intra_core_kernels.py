"""Kernels shared by the intra-core corpus cases (races, flags, event ids, queues).

Each kernel takes a ``case`` selector and a ``fixed`` switch, so every broken
variant and its corrected twin share one compiled binary per check level
(compiling is the expensive part of a test).  One core, ``N`` float32
elements; ``x`` and ``z`` hold ``2 * N``.
"""
from __future__ import annotations

import numpy as np

import npuemu
import npuemu.asc as asc

N = 64

# ---------------------------------------------------------------------------- races in UB

RAW_MTE2_V = 1          # the vector op reads a tile before the MTE2 copy is synced
RAW_V_MTE3 = 2          # the copy-out reads the vector result before V_MTE3
WAR_REUSE = 3           # MTE2 reloads a tile MTE3 is still copying out
WAW = 4                 # MTE2 overwrites what the vector unit is still writing
SCALAR_WRITE = 5        # set_value, then a vector read without S_V
UNINIT = 6              # the vector op reads more than was copied in
BARRIER_ONE_PIPE = 7    # pipe_barrier(PIPE_V) does not order MTE2 before V
SCALAR_READ = 8         # get_value of a tile before MTE2_S
UNINIT_GM = 9           # z is an uninitialised workspace: read back a half the kernel has not written


@asc.jit
def ub_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, case: int, fixed: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2 * N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 2 * N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 2 * N * 4)
    t = buf.get_with_offset(N, 0, asc.float32)
    u = buf.get_with_offset(N, N * 4, asc.float32)
    if case == RAW_MTE2_V or case == RAW_V_MTE3:
        asc.data_copy(t, xg, N)
        if case != RAW_MTE2_V or fixed:
            asc.set_flag(asc.HardEvent.MTE2_V, 0)
            asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.adds(u, t, 1.0, N)
        if case != RAW_V_MTE3 or fixed:
            asc.set_flag(asc.HardEvent.V_MTE3, 0)
            asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg, u, N)
    if case == WAR_REUSE:
        for i in range(2):
            if i > 0 and fixed:
                asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
                asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
            asc.data_copy(t, xg[i * N:], N)
            asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
            asc.data_copy(zg[i * N:], t, N)
    if case == WAW:
        asc.duplicate(t, 0.0, N)
        if fixed:
            asc.set_flag(asc.HardEvent.V_MTE2, 0)
            asc.wait_flag(asc.HardEvent.V_MTE2, 0)
        asc.data_copy(t, xg, N // 2)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(zg, t, N)
    if case == SCALAR_WRITE:
        for i in range(N):
            t.set_value(i, i * 2.0)
        if fixed:
            asc.set_flag(asc.HardEvent.S_V, 0)
            asc.wait_flag(asc.HardEvent.S_V, 0)
        asc.adds(u, t, 1.0, N)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg, u, N)
    if case == UNINIT:
        asc.data_copy(t, xg, N if fixed else N // 2)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.adds(u, t, 1.0, N)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg, u, N)
    if case == BARRIER_ONE_PIPE:
        asc.data_copy(t, xg, N)
        if fixed:
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        else:
            asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.adds(u, t, 1.0, N)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(zg, u, N)
    if case == SCALAR_READ:
        asc.data_copy(t, xg, N)
        if fixed:
            asc.set_flag(asc.HardEvent.MTE2_S, 0)
            asc.wait_flag(asc.HardEvent.MTE2_S, 0)
        u.set_value(0, t.get_value(3) * 2.0)
        for i in range(1, 8):
            u.set_value(i, 0.0)
        asc.set_flag(asc.HardEvent.S_MTE3, 0)
        asc.wait_flag(asc.HardEvent.S_MTE3, 0)
        asc.data_copy(zg, u, 8)
    if case == UNINIT_GM:
        asc.data_copy(t, xg, N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(zg, t, N)                     # z[0:N] = x[0:N]
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
        if fixed:
            asc.data_copy(u, zg, N)
        else:
            asc.data_copy(u, zg[N:], N)             # z[N:2N]: nothing has written it yet
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.adds(u, u, 1.0, N)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(zg[N:], u, N)


def ub_expected(case: int, x: np.ndarray) -> np.ndarray:
    """What the corrected twin of ``case`` leaves in ``z`` (zeros where it writes nothing)."""
    z = np.zeros(2 * N, np.float32)
    if case in (RAW_MTE2_V, RAW_V_MTE3, UNINIT, BARRIER_ONE_PIPE):
        z[:N] = x[:N] + 1
    elif case == WAR_REUSE:
        z[:] = x
    elif case == WAW:
        z[:N // 2] = x[:N // 2]
    elif case == SCALAR_WRITE:
        z[:N] = np.arange(N, dtype=np.float32) * 2 + 1
    elif case == SCALAR_READ:
        z[0] = x[3] * 2
    elif case == UNINIT_GM:
        z[:N], z[N:] = x[:N], x[:N] + 1
    return z


def run_ub(case: int, fixed: bool, **launch) -> np.ndarray:
    x = (np.arange(2 * N, dtype=np.float32) - 20) * 0.5
    z = np.zeros(2 * N, np.float32)
    out = npuemu.gm_buffer(z, initialized=False) if case == UNINIT_GM else z
    ub_kernel[1](x, out, case, int(fixed), **launch)
    if fixed:
        np.testing.assert_array_equal(z, ub_expected(case, x))
    return z


# ---------------------------------------------------------------------------- flags, event ids, queues

SET_TWICE = 1           # set_flag twice without a wait_flag
WAIT_NEVER_SET = 2      # a wait_flag no set_flag satisfies
LEFT_SET = 3            # a flag still set at kernel end
ILLEGAL_PAIR = 4        # a cube event pair on a vector core
ID_RANGE = 5            # event id 8
POOL_EXHAUSTED = 6      # alloc_event_id without release_event_id, nine times
RELEASE_TWICE = 7       # release_event_id of an id already given back
QUEUE_NO_FREE = 8       # alloc_tensor from a one-buffer queue whose buffer is never freed
QUEUE_EMPTY = 9         # deque with nothing enqueued


@asc.jit
def flag_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, case: int, fixed: int):
    """Copies ``x`` to ``z`` tile by tile (two tiles of ``N``), with the mistake ``case`` unless ``fixed``."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2 * N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 2 * N)
    pipe = asc.TPipe()
    q = asc.TQueBind(asc.TPosition.VECIN, asc.TPosition.VECOUT, 1)      # MTE2 -> MTE3
    pipe.init_buffer(q, 1, N * 4)
    event_id = 0
    for i in range(2):
        t = q.alloc_tensor(asc.float32)
        asc.data_copy(t, xg[i * N:], N)
        if case == QUEUE_EMPTY and not fixed:
            u = q.deque(asc.float32)                # forgot the enque
        else:
            q.enque(t)
            u = q.deque(asc.float32)
        asc.data_copy(zg[i * N:], u, N)
        if case != QUEUE_NO_FREE or fixed:
            q.free_tensor(u)
        if case == ID_RANGE and not fixed:
            event_id = 8
        if case == POOL_EXHAUSTED or case == RELEASE_TWICE:
            for j in range(5):                      # two tiles x five ids: more than the 8 of MTE3_S
                event_id = pipe.alloc_event_id(asc.HardEvent.MTE3_S)
                asc.set_flag(asc.HardEvent.MTE3_S, event_id)
                asc.wait_flag(asc.HardEvent.MTE3_S, event_id)
                if fixed or case == RELEASE_TWICE:
                    pipe.release_event_id(event_id, asc.HardEvent.MTE3_S)
            if case == RELEASE_TWICE and not fixed:
                pipe.release_event_id(event_id, asc.HardEvent.MTE3_S)
            event_id = 0
        asc.set_flag(asc.HardEvent.MTE3_S, event_id)
        if case == SET_TWICE and not fixed:
            asc.set_flag(asc.HardEvent.MTE3_S, event_id)
        asc.wait_flag(asc.HardEvent.MTE3_S, event_id)
        if case == WAIT_NEVER_SET and not fixed:
            asc.wait_flag(asc.HardEvent.MTE3_S, event_id)
    if case == LEFT_SET:
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 1)
        if fixed:
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 1)
    if case == ILLEGAL_PAIR:
        if fixed:
            asc.set_flag(asc.HardEvent.MTE3_MTE2, 2)
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 2)
        else:
            asc.set_flag(asc.HardEvent.FIX_MTE1, 2)
            asc.wait_flag(asc.HardEvent.FIX_MTE1, 2)


def run_flags(case: int, fixed: bool, **launch) -> np.ndarray:
    x = np.arange(2 * N, dtype=np.float32) * 3 - 7
    z = np.zeros(2 * N, np.float32)
    flag_kernel[1](x, z, case, int(fixed), **launch)
    if fixed:
        np.testing.assert_array_equal(z, x)
    return z


# ---------------------------------------------------------------------------- GM shared by two cores


@asc.jit
def split_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, fixed: int):
    """Two cores copy their half of ``x`` to ``z``; the broken output slice starts at ``idx * (N - 8)``,
    overlapping the other core's by 8 elements.  The cores never synchronise."""
    idx = asc.get_block_idx()
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2 * N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 2 * N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, N * 4)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg[idx * N:], N)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg[idx * (N if fixed else N - 8):], t, N)


def run_split(fixed: bool, **launch) -> np.ndarray:
    x = np.arange(2 * N, dtype=np.float32) + 1
    z = np.zeros(2 * N, np.float32)
    split_kernel[2](x, z, int(fixed), **launch)
    if fixed:
        np.testing.assert_array_equal(z, x)
    return z


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def handoff_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, fixed: int):
    """Core 0 copies ``x[:N]`` to ``z[:N]``; core 1 then copies ``z[:N]`` to ``z[N:]`` (after a
    ``sync_all`` only when ``fixed``)."""
    idx = asc.get_block_idx()
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 2 * N)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 2 * N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, N * 4)
    t = buf.get(asc.float32)
    if idx == 0:
        asc.data_copy(t, xg, N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(zg, t, N)
    if fixed:
        asc.sync_all()
    if idx == 1:
        asc.data_copy(t, zg, N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(zg[N:], t, N)


def run_handoff(fixed: bool, **launch) -> np.ndarray:
    x = np.arange(2 * N, dtype=np.float32) + 1
    z = np.zeros(2 * N, np.float32)
    handoff_kernel[2](x, z, int(fixed), **launch)
    if fixed:
        np.testing.assert_array_equal(z, np.concatenate([x[:N], x[:N]]))
    return z
