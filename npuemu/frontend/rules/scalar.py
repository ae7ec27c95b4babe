"""Rules for the scalar bit operations and ``scalar_cast`` (:mod:`npuemu.language.scalar`).

Each becomes a call of the matching function of :mod:`npuemu.isa.scalar_ops`
in the generated code; with constant arguments the same function runs at
compile time and the result is a constant.
"""
from __future__ import annotations

from typing import Callable

from ...isa import scalar_ops as isa
from ...language import dtype as dt
from ...language import scalar as lang
from ...language.enums import RoundMode
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import ScalarT, Value, const, is_number, scalar
from .common import dtype_arg


def _bit_value(lw: LoweringContext, call: Call, v: Value) -> int:
    """``count_value``: a compile-time 0 or 1 (a template argument in Ascend C)."""
    c = lw.const_value(v, call.node, f"{call.name}'s count_value")
    if isinstance(c, bool) or c not in (0, 1):
        lw.type_error(f"{call.name}: count_value must be 0 or 1, got {c!r}", call.node)
    return int(c)


def _int_call(lw: LoweringContext, call: Call, fn: str, x: Value, *extra: int) -> Value:
    expr = lw.u64_expr(x, call.node, f"{call.name}'s value_in")
    if x.is_const:
        return const(int(getattr(isa, fn)(int(expr), *extra)))
    return scalar("int", f"{lw.isa('scalar_ops', fn)}({', '.join([expr, *map(str, extra)])})")


# stub -> (function of npuemu.isa.scalar_ops, whether it takes the 0/1 count_value)
BIT_OPS = {lang.scalar_count_leading_zero: ("clz", False), lang.scalar_get_count_of_value: ("bit_count", True),
           lang.scalar_get_sff_value: ("sff", True), lang.count_bits_cnt_same_as_sign_bit: ("sign_bits", False)}


def _bit_op(lw: LoweringContext, call: Call, stub: Callable) -> Value:
    fn, takes_bit = BIT_OPS[stub]
    a = call.bind_to(lw, stub)
    extra = [_bit_value(lw, call, a["count_value"])] if takes_bit else []
    return _int_call(lw, call, fn, a["value_in"], *extra)


for _stub in BIT_OPS:
    rule(_stub)(lambda lw, call, stub=_stub: _bit_op(lw, call, stub))


@rule(lang.scalar_cast)
def _scalar_cast(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.scalar_cast)
    x = a["value_in"]
    if not is_number(x) or (isinstance(x.type, ScalarT) and x.type.kind == "bool"):
        lw.type_error(f"scalar_cast's value_in must be a number, got {lw.describe(x)}", call.node)
    target = dtype_arg(lw, a["dtype"], call.node, "scalar_cast's dtype")
    modes = lang.CAST_MODES.get(target)
    if modes is None:
        lw.type_error(f"scalar_cast converts float32 to int32 or float16 on this platform, not to "
                      f"{target.name}", call.node)
    m = lw.const_value(a["round_mode"], call.node, "scalar_cast's round_mode")
    try:
        mode = RoundMode(m)
    except ValueError:
        lw.type_error(f"round_mode must be an asc.RoundMode, got {lw.describe(a['round_mode'])}", call.node)
    if mode not in modes:
        lw.type_error(f"scalar_cast float32 -> {target.name} does not support {mode.name} (supported: "
                      f"{', '.join(m.name for m in modes)})", call.node)
    fn = "cast_to_i32" if target is dt.int32 else "cast_to_f16"
    kind = "int" if target is dt.int32 else "float"
    if x.is_const:
        r = getattr(isa, fn)(float(x.const), int(mode))
        return const(int(r) if kind == "int" else float(r))
    return scalar(kind, f"{lw.isa('scalar_ops', fn)}({lw.materialize(x, call.node, 'float')}, "
                        f"np.int64({int(mode)}))")
