"""Cross-core synchronisation in hardware: ``cross_core_set_flag``/``cross_core_wait_flag`` and hard
``sync_all``, and the state every cross-core primitive shares.

Hardware (Atlas A2/A3, separated architecture; asc-devkit ``CrossCoreSetFlag``,
``SyncAll`` and their ``dav_c220`` implementations):

* Every AIC and every AIV has 16 cross-core flags, each a counter that starts
  at 0 and holds at most 15.  ``cross_core_wait_flag(f)`` stalls the core
  while its counter ``f`` is 0, then decrements it.  ``cross_core_set_flag(f,
  mode, pipe)`` reports to the task scheduler once ``pipe`` has finished what
  was issued before it; the scheduler increments counters when every core the
  mode involves has reported:

  - mode 0: all cores of the setter's type in the launch; then the counter of
    every one of them goes up by one (a barrier of all AIVs, or of all AICs);
  - mode 1: the AIVs of one AI Core; then each of their counters goes up;
  - mode 2: between the AIC of an AI Core and its AIVs.  One AIC set raises
    the counter of each AIV; the AIC's counter goes up once every AIV of the
    AI Core has set.

  Only the mix kernel types start the scheduler's sync unit: mode 0 needs a
  MIX type, modes 1 and 2 need MIX_AIC_1_1 or MIX_AIC_1_2 (checked when the
  kernel compiles).  A counter past 15 is an error on hardware, and here.

* Hard ``sync_all()`` is built from those flags (ids 11-14, shared with user
  flags): the vector-only form sets flag 14 in mode 0 and waits for it; the
  mix form has every AIV set 12 (mode 2) and wait for 13, every AIC wait for
  12, set 11 (mode 0), wait for 11 and set 13 (mode 2).

The software protocols over GM workspaces (soft ``sync_all``,
``ib_set``/``ib_wait``, ``wait_pre_block``/``notify_next_block``) are in
:mod:`npuemu.isa.soft_sync`; they share the wait kinds, the progress word and
the race-checker sync objects defined here.

The state the hardware keeps outside the cores (counters, pending sets) lives
in int64 words of npuemu's system GM region, shared by every core of a launch
(layout below); cores of a blocking kernel run one at a time, so no update
races.  A wait is a *try* function: it completes the wait and returns True, or
records in ``st[WAIT_*]`` what it waits for and returns False, and the kernel
yields to the scheduler (``npuemu/runtime/scheduler.py``) and retries when
resumed.  Every change of shared state bumps the progress word: a whole round
of resumes that leaves it unchanged, with no core finishing or starting, is a
deadlock.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..language.enums import PipeID, enum_name
from . import hb
from . import state as S
from .fault import Fault, register

AIV, AIC = 0, 1
CORE_NAMES = ("AIV", "AIC")

N_FLAGS = 16
MAX_COUNT = 15

# the flags hard sync_all uses (kernel_utils_constants: SYNC_AIC_FLAG ... SYNC_AIV_ONLY_ALL)
SYNC_AIC_FLAG = 11
SYNC_AIV_FLAG = 12
SYNC_AIC_AIV_FLAG = 13
SYNC_AIV_ONLY_ALL = 14

# --------------------------------------------------------------------------- system region layout (int64 words)
PROGRESS = 0            # bumped by every change of cross-core state
AIC_BASE = 1            # launch slot of AIC block 0
N_AIC = 2
AIV_BASE = 3            # launch slot of AIV block 0
N_AIV = 4
RATIO = 5               # AIVs per AI Core (2 in MIX_AIC_1_2, else 1)
ARRIVED0 = 8            # per (core type, flag): cores of that type with a pending mode-0 set
CORES = ARRIVED0 + 2 * N_FLAGS
# per-core table at CORES + slot * CORE_WORDS, N_FLAGS words each
CNT = 0                 # the flag counters
PEND0 = CNT + N_FLAGS   # mode-0 sets issued and not yet completed by the other cores
PEND1 = PEND0 + N_FLAGS  # mode-1 sets waiting for the other AIV of the AI Core
PEND2 = PEND1 + N_FLAGS  # mode-2 sets of an AIV waiting for the other AIVs of its AI Core
SET_LOC = PEND2 + N_FLAGS  # 1 + source location of the core's last set of each flag (0: none)
CORE_WORDS = SET_LOC + N_FLAGS


# after the per-core tables: two rounds of ncores words, when each core arrived at a hard sync_all, for
# the cost model (isa/cost.py: sync_arrive / sync_depart)
ARRIVE_ROUNDS = 2
# then, per (core, flag), the cost model's times of cross-core flags: when the core last set the flag, how
# many counts it has taken, and when each count it holds was raised (a ring: a counter holds at most 15)
T_SET = 0
T_TAKEN = 1
T_RING = 2
RING = 16
TIME_WORDS = T_RING + RING


def system_bytes(ncores: int) -> int:
    """Bytes of the system region the cross-core state of ``ncores`` cores needs."""
    return (CORES + ncores * (CORE_WORDS + ARRIVE_ROUNDS + N_FLAGS * TIME_WORDS)) * 8


def init_system(words: np.ndarray, aic_base: int, n_aic: int, aiv_base: int, n_aiv: int, ratio: int) -> None:
    """Write the launch's core layout into a zeroed system region (viewed as int64)."""
    words[AIC_BASE], words[N_AIC], words[AIV_BASE], words[N_AIV], words[RATIO] = (
        aic_base, n_aic, aiv_base, n_aiv, ratio)


