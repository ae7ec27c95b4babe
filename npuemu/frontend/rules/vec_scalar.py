"""Rules for the vector-scalar instructions (``adds``, ``muls``, ..., ``axpy``).

Forms (the stubs in :mod:`npuemu.language.vec_scalar`, whose ``DTYPES`` and
``AXPY_TYPES`` are the data types each takes): ``op(dst, src, scalar, count,
is_set_mask=True)`` and the level-0 forms ``op(dst, src, scalar, mask,
repeat_times, repeat_params, is_set_mask=True)``; ``axpy``'s count form has no
``is_set_mask``.  The scalar is passed to the instruction as a float64 (float
data) or int64 (integer data); constants are converted to the element type
here, so a literal is rounded once, as the compiler does.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ...isa import hb
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_scalar as lang
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import Value, is_number
from . import access
from .common import check_dtype, const_bool, level0_args, local, plain_int, same_dtype, suffix
from .vec_unary import unary_level0_access

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


def _scalar_op(lw: LoweringContext, call: Call, stub: Callable) -> None:
    name, a = stub.__name__, call.bind_to(lw, stub)
    dst, src = a["dst"], a["src"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src", src))
    check_dtype(lw, name, d, lang.DTYPES[stub], call.node)
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)),
                scalar_operand(lw, a["scalar"], d, call.node)]
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    if "count" in a and is_set_mask:
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, src, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_scalar", f"{name}_{suffix(d)}", [*operands, count], call.node)
        return
    if "count" in a:
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
    a = call.bind_to(lw, lang.axpy)
    dst, src = a["dst"], a["src"]
    dt_dst = local(lw, dst, call.node, "dst").dtype
    dt_src = local(lw, src, call.node, "src").dtype
    if (dt_src, dt_dst) not in lang.AXPY_TYPES:
        pairs = ", ".join(f"{s.name} -> {d.name}" for s, d in lang.AXPY_TYPES)
        lw.type_error(f"axpy does not support {dt_src.name} -> {dt_dst.name} on this platform "
                      f"(supported src -> dst: {pairs})", call.node)
    pair = f"{suffix(dt_dst)}_{suffix(dt_src)}"
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)),
                scalar_operand(lw, a["scalar"], dt_src, call.node)]
    if "count" in a:
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


def _rule_for(stub: Callable) -> Callable:
    return lambda lw, call: _scalar_op(lw, call, stub)


for _stub in lang.DTYPES:       # the isa instruction has the stub's name
    rule(_stub)(_rule_for(_stub))
