"""System registers and pointers of a core: the system counter, ``trap``, the system workspace and
the HCCL contexts.

* ``get_system_cycle`` in a binary built with ``profile=True`` reads the cost
  model's clock (the scalar unit's issue time) at the platform's
  system-counter rate (50 MHz on Atlas A2/A3); elsewhere it reads the host's
  monotonic clock at that rate, which measures emulation time.
* ``set_sys_workspace``/``set_hccl_context`` store a GM pointer in the core's
  state words (region id + 1, 0 meaning never set, and the byte offset);
  ``get_sys_workspace``/``get_hccl_context`` read it back.  Reading a pointer
  nothing set is a fault: the device would hand out a null pointer.

Fault codes 1900-1999.
"""
from __future__ import annotations

import sys

import numpy as np

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import errors
from . import state as S
from .fault import Fault, register

F_TRAP = 1900
F_SYS_WORKSPACE_UNSET = 1901
F_HCCL_INDEX = 1902
F_HCCL_UNSET = 1903

HCCL_CONTEXTS = 2          # HCCL_GROUP_ID_NUM: contexts a kernel can hold (assumed from Ascend C's hccl headers)

register({
    F_TRAP: (errors.TrapError, lambda a, b, c, env: "trap() stopped the core (Ascend C Trap)"),
    F_SYS_WORKSPACE_UNSET: (errors.NullPointerError,
                            lambda a, b, c, env: "get_sys_workspace() before any set_sys_workspace(): the device "
                                                 "returns a null pointer; call set_sys_workspace(workspace) first"),
    F_HCCL_INDEX: (errors.ParamRangeError,
                   lambda a, b, c, env: f"HCCL context index {a} is outside [0, {b})"),
    F_HCCL_UNSET: (errors.NullPointerError,
                   lambda a, b, c, env: f"get_hccl_context({a}) before set_hccl_context({a}, ...): the device "
                                        f"returns a null pointer"),
})

_CLOCK_MONOTONIC = 6 if sys.platform == "darwin" else 1


@intrinsic
def _monotonic_ns(typingctx):
    """``clock_gettime(CLOCK_MONOTONIC)`` in nanoseconds."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        timespec = ir.LiteralStructType([i64, i64])
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, [i32, timespec.as_pointer()]),
                                            "clock_gettime")
        ts = cgutils.alloca_once(builder, timespec)
        builder.call(fn, [i32(_CLOCK_MONOTONIC), ts])
        sec = builder.load(builder.gep(ts, [i32(0), i32(0)]))
        nsec = builder.load(builder.gep(ts, [i32(0), i32(1)]))
        return builder.add(builder.mul(sec, i64(1_000_000_000)), nsec)

    return sig, codegen


@njit(cache=True)
def system_cycle(counter_mhz, loc):
    """The system counter: host monotonic time at ``counter_mhz`` ticks per microsecond."""
    return _monotonic_ns() * counter_mhz // 1000


@njit(cache=True)
def model_cycle(st, counter_mhz, clock_mhz, loc):
    """The system counter in a profiled binary: the cost model's issue time, at ``counter_mhz``."""
    return np.int64(st[S.COST_ISSUE] / S.COST_TICK * counter_mhz / clock_mhz)


@njit(cache=True)
def trap(loc):
    raise Fault(F_TRAP, loc, 0, 0, 0)


@njit(cache=True)
def set_sys_workspace(st, rid, off, loc):
    st[S.SYS_WORKSPACE] = rid + 1
    st[S.SYS_WORKSPACE + 1] = off


@njit(cache=True)
def sys_workspace(st, loc):
    """(region id, byte offset) of the system workspace."""
    if st[S.SYS_WORKSPACE] == 0:
        raise Fault(F_SYS_WORKSPACE_UNSET, loc, 0, 0, 0)
    return st[S.SYS_WORKSPACE] - 1, st[S.SYS_WORKSPACE + 1]


@njit(cache=True)
def _hccl_slot(index, loc):
    if index < 0 or index >= HCCL_CONTEXTS:
        raise Fault(F_HCCL_INDEX, loc, index, HCCL_CONTEXTS, 0)
    return S.HCCL_CONTEXT + 2 * index


@njit(cache=True)
def set_hccl_context(st, index, rid, off, loc):
    slot = _hccl_slot(index, loc)
    st[slot] = rid + 1
    st[slot + 1] = off


@njit(cache=True)
def hccl_context(st, index, loc):
    """(region id, byte offset) of HCCL context ``index``."""
    slot = _hccl_slot(index, loc)
    if st[slot] == 0:
        raise Fault(F_HCCL_UNSET, loc, index, 0, 0)
    return st[slot] - 1, st[slot + 1]