# what a blocked core waits for (st[WAIT_KIND]); WAIT_A.. hold the details
W_NONE = 0
W_FLAG = 1          # A = flag, B = mode named by the wait
W_SYNC_ALL = 2      # A = flag the hard sync_all waits on, B = is_aiv_only
W_SOFT_SYNC = 3     # A = sum needed, B = sum found, C = slots, D = own slot's value on arrival
W_IB_SET = 4        # A = block_idx, B = event_id, C = slot value
W_IB_WAIT = 5       # A = block_idx, B = event_id, C = slot value
W_PRE_BLOCK = 6     # A = first slot that does not match, B = value expected there, C = value found

# --------------------------------------------------------------------------- race-checker sync objects
# Sync objects of hb.release/hb.acquire.  A flag's object is named by the mode and the type of the
# cores whose counters it raises (mode 0: the setter's type; mode 1: AIV; mode 2: the other type),
# so a set and the wait it satisfies meet on the same object.  Objects are per flag, not per AI Core:
# a mode-1/2 wait also joins the clocks of other AI Cores' sets of that flag (hides, never invents, a
# race).  ib_set/ib_wait pairs hash (event, block) onto IB_OBJECTS objects.
OBJ_MODE0 = 0                       # + core type * 16 + flag
OBJ_MODE1 = OBJ_MODE0 + 2 * N_FLAGS  # + flag
OBJ_MODE2 = OBJ_MODE1 + N_FLAGS      # + receiving core type * 16 + flag
OBJ_SYNC_ALL = OBJ_MODE2 + 2 * N_FLAGS
OBJ_SOFT_SYNC = OBJ_SYNC_ALL + 1
OBJ_BLOCK_ORDER = OBJ_SOFT_SYNC + 1  # wait_pre_block / notify_next_block
OBJ_IB = 96
IB_OBJECTS = 128
assert OBJ_IB + IB_OBJECTS <= hb.MAX_SYNC_OBJECTS

# PipeID -> race-checker pipe (hb.S ...); -1: not a pipe a cross-core set may name
HB_PIPE = np.array([hb.S, hb.V, hb.M, hb.MTE1, hb.MTE2, hb.MTE3, -1, -1, -1, -1, hb.FIX], np.int64)
# PipeIDs (bit per value) a cross_core_set_flag may name on each core type
AIV_SET_PIPES = (1 << 1) | (1 << 4) | (1 << 5)                            # V, MTE2, MTE3
AIC_SET_PIPES = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | (1 << 10)     # M, MTE1, MTE2, MTE3, FIX

