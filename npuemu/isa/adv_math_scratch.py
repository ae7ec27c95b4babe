"""The scratch space of the high-level (``asc.adv``) library routines, and its checks.

A routine such as ``asc.adv.sin`` works through intermediate float32 tensors.
It takes them from ``temp_buffer`` when the call passes one, and otherwise
from the UB the TPipe has not handed out (Ascend C: "接口框架申请临时空间" --
the framework takes it from the space the developer left free).  Either must
hold at least the routine's documented minimum (``GetXxxMaxMinTmpSize``'s
``minValue``), given to these checks in bytes.

Fault codes 2300-2309 (the high-level API's range is 2300-2399).
"""
from __future__ import annotations

from numba import njit

from .. import errors
from . import state as S
from .fault import Fault, register

F_TMP_SMALL = 2300
F_RESERVE_SMALL = 2301
F_TMP_OVERLAP = 2302
F_TMP_ALIGN = 2303

UB = 1                      # Hardware.UB
OPERAND_NAMES = ("dst", "src", "src1", "gamma", "sum", "max")
DST, SRC, SRC1, GAMMA, SUM, MAX = range(6)

register({
    F_TMP_SMALL: (errors.CapacityError,
                  lambda a, b, c, env: f"temp_buffer holds {a} bytes but this call needs at least {b} "
                                       f"(the routine's minimum scratch, GetXxxMaxMinTmpSize's minValue); "
                                       f"pass a larger temp_buffer"),
    F_RESERVE_SMALL: (errors.CapacityError,
                      lambda a, b, c, env: f"no temp_buffer was passed, so the routine takes its scratch from "
                                           f"the UB the TPipe left unallocated, but only {a} bytes are free and "
                                           f"it needs {b}; reserve more UB (allocate less with init_buffer) or "
                                           f"pass a temp_buffer"),
    F_TMP_OVERLAP: (errors.OverlapError,
                    lambda a, b, c, env: f"temp_buffer overlaps {OPERAND_NAMES[a]}: the routine writes its "
                                         f"intermediates there while it still reads or writes "
                                         f"{OPERAND_NAMES[a]}; use a separate buffer"),
    F_TMP_ALIGN: (errors.AlignmentError,
                  lambda a, b, c, env: f"temp_buffer starts at UB byte {a}, which is not 32-byte aligned"),
})


@njit(cache=True)
def check_scratch(st, tmp, tmp_bytes, has_tmp, need, loc):
    """``temp_buffer`` (or, without one, the TPipe's free UB) holds at least ``need`` bytes."""
    if has_tmp:
        off = tmp - st[S.SEG_BASE + UB]
        if off % 32 != 0:
            raise Fault(F_TMP_ALIGN, loc, off, 0, 0)
        if tmp_bytes < need:
            raise Fault(F_TMP_SMALL, loc, tmp_bytes, need, 0)
    else:
        free = st[S.SEG_SIZE + UB] - st[S.PIPE_CUR + UB]
        if free < need:
            raise Fault(F_RESERVE_SMALL, loc, free, need, 0)


@njit(cache=True)
def check_apart(tmp, tmp_bytes, has_tmp, addr, nbytes, which, loc):
    """``temp_buffer`` does not share a byte with the ``nbytes`` an operand uses from ``addr``."""
    if has_tmp and tmp_bytes > 0 and nbytes > 0 and tmp < addr + nbytes and addr < tmp + tmp_bytes:
        raise Fault(F_TMP_OVERLAP, loc, which, 0, 0)
