"""Rules for ``set_next_task_start`` and ``wait_pre_task_end`` (SuperKernel early start).

The pipes and ``force`` are template parameters in Ascend C: constants here,
and the pipes are checked against the allowed ones.  ``wait_pre_task_end``
lowers to a wait (``lw.wait_until``), so a kernel that calls it is blocking;
whether either takes effect is decided by the SuperKernel runner at run
time (``npuemu/isa/task_sync.py``).
"""
from __future__ import annotations

from ...language import task_sync as lang
from ...language.enums import PipeID
from ..registry import Call, rule
from ..context import LoweringContext
from .common import const_bool

AIV_PIPES = (PipeID.PIPE_MTE2, PipeID.PIPE_MTE3, PipeID.PIPE_S, PipeID.PIPE_V)
AIC_PIPES = (PipeID.PIPE_MTE1, PipeID.PIPE_MTE2, PipeID.PIPE_MTE3, PipeID.PIPE_FIX, PipeID.PIPE_M)


def _pipe(lw: LoweringContext, call: Call, value, allowed: tuple[PipeID, ...], what: str) -> None:
    c = lw.const_value(value, call.node, what)
    try:
        pipe = PipeID(c)
    except (ValueError, TypeError):
        pipe = None
    if pipe not in allowed:
        lw.type_error(f"set_next_task_start: {what} must be one of {', '.join(p.name for p in allowed)}, got "
                      f"{c!r}", call.node)


@rule(lang.set_next_task_start)
def _set_next_task_start(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_next_task_start)
    _pipe(lw, call, a["aiv_pipe"], AIV_PIPES, "aiv_pipe")
    _pipe(lw, call, a["aic_pipe"], AIC_PIPES, "aic_pipe")
    const_bool(lw, a["force"], call.node, "force")
    lw.emit_isa("task_sync", "set_next_task_start", ["_st"], call.node)
    aiv, aic = (int(lw.const_value(a[k], call.node, k)) for k in ("aiv_pipe", "aic_pipe"))
    lw.cost_isa("sk_set", [str(aiv), str(aic)], call.node)
    if lw.full_check:
        lw.emit_isa("task_sync", "set_release", ["_st", "_sh", "_gsh", str(aiv), str(aic)], call.node)


@rule(lang.wait_pre_task_end)
def _wait_pre_task_end(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.wait_pre_task_end)
    const_bool(lw, a["force"], call.node, "force")
    lw.wait_until(lw.call_isa("task_sync", "try_wait_pre_task_end", ["_st"], call.node), call.node)
    lw.cost_isa("sk_wait", [], call.node)
    if lw.full_check:
        lw.emit_isa("task_sync", "wait_acquire", ["_st", "_sh", "_gsh"], call.node)
