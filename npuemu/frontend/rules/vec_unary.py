"""Rules for the unary vector instructions (``abs``, ``exp``, ...).

Forms (the stubs in :mod:`npuemu.language.vec_unary`): ``op(dst, src,
count)`` and the level-0 forms ``op(dst, src, mask, repeat_times,
repeat_params, is_set_mask=True)``.  As in pyasc the count form takes no
``is_set_mask``.  The data types each takes are that module's ``DTYPES``.
"""
from __future__ import annotations

from typing import Callable

from ...isa import hb
from ...language import params as P
from ...language import vec_unary as lang
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .common import check_dtype, level0_args, local, plain_int, same_dtype, suffix


def _unary(lw: LoweringContext, call: Call, stub: Callable) -> None:
    name, a = stub.__name__, call.bind_to(lw, stub)
    dst, src = a["dst"], a["src"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src", src))
    check_dtype(lw, name, d, lang.DTYPES[stub], call.node)
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code))]
    if "count" in a:
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, src, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_unary", f"{name}_{suffix(d)}", [*operands, count], call.node)
        return
    l0 = level0_args(lw, a, P.UnaryRepeatParams, call.node)
    unary_level0_access(lw, dst, src, l0, call.node)
    lw.emit_isa("vec_unary", f"{name}_l0_{suffix(d)}", [*operands, *l0], call.node)


def unary_level0_access(lw: LoweringContext, dst, src, l0: list[str], node, dst_read: bool = False) -> None:
    """The operands of a level-0 instruction with UnaryRepeatParams (``l0`` from ``level0_args``)."""
    head, (dblk, sblk, drep, srep) = l0[:5], l0[5:]
    wide = max(dst.type.dtype.sizeof(), src.type.dtype.sizeof())
    access.level0(lw, hb.V, src, head, sblk, srep, access.READ, node, wide)
    if dst_read:
        access.level0(lw, hb.V, dst, head, dblk, drep, access.READ, node, wide)
    access.level0(lw, hb.V, dst, head, dblk, drep, access.WRITE, node, wide)


def _rule_for(stub: Callable) -> Callable:
    return lambda lw, call: _unary(lw, call, stub)


for _stub in lang.DTYPES:       # the isa instruction has the stub's name
    rule(_stub)(_rule_for(_stub))
