"""Rules for the unary vector instructions (``abs``, ``exp``, ...).

Forms: ``op(dst, src, count)`` and the level-0 forms ``op(dst, src, mask,
repeat_times, repeat_params, is_set_mask=True)``; see
:func:`.common.vector_form`.  As in pyasc the count form takes no
``is_set_mask``.
"""
from __future__ import annotations

from typing import Callable

from ...language import dtype as dt
from ...language import params as P
from ...isa import hb
from ...language import vec_unary as lang
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .common import check_dtype, level0_args, local, plain_int, same_dtype, suffix, vector_form

_FLOAT = (dt.float16, dt.float32)

# name of the isa instruction and the dtypes Atlas A2 supports
OPS = {
    lang.abs: ("abs", _FLOAT),
    lang.exp: ("exp", _FLOAT),
    lang.ln: ("ln", _FLOAT),
    lang.sqrt: ("sqrt", _FLOAT),
    lang.rsqrt: ("rsqrt", _FLOAT),
    lang.reciprocal: ("reciprocal", _FLOAT),
    lang.relu: ("relu", (dt.float16, dt.float32, dt.int32)),
    lang.bitwise_not: ("bitwise_not", (dt.int16, dt.uint16)),
}


def _unary(lw: LoweringContext, call: Call, name: str, allowed: tuple[dt.DataType, ...]) -> None:
    form, a = vector_form(lw, call, "dst, src", "count",
                          "mask, repeat_times, repeat_params, is_set_mask=True")
    dst, src = a["dst"], a["src"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src", src))
    check_dtype(lw, name, d, allowed, call.node)
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code))]
    if form == "count":
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


def _rule_for(name: str, allowed: tuple[dt.DataType, ...]) -> Callable:
    return lambda lw, call: _unary(lw, call, name, allowed)


for _stub, (_name, _allowed) in OPS.items():
    rule(_stub)(_rule_for(_name, _allowed))
