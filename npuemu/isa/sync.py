"""Intra-core synchronisation: ``set_flag``/``wait_flag``, barriers and TPipe's event ids.

On hardware a core's scalar unit issues instructions into one in-order queue
per pipe (S, V, M, MTE1, MTE2, MTE3, FIX) and the queues run in parallel.
``set_flag(HardEvent.X_Y, id)`` sets flag (X_Y, id) once pipe X has finished
everything issued before it; ``wait_flag`` stalls pipe Y until the flag is set
and then clears it.  npuemu executes instructions in program order, so these
calls order nothing here; at check level ``full`` they move the pipes' vector
clocks (:mod:`npuemu.isa.hb`), which is how the race checker knows what they
order.  What they can get wrong themselves is checked at every level:

* the event id is 0..7;
* the event pair exists on the core type (AIV: pipes S, V, MTE2, MTE3; AIC:
  M, MTE1, MTE2, MTE3, FIX; tables ``AIV_EVENTS``/``AIC_EVENTS``);
* a flag is not set twice without a wait in between (undefined behaviour; it
  hangs at a later barrier);
* ``wait_flag`` finds its flag set.  In program order every set_flag that
  could satisfy a wait has already been issued, so a wait on a clear flag
  can never be satisfied: the pipe would stall forever;
* no flag is left set when the kernel ends (leftover state corrupts the next
  kernel on the core);
* ``pipe_barrier`` names a pipe the core has (never PIPE_S).

The flag table is ``st[FLAGS + event * N_EVENT_IDS + id]`` (1 = set) with the
source-location id of the set_flag that set it in the same slot of
``FLAG_LOC``; a fault for a flag left set points at that set_flag.

TPipe's event ids (``alloc_event_id``, ``fetch_event_id``,
``release_event_id``) come from a pool of the 8 ids of each HardEvent:
``alloc`` takes the lowest free id, ``fetch`` names it without taking it and
``release`` gives an id back.  A pool with no free id, or the release of an
id that is not allocated, is a SyncError (the library asserts on both).
The ids TQue's implicit flags take from the same pool on hardware are not
counted here.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..language.enums import HardEvent, MemDsbT, PipeID, enum_name
from . import state as S
from .fault import Fault, register

F_EVENT_ID = 700
F_EVENT_PAIR = 701
F_DOUBLE_SET = 702
F_WAIT_UNSET = 703
F_FLAG_LEFT = 704
F_PIPE_S = 705
F_PIPE_CORE = 706
F_BAD_PIPE = 707
F_BAD_EVENT = 708
F_BAD_DSB = 709
F_POOL_EMPTY = 720
F_POOL_NOT_HELD = 721
F_POOL_ID = 722

AIV, AIC = 0, 1
CORE_NAMES = ("AIV", "AIC")


def _mask(*names: str) -> int:
    return sum(1 << int(HardEvent[n]) for n in names)


# Legal SetFlag/WaitFlag pairs on Atlas A2/A3 (ascend-c.md §2.6, tables 2 and 3)
AIV_EVENTS = _mask("S_V", "S_MTE2", "S_MTE3", "V_S", "V_MTE2", "V_MTE3", "MTE2_S", "MTE2_V", "MTE2_MTE3",
                   "MTE3_S", "MTE3_V", "MTE3_MTE2")
AIC_EVENTS = _mask("M_MTE1", "M_MTE2", "M_FIX", "MTE1_M", "MTE1_MTE2", "MTE1_MTE3", "MTE1_FIX", "MTE2_M",
                   "MTE2_MTE1", "MTE2_MTE3", "MTE3_MTE1", "MTE3_MTE2", "FIX_M", "FIX_MTE1")

# Pipes a PipeBarrier may name, per core type (PIPE_ALL on both)
AIV_PIPES = sum(1 << int(p) for p in (PipeID.PIPE_V, PipeID.PIPE_MTE2, PipeID.PIPE_MTE3, PipeID.PIPE_ALL))
AIC_PIPES = sum(1 << int(p) for p in (PipeID.PIPE_M, PipeID.PIPE_MTE1, PipeID.PIPE_MTE2, PipeID.PIPE_MTE3,
                                      PipeID.PIPE_FIX, PipeID.PIPE_ALL))

N_PIPES = len(PipeID)
PIPE_S = int(PipeID.PIPE_S)
N_DSB = len(MemDsbT)


def event_name(code: int) -> str:
    return enum_name(HardEvent, code, "HardEvent {}", qualified=True)


def pipe_name(code: int) -> str:
    return enum_name(PipeID, code, "PipeID {}", qualified=True)


def legal_events(core: int) -> str:
    mask = AIV_EVENTS if core == AIV else AIC_EVENTS
    return ", ".join(e.name for e in HardEvent if (mask >> int(e)) & 1)


def _op(c: int) -> str:
    return ("set_flag", "wait_flag")[c]


register({
    F_EVENT_ID: (errors.SyncError,
                 lambda a, b, c, env: f"{_op(c)}({event_name(b)}, {a}): event id {a} is outside 0..7"),
    F_EVENT_PAIR: (errors.SyncError,
                   lambda a, b, c, env: f"{_op(c)}({event_name(a)}, ...): {HardEvent(a).name} is not an event "
                                        f"pair of an {CORE_NAMES[b]} core (legal on {CORE_NAMES[b]}: "
                                        f"{legal_events(b)})"),
    F_DOUBLE_SET: (errors.SyncError,
                   lambda a, b, c, env: f"set_flag({event_name(a)}, {b}) while that flag is still set: set "
                                        f"twice without a wait_flag in between (undefined behaviour; hangs "
                                        f"at a later barrier on hardware)"),
    F_WAIT_UNSET: (errors.SyncError,
                   lambda a, b, c, env: f"wait_flag({event_name(a)}, {b}) waits for a flag no earlier set_flag "
                                        f"left set: on hardware the pipe waits forever"),
    F_FLAG_LEFT: (errors.SyncError,
                  lambda a, b, c, env: f"the kernel ends with flag ({event_name(a)}, {b}) still set by this "
                                       f"set_flag and never waited for; leftover flags corrupt later kernels "
                                       f"on hardware"),
    F_PIPE_S: (errors.SyncError,
               lambda a, b, c, env: "pipe_barrier(PipeID.PIPE_S) is not allowed: the scalar pipe is in order"),
    F_PIPE_CORE: (errors.SyncError,
                  lambda a, b, c, env: f"pipe_barrier({pipe_name(a)}): an {CORE_NAMES[b]} core has no such pipe"),
    F_BAD_PIPE: (errors.SyncError, lambda a, b, c, env: f"pipe_barrier: {a} is not a PipeID"),
    F_BAD_EVENT: (errors.SyncError, lambda a, b, c, env: f"{_op(c)}: {a} is not a HardEvent"),
    F_BAD_DSB: (errors.SyncError, lambda a, b, c, env: f"data_sync_barrier: {a} is not a MemDsbT"),
    F_POOL_EMPTY: (errors.SyncError,
                   lambda a, b, c, env: f"{('alloc_event_id', 'fetch_event_id')[c]}({event_name(a)}): all "
                                        f"{S.N_EVENT_IDS} event ids of {HardEvent(a).name} are allocated "
                                        f"(release_event_id the ones you are done with)"),
    F_POOL_NOT_HELD: (errors.SyncError,
                      lambda a, b, c, env: f"release_event_id({b}, {event_name(a)}): id {b} of "
                                           f"{HardEvent(a).name} is not allocated (released twice, or never "
                                           f"taken with alloc_event_id)"),
    F_POOL_ID: (errors.SyncError,
                lambda a, b, c, env: f"release_event_id({b}, {event_name(a)}): event id {b} is outside 0..7"),
})


@njit(cache=True)
def _flag_slot(st, event, event_id, op, loc):
    """Index of flag (event, event_id) in the flag table, after checking both are legal on this core."""
    if event < 0 or event >= S.N_EVENTS:
        raise Fault(F_BAD_EVENT, loc, event, 0, op)
    if event_id < 0 or event_id >= S.N_EVENT_IDS:
        raise Fault(F_EVENT_ID, loc, event_id, event, op)
    core = st[S.CORE_TYPE]
    legal = AIV_EVENTS if core == AIV else AIC_EVENTS
    if (legal >> event) & 1 == 0:
        raise Fault(F_EVENT_PAIR, loc, event, core, op)
    return event * S.N_EVENT_IDS + event_id


@instruction
def set_flag(st, event, event_id, loc):
    """``set_flag(HardEvent(event), event_id)``."""
    i = _flag_slot(st, event, event_id, 0, loc)
    if st[S.FLAGS + i] != 0:
        raise Fault(F_DOUBLE_SET, loc, event, event_id, 0)
    st[S.FLAGS + i] = 1
    st[S.FLAG_LOC + i] = loc


@instruction
def wait_flag(st, event, event_id, loc):
    """``wait_flag(HardEvent(event), event_id)``: consumes the flag."""
    i = _flag_slot(st, event, event_id, 1, loc)
    if st[S.FLAGS + i] == 0:
        raise Fault(F_WAIT_UNSET, loc, event, event_id, 0)
    st[S.FLAGS + i] = 0


@instruction
def check_flags_clear(st):
    """At kernel end: no flag may be left set (the fault points at the set_flag)."""
    for i in range(S.N_EVENTS * S.N_EVENT_IDS):
        if st[S.FLAGS + i] != 0:
            raise Fault(F_FLAG_LEFT, st[S.FLAG_LOC + i], i // S.N_EVENT_IDS, i % S.N_EVENT_IDS, 0)


@instruction
def pipe_barrier(st, pipe, loc):
    """``pipe_barrier(PipeID(pipe))``: execution is already in order; check the pipe exists here."""
    if pipe < 0 or pipe >= N_PIPES:
        raise Fault(F_BAD_PIPE, loc, pipe, 0, 0)
    if pipe == PIPE_S:
        raise Fault(F_PIPE_S, loc, pipe, 0, 0)
    core = st[S.CORE_TYPE]
    legal = AIV_PIPES if core == AIV else AIC_PIPES
    if (legal >> pipe) & 1 == 0:
        raise Fault(F_PIPE_CORE, loc, pipe, core, 0)


@instruction
def data_sync_barrier(st, arg, loc):
    """``data_sync_barrier(MemDsbT(arg))``: memory accesses complete at issue here; check the argument."""
    if arg < 0 or arg >= N_DSB:
        raise Fault(F_BAD_DSB, loc, arg, 0, 0)


# --------------------------------------------------------------------------- TPipe event-id pool


@njit(cache=True)
def _free_id(st, event):
    """The lowest id of ``event`` not allocated, or N_EVENT_IDS."""
    held = st[S.EVENT_POOL + event]
    for i in range(S.N_EVENT_IDS):
        if (held >> i) & 1 == 0:
            return i
    return S.N_EVENT_IDS


@instruction
def alloc_event_id(st, event, loc):
    """``TPipe.alloc_event_id(event)``: take the lowest free id of ``event``."""
    if event < 0 or event >= S.N_EVENTS:
        raise Fault(F_BAD_EVENT, loc, event, 0, 0)
    i = _free_id(st, event)
    if i >= S.N_EVENT_IDS:
        raise Fault(F_POOL_EMPTY, loc, event, 0, 0)
    st[S.EVENT_POOL + event] |= 1 << i
    return np.int64(i)


@instruction
def fetch_event_id(st, event, loc):
    """``TPipe.fetch_event_id(event)``: the id alloc_event_id would take, left free."""
    if event < 0 or event >= S.N_EVENTS:
        raise Fault(F_BAD_EVENT, loc, event, 0, 0)
    i = _free_id(st, event)
    if i >= S.N_EVENT_IDS:
        raise Fault(F_POOL_EMPTY, loc, event, 0, 1)
    return np.int64(i)


@instruction
def release_event_id(st, event, event_id, loc):
    """``TPipe.release_event_id(id, event)``: give an allocated id back to the pool."""
    if event < 0 or event >= S.N_EVENTS:
        raise Fault(F_BAD_EVENT, loc, event, 0, 0)
    if event_id < 0 or event_id >= S.N_EVENT_IDS:
        raise Fault(F_POOL_ID, loc, event, event_id, 0)
    if (st[S.EVENT_POOL + event] >> event_id) & 1 == 0:
        raise Fault(F_POOL_NOT_HELD, loc, event, event_id, 0)
    st[S.EVENT_POOL + event] &= ~(np.int64(1) << event_id)
