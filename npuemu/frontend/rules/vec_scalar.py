"""Rules for the vector-scalar instructions (``adds``, ``muls``, ..., ``axpy``).

Forms: ``op(dst, src, scalar, count, is_set_mask=True)`` and the level-0 forms
``op(dst, src, scalar, mask, repeat_times, repeat_params, is_set_mask=True)``
(see :func:`.common.vector_form`); ``axpy``'s count form has no
``is_set_mask``.  The scalar is passed to the instruction as a float64 (float
data) or int64 (integer data); constants are converted to the element type
here, so a literal is rounded once, as the compiler does.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...language import dtype as dt
from ...language import params as P
from ...isa import hb
from ...language import vec_scalar as lang
from ..registry import Call, rule
from . import access
from ..context import LoweringContext
from ..types import Value, is_number
from .common import check_dtype, const_bool, level0_args, local, plain_int, same_dtype, suffix, vector_form
from .vec_unary import unary_level0_access

_ARITH = (dt.float16, dt.float32, dt.int16, dt.int32)
_SHIFT = (dt.int16, dt.uint16, dt.int32, dt.uint32)

# name of the isa instruction and the dtypes Atlas A2 supports
OPS = {
    lang.adds: ("adds", _ARITH),
    lang.muls: ("muls", _ARITH),
    lang.maxs: ("maxs", _ARITH),
    lang.mins: ("mins", _ARITH),
    lang.leaky_relu: ("leaky_relu", (dt.float16, dt.float32)),
    lang.shift_left: ("shift_left", _SHIFT),
    lang.shift_right: ("shift_right", _SHIFT),
}

# axpy's (dst, src) pairs on Atlas A2: the destination may be float32 for a float16 source
AXPY_PAIRS = ((dt.float16, dt.float16), (dt.float32, dt.float32), (dt.float32, dt.float16))

_DEFAULT_UNARY_PARAMS = ["1", "1", "8", "8"]


def scalar_operand(lw: LoweringContext, v: Value, d: dt.DataType, node) -> str:
    """The scalar argument as an isa argument: float64 for float ``d``, int64 for integer ``d``.

    A constant is converted to ``d`` here (floats round once to nearest even;
    integers truncate toward zero and wrap, as a C conversion does); a run-time
    value is converted by the instruction.
    """
    if not is_number(v):
        lw.type_error(f"scalar must be a number, got {lw.describe(v)}", node)
    if v.is_const:
        c = v.const
        if d.is_float:
            with np.errstate(over="ignore"):
                f = float(np.float16(c) if d is dt.float16 else np.float32(c))
            if math.isnan(f):
                return "np.nan"
            if math.isinf(f):
                return "np.inf" if f > 0 else "-np.inf"
            return repr(f)
        if isinstance(c, float) and not math.isfinite(c):
            lw.type_error(f"scalar {c!r} cannot be converted to {d.name}", node)
        bits = 8 * d.sizeof()
        n = int(c) % (1 << bits)
        if d.kind == "i" and n >= 1 << (bits - 1):
            n -= 1 << bits
        return repr(n)
    return f"float({v.code[0]})" if d.is_float else plain_int(f"int({v.code[0]})")


def _scalar_op(lw: LoweringContext, call: Call, name: str, allowed: tuple[dt.DataType, ...]) -> None:
    form, a = vector_form(lw, call, "dst, src, scalar", "count, is_set_mask=True",
                          "mask, repeat_times, repeat_params, is_set_mask=True")
    dst, src = a["dst"], a["src"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src", src))
    check_dtype(lw, name, d, allowed, call.node)
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)),
                scalar_operand(lw, a["scalar"], d, call.node)]
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    if form == "count" and is_set_mask:
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, src, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_scalar", f"{name}_{suffix(d)}", [*operands, count], call.node)
        return
    if form == "count":
        # Ascend C runs the count form with is_set_mask=False as one repeat under the mask register
        # (counter mode: the count set with set_vector_mask); count itself is ignored
        lw.int_expr(a["count"], call.node, "count")
        l0 = ["False", "False", "0", "0", "1", *_DEFAULT_UNARY_PARAMS]
        unary_level0_access(lw, dst, src, l0, call.node)
        lw.emit_isa("vec_scalar", f"{name}_l0_{suffix(d)}", [*operands, *l0], call.node)
        return
    l0 = level0_args(lw, a, P.UnaryRepeatParams, call.node)
    unary_level0_access(lw, dst, src, l0, call.node)
    lw.emit_isa("vec_scalar", f"{name}_l0_{suffix(d)}", [*operands, *l0], call.node)


@rule(lang.axpy)
def _axpy(lw: LoweringContext, call: Call) -> None:
    form, a = vector_form(lw, call, "dst, src, scalar", "count",
                          "mask, repeat_times, repeat_params, is_set_mask=True")
    dst, src = a["dst"], a["src"]
    dt_dst = local(lw, dst, call.node, "dst").dtype
    dt_src = local(lw, src, call.node, "src").dtype
    if (dt_dst, dt_src) not in AXPY_PAIRS:
        pairs = ", ".join(f"{s.name} -> {d.name}" for d, s in AXPY_PAIRS)
        lw.type_error(f"axpy does not support {dt_src.name} -> {dt_dst.name} on this platform "
                      f"(supported src -> dst: {pairs})", call.node)
    pair = f"{suffix(dt_dst)}_{suffix(dt_src)}"
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)),
                scalar_operand(lw, a["scalar"], dt_src, call.node)]
    if form == "count":
        # axpy reads its destination: dst = src * scalar + dst
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, src, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_scalar", f"axpy_{pair}", [*operands, count], call.node)
        return
    l0 = level0_args(lw, a, P.UnaryRepeatParams, call.node)
    unary_level0_access(lw, dst, src, l0, call.node, dst_read=True)
    lw.emit_isa("vec_scalar", f"axpy_l0_{pair}", [*operands, *l0], call.node)


def _rule_for(name: str, allowed: tuple[dt.DataType, ...]) -> Callable:
    return lambda lw, call: _scalar_op(lw, call, name, allowed)


for _stub, (_name, _allowed) in OPS.items():
    rule(_stub)(_rule_for(_name, _allowed))
