"""Rules for ``set_flag``, ``wait_flag``, ``pipe_barrier`` and ``data_sync_barrier``.

Events, pipes and barrier kinds are compile-time enum constants (pyasc passes
them to the compiler as attributes); event ids may be computed at run time.
Legality depends on the core type, which a mixed kernel learns at run time, so
the instructions check it; only ``PIPE_S`` is refused here.  A binary built for
check level ``full`` also moves the race checker's clocks (``isa/hb.py``) right
after each checked instruction: a set publishes its source pipe, a wait joins
it into the destination pipe, ``pipe_barrier(PIPE_ALL)`` and
``data_sync_barrier`` join every pipe.  A barrier on one pipe orders nothing
between pipes (instructions of one pipe already run in order).
"""
from __future__ import annotations

from enum import IntEnum

from ...isa import hb
from ...language import sync as lang
from ...language.enums import HardEvent, MemDsbT, PipeID
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import Value
from .common import plain_int


def _enum(lw: LoweringContext, call: Call, v: Value, cls: type[IntEnum], what: str) -> int:
    c = lw.const_value(v, call.node, what)
    try:
        return int(cls(c))
    except (ValueError, TypeError):
        lw.type_error(f"{call.name}: {what} must be a {cls.__name__} member, got {c!r}", call.node)


def _flag(lw: LoweringContext, call: Call, fn: str) -> None:
    a = call.bind_to(lw, getattr(lang, fn))
    event = _enum(lw, call, a["event"], HardEvent, "event")
    event_id = lw.int_expr(a["event_id"], call.node, "event_id")
    lw.emit_isa("sync", fn, ["_st", str(event), plain_int(event_id)], call.node)
    if lw.full_check:
        lw.emit_isa("hb", fn, ["_st", "_sh", str(event), plain_int(event_id)], call.node)
    pipe = hb.EVENT_SRC[event] if fn == "set_flag" else hb.EVENT_DST[event]
    lw.cost_isa(fn, [str(event), plain_int(event_id), str(int(pipe))], call.node)
    if fn == "wait_flag":
        lw.sync_wait(int(hb.EVENT_SRC[event]), int(hb.EVENT_DST[event]), call.node)
    lw.at_kernel_end(f"{lw.isa('sync', 'check_flags_clear')}(_st)")


@rule(lang.set_flag)
def _set_flag(lw: LoweringContext, call: Call) -> None:
    _flag(lw, call, "set_flag")


@rule(lang.wait_flag)
def _wait_flag(lw: LoweringContext, call: Call) -> None:
    _flag(lw, call, "wait_flag")


@rule(lang.pipe_barrier)
def _pipe_barrier(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.pipe_barrier)
    pipe = _enum(lw, call, a["pipe"], PipeID, "pipe")
    if pipe == PipeID.PIPE_S:
        lw.type_error("pipe_barrier(PipeID.PIPE_S) is not allowed: the scalar pipe executes in order",
                      call.node)
    lw.emit_isa("sync", "pipe_barrier", ["_st", str(pipe)], call.node)
    if pipe == PipeID.PIPE_ALL:
        if lw.full_check:
            lw.emit_isa("hb", "barrier_all", ["_st", "_sh"], call.node)
        lw.cost_isa("barrier_all", [], call.node)
        lw.sync_barrier(call.node)


@rule(lang.data_sync_barrier)
def _data_sync_barrier(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.data_sync_barrier)
    arg = _enum(lw, call, a["arg0"], MemDsbT, "arg0")
    lw.emit_isa("sync", "data_sync_barrier", ["_st", str(arg)], call.node)
    if lw.full_check:
        # it waits for every earlier memory access of the core: taken as a full barrier
        lw.emit_isa("hb", "barrier_all", ["_st", "_sh"], call.node)
    lw.cost_isa("barrier_all", [], call.node)
    lw.sync_barrier(call.node)