# --------------------------------------------------------------------------- faults (1200-1204; soft_sync: 1205-1210)
F_FLAG_ID = 1200
F_PIPE_CORE = 1201
F_OVERFLOW = 1202
F_PENDING = 1203
F_MODE1_AIC = 1204


def _core(core_type: int, block: int) -> str:
    return f"{CORE_NAMES[core_type]} {block}" if core_type in (AIV, AIC) else f"core {block}"


def _pipe(code: int) -> str:
    return enum_name(PipeID, code, "PipeID {}", qualified=True)


register({
    F_FLAG_ID: (errors.SyncError,
                lambda a, b, c, env: f"{('cross_core_set_flag', 'cross_core_wait_flag')[c]}: flag id {a} is "
                                     f"outside 0..15 (the hardware would silently use {a & 15})"),
    F_PIPE_CORE: (errors.SyncError,
                  lambda a, b, c, env: f"cross_core_set_flag(..., {_pipe(a)}): an {CORE_NAMES[b]} core has no "
                                       f"such pipe"),
    F_OVERFLOW: (errors.SyncError,
                 lambda a, b, c, env: f"cross-core flag {a} of {_core(b, c)} would count past {MAX_COUNT}: more "
                                      f"sets than waits (a counter holds at most 15 sets; the hardware reports "
                                      f"an error)"),
    F_PENDING: (errors.SyncError,
                lambda a, b, c, env: f"cross_core_set_flag(flag {a}, mode {b}): this core has set it "
                                     f"{MAX_COUNT + 1} times while the other cores of mode {b} have not "
                                     f"(a counter holds at most 15 sets)"),
    F_MODE1_AIC: (errors.SyncError,
                  lambda a, b, c, env: f"cross_core_set_flag(flag {a}, mode 1): mode 1 synchronises the AIVs of "
                                       f"one AI Core; an AIC cannot take part"),
})


# --------------------------------------------------------------------------- shared-state helpers


@njit(cache=True)
def words(sysmem):
    """The system region as the int64 words of the layout above."""
    return sysmem.view(np.int64)


@njit(cache=True)
def _at(slot, table, flag):
    return CORES + slot * CORE_WORDS + table + flag


@njit(cache=True)
def _block_of(w, slot):
    """(core type, block index) of launch slot ``slot``."""
    if w[N_AIV] > 0 and w[AIV_BASE] <= slot < w[AIV_BASE] + w[N_AIV]:
        return AIV, slot - w[AIV_BASE]
    return AIC, slot - w[AIC_BASE]


@njit(cache=True)
def times_at(w, slot, flag):
    """Word offset of the cost model's times of ``flag`` on core ``slot`` (``T_*``)."""
    ncores = w[N_AIC] + w[N_AIV]
    return CORES + ncores * (CORE_WORDS + ARRIVE_ROUNDS) + (slot * N_FLAGS + flag) * TIME_WORDS


@njit(cache=True)
def _raise_counter(w, slot, flag, loc, t):
    """One more completed set of ``flag`` for core ``slot``, completed at model time ``t``."""
    i = _at(slot, CNT, flag)
    if w[i] >= MAX_COUNT:
        ct, b = _block_of(w, slot)
        raise Fault(F_OVERFLOW, loc, flag, ct, b)
    tw = times_at(w, slot, flag)
    w[tw + T_RING + (w[tw + T_TAKEN] + w[i]) % RING] = t
    w[i] += 1


@njit(cache=True)
def _set_time(w, slot, flag):
    """When core ``slot`` last set ``flag`` (the cost model's time; 0 in binaries without it)."""
    return w[times_at(w, slot, flag) + T_SET]


@njit(cache=True)
def _pend(w, slot, table, flag, mode, loc):
    """Record a set that waits for other cores; True if the core had none pending before."""
    i = _at(slot, table, flag)
    if w[i] >= MAX_COUNT:
        raise Fault(F_PENDING, loc, flag, mode, 0)
    w[i] += 1
    return w[i] == 1


