"""Rules for the binary vector instructions (``add``, ``sub``, ...).

Every instruction takes the count form ``op(dst, src0, src1, count)`` and the
level-0 forms ``op(dst, src0, src1, mask, repeat_times, repeat_params,
is_set_mask=True)`` with an int (continuous) or list (bit) mask; see
:func:`.common.vector_form` for how a call picks its form.
"""
from __future__ import annotations

from typing import Callable

from ...language import dtype as dt
from ...language import params as P
from ...isa import hb
from ...language import vec_binary as lang
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .common import check_dtype, const_bool, level0_args, local, plain_int, same_dtype, suffix, vector_form

_ARITH = (dt.float16, dt.float32, dt.int16, dt.int32)
_FLOAT = (dt.float16, dt.float32)
_RELU = (dt.float16, dt.float32, dt.int16)
_BITS = (dt.int16, dt.uint16)

# name of the isa instruction and the dtypes Atlas A2 supports
OPS = {
    lang.add: ("add", _ARITH),
    lang.sub: ("sub", _ARITH),
    lang.mul: ("mul", _ARITH),
    lang.div: ("div", _FLOAT),
    lang.max: ("max", _ARITH),
    lang.min: ("min", _ARITH),
    lang.add_relu: ("add_relu", _RELU),
    lang.sub_relu: ("sub_relu", _RELU),
    lang.bitwise_and: ("bitwise_and", _BITS),
    lang.bitwise_or: ("bitwise_or", _BITS),
}


def _binary(lw: LoweringContext, call: Call, name: str, allowed: tuple[dt.DataType, ...]) -> None:
    form, a = vector_form(lw, call, "dst, src0, src1", "count, is_set_mask=True",
                          "mask, repeat_times, repeat_params, is_set_mask=True")
    dst, s0, s1 = a["dst"], a["src0"], a["src1"]
    for what in ("dst", "src0", "src1"):
        local(lw, a[what], call.node, what)
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src0", s0), ("src1", s1))
    check_dtype(lw, name, d, allowed, call.node)
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *s0.code, *s1.code))]
    if form == "count":
        # the count form sets the mask itself (counter mode); pyasc accepts is_set_mask here and ignores it
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, s0, count, access.READ, call.node)
        access.local_count(lw, hb.V, s1, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_binary", f"{name}_{suffix(d)}", [*operands, count], call.node)
        return
    l0 = level0_args(lw, a, P.BinaryRepeatParams, call.node)
    head, (dblk, s0blk, s1blk, drep, s0rep, s1rep) = l0[:5], l0[5:]
    access.level0(lw, hb.V, s0, head, s0blk, s0rep, access.READ, call.node)
    access.level0(lw, hb.V, s1, head, s1blk, s1rep, access.READ, call.node)
    access.level0(lw, hb.V, dst, head, dblk, drep, access.WRITE, call.node)
    lw.emit_isa("vec_binary", f"{name}_l0_{suffix(d)}", [*operands, *l0], call.node)


def _rule_for(name: str, allowed: tuple[dt.DataType, ...]) -> Callable:
    return lambda lw, call: _binary(lw, call, name, allowed)


for _stub, (_name, _allowed) in OPS.items():
    rule(_stub)(_rule_for(_name, _allowed))
