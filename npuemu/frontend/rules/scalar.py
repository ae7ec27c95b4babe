"""Rules for the scalar bit operations and ``scalar_cast`` (:mod:`npuemu.language.scalar`).

Each becomes a call of the matching function of :mod:`npuemu.isa.scalar_ops`
in the generated code; with constant arguments the same function runs at
compile time and the result is a constant.
"""
from __future__ import annotations

import ast

from ...isa import scalar_ops as isa
from ...language import dtype as dt
from ...language import scalar as lang
from ...language.enums import RoundMode
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import ScalarT, Value, const, is_number, scalar
from .common import dtype_arg


def _u64(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> str:
    return lw.u64_expr(v, node, what)


def _bit_value(lw: LoweringContext, call: Call, v: Value) -> int:
    """``count_value``: a compile-time 0 or 1 (a template argument in Ascend C)."""
    c = lw.const_value(v, call.node, f"{call.name}'s count_value")
    if isinstance(c, bool) or c not in (0, 1):
        lw.type_error(f"{call.name}: count_value must be 0 or 1, got {c!r}", call.node)
    return int(c)


def _int_call(lw: LoweringContext, call: Call, fn: str, x: Value, *extra: int) -> Value:
    expr = _u64(lw, x, call.node, f"{call.name}'s value_in")
    if x.is_const:
        return const(int(getattr(isa, fn)(int(expr), *extra)))
    return scalar("int", f"{lw.isa('scalar_ops', fn)}({', '.join([expr, *map(str, extra)])})")


@rule(lang.scalar_count_leading_zero)
def _clz(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.scalar_count_leading_zero)
    return _int_call(lw, call, "clz", a["value_in"])


@rule(lang.scalar_get_count_of_value)
def _bit_count(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.scalar_get_count_of_value)
    return _int_call(lw, call, "bit_count", a["value_in"], _bit_value(lw, call, a["count_value"]))


@rule(lang.scalar_get_sff_value)
def _sff(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.scalar_get_sff_value)
    return _int_call(lw, call, "sff", a["value_in"], _bit_value(lw, call, a["count_value"]))


@rule(lang.count_bits_cnt_same_as_sign_bit)
def _sign_bits(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.count_bits_cnt_same_as_sign_bit)
    return _int_call(lw, call, "sign_bits", a["value_in"])


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