@njit(cache=True)
def _set_mode0(w, core_type, slot, flag, loc):
    """Mode 0: when every core of ``core_type`` has a set pending, all of them count one up."""
    base = w[AIV_BASE] if core_type == AIV else w[AIC_BASE]
    n = w[N_AIV] if core_type == AIV else w[N_AIC]
    arrived = ARRIVED0 + core_type * N_FLAGS + flag
    if _pend(w, slot, PEND0, flag, 0, loc):
        w[arrived] += 1
    if w[arrived] < n:
        return
    t = 0
    for k in range(n):
        t = max(t, _set_time(w, base + k, flag))
    still = 0
    for k in range(n):
        s = base + k
        w[_at(s, PEND0, flag)] -= 1
        _raise_counter(w, s, flag, loc, t)
        if w[_at(s, PEND0, flag)] > 0:
            still += 1
    w[arrived] = still


@njit(cache=True)
def _set_aiv_group(w, block, table, flag, mode, target, loc):
    """Modes 1 and 2 from an AIV: complete once every AIV of the AI Core has a set pending.

    ``target`` is the slot whose counter goes up (the AIC, mode 2), or -1 for each AIV's own (mode 1).
    """
    ratio = w[RATIO]
    first = w[AIV_BASE] + block // ratio * ratio
    _pend(w, first + block % ratio, table, flag, mode, loc)
    t = 0
    for k in range(ratio):
        if w[_at(first + k, table, flag)] == 0:
            return
        t = max(t, _set_time(w, first + k, flag))
    for k in range(ratio):
        w[_at(first + k, table, flag)] -= 1
        if target < 0:
            _raise_counter(w, first + k, flag, loc, t)
    if target >= 0:
        _raise_counter(w, target, flag, loc, t)


@njit(cache=True)
def _set(st, w, flag, mode, loc):
    """A set of ``flag`` in ``mode`` by this core (already checked)."""
    slot = st[S.CORE_SLOT]
    core_type = st[S.CORE_TYPE]
    block = st[S.BLOCK_IDX]
    w[_at(slot, SET_LOC, flag)] = loc + 1
    if mode == 0:
        _set_mode0(w, core_type, slot, flag, loc)
    elif mode == 1:
        if core_type == AIC:
            raise Fault(F_MODE1_AIC, loc, flag, 0, 0)
        _set_aiv_group(w, block, PEND1, flag, 1, -1, loc)
    elif core_type == AIC:
        ratio = w[RATIO]
        t = _set_time(w, slot, flag)
        for k in range(ratio):                          # one AIC set raises each AIV of the AI Core
            _raise_counter(w, w[AIV_BASE] + block * ratio + k, flag, loc, t)
    else:
        _set_aiv_group(w, block, PEND2, flag, 2, w[AIC_BASE] + block // w[RATIO], loc)
    w[PROGRESS] += 1


@njit(cache=True)
def _take(st, w, flag):
    """Consume one count of this core's ``flag``; False if it is 0."""
    i = _at(st[S.CORE_SLOT], CNT, flag)
    if w[i] == 0:
        return False
    w[i] -= 1
    w[PROGRESS] += 1
    return True


@njit(cache=True)
def waiting(st, kind, a, b, c, d):
    """A try function's False: record what the core waits for (``W_*``) for the scheduler's reports."""
    st[S.WAIT_KIND] = kind
    st[S.WAIT_A] = a
    st[S.WAIT_B] = b
    st[S.WAIT_C] = c
    st[S.WAIT_D] = d
    return False


@njit(cache=True)
def done(st):
    """A try function's True: the core no longer waits."""
    st[S.WAIT_KIND] = W_NONE
    return True


@njit(cache=True)
def _check_flag(flag, op, loc):
    if flag < 0 or flag >= N_FLAGS:
        raise Fault(F_FLAG_ID, loc, flag, 0, op)


# --------------------------------------------------------------------------- cross_core_set_flag / wait_flag


@instruction
def set_flag(st, sysmem, flag, mode, pipe, loc):
    """``cross_core_set_flag(flag, mode, pipe)`` (mode and pipe were checked at compile time)."""
    _check_flag(flag, 0, loc)
    core_type = st[S.CORE_TYPE]
    legal = AIV_SET_PIPES if core_type == AIV else AIC_SET_PIPES
    if (legal >> pipe) & 1 == 0:
        raise Fault(F_PIPE_CORE, loc, pipe, core_type, 0)
    _set(st, words(sysmem), flag, mode, loc)


@instruction
def try_wait_flag(st, sysmem, flag, mode, loc):
    """``cross_core_wait_flag(flag)``: True once the counter was non-zero and has been decremented.

    On A2/A3 the wait's mode and pipe have no effect (it stalls every pipe);
    ``mode`` only goes into the deadlock report.
    """
    _check_flag(flag, 1, loc)
    if _take(st, words(sysmem), flag):
        return done(st)
    return waiting(st, W_FLAG, flag, mode, 0, 0)


# --------------------------------------------------------------------------- hard sync_all


_WAIT = 3          # a step of hard sync_all that waits (the others set in mode 0 or 2)
_DONE = -1


@njit(cache=True)
def _sync_step(aiv_only, core_type, stage):
    """``(op, flag)`` of step ``stage`` of hard sync_all: op is a set mode, ``_WAIT`` or ``_DONE``."""
    if aiv_only:
        if stage == 0:
            return 0, SYNC_AIV_ONLY_ALL
        if stage == 1:
            return _WAIT, SYNC_AIV_ONLY_ALL
    elif core_type == AIV:
        if stage == 0:
            return 2, SYNC_AIV_FLAG
        if stage == 1:
            return _WAIT, SYNC_AIC_AIV_FLAG
    else:
        if stage == 0:
            return _WAIT, SYNC_AIV_FLAG
        if stage == 1:
            return 0, SYNC_AIC_FLAG
        if stage == 2:
            return _WAIT, SYNC_AIC_FLAG
        if stage == 3:
            return 2, SYNC_AIC_AIV_FLAG
    return _DONE, 0


@instruction
def try_sync_all(st, sysmem, aiv_only, loc):
    """Hard ``sync_all()``: the flag protocol of ``SyncAllImpl``, resumable at each wait.

    ``st[SYNC_STAGE]`` counts the steps done, so a retry continues where the
    last attempt stopped and never repeats a set.
    """
    w = words(sysmem)
    stage = st[S.SYNC_STAGE]
    while True:
        op, flag = _sync_step(aiv_only, st[S.CORE_TYPE], stage)
        if op == _DONE:
            break
        if op == _WAIT:
            if not _take(st, w, flag):
                st[S.SYNC_STAGE] = stage
                return waiting(st, W_SYNC_ALL, flag, aiv_only, 0, 0)
        else:
            _set(st, w, flag, op, loc)
        stage += 1
    st[S.SYNC_STAGE] = 0
    return done(st)


# --------------------------------------------------------------------------- race-checker hooks


@instruction
def flag_object(st, flag, mode, setter, loc):
    """Sync object joining a set of ``flag`` in ``mode`` and the waits it satisfies; ``loc`` is unused."""
    core_type = st[S.CORE_TYPE]
    f = flag & (N_FLAGS - 1)
    if mode == 0:
        return OBJ_MODE0 + core_type * N_FLAGS + f
    if mode == 1:
        return OBJ_MODE1 + f
    receiver = (1 - core_type) if setter else core_type
    return OBJ_MODE2 + receiver * N_FLAGS + f


@instruction
def release_pipe(st, sh, gsh, pipe, obj, loc):
    """Pipe ``pipe`` (a PipeID) of this core releases ``obj`` (a cross_core_set_flag)."""
    hb.release(st, sh, gsh, HB_PIPE[pipe], obj, loc)


@instruction
def release_all(st, sh, gsh, obj, loc):
    """Every pipe releases ``obj``: the primitive starts with a PIPE_ALL barrier."""
    for p in range(hb.N_PIPES):
        hb.release(st, sh, gsh, p, obj, loc)


@instruction
def acquire_all(st, sh, gsh, obj, loc):
    """Every pipe acquires ``obj``: on A2/A3 a cross-core wait stalls all of the core's pipes."""
    for p in range(hb.N_PIPES):
        hb.acquire(st, sh, gsh, p, obj, loc)
