"""Rules for Python's builtins in kernels (``min``, ``max``, ``abs``, ``int``, ``len``, ``print``, ...)
and the language's compile-time helpers ``ceildiv`` and ``static_assert``.

Applied to constants they fold at compile time; on runtime numbers they
become the same Python expression in the generated code.  Python's builtins
have no stub in :mod:`npuemu.language` (and ``int``, ``float`` and ``bool``
no signature ``inspect`` can read), so their rules bind arguments with spec
strings (``Call.bind``); ``ceildiv`` and ``static_assert`` bind to their stubs.
"""
from __future__ import annotations

import builtins

from ...language import core as lang
from ..context import LoweringContext
from ..registry import Call, method, rule
from ..types import ScalarT, Value, const, is_number, scalar


@rule(builtins.min, builtins.max)
def _minmax(lw: LoweringContext, call: Call) -> Value:
    if call.kwargs or len(call.args) < 2:
        lw.type_error(f"{call.name}() in a kernel takes two or more numbers", call.node)
    if all(a.is_const for a in call.args):
        return _fold(lw, call, builtins.min if call.name == "min" else builtins.max, *(a.const for a in call.args))
    kind = "float" if any((a.type.kind == "float") if isinstance(a.type, ScalarT) else isinstance(a.const, float)
                          for a in call.args) else "int"
    exprs = [lw.materialize(a, call.node, kind) for a in call.args]
    return scalar(kind, f"{call.name}({', '.join(exprs)})")


def _fold(lw: LoweringContext, call: Call, fn, *args) -> Value:
    """A builtin applied to constants, at compile time."""
    try:
        return const(fn(*args))
    except Exception as exc:  # noqa: BLE001 - the user's constant was wrong
        lw.type_error(f"{call.name}() of {', '.join(map(repr, args))}: {exc}", call.node)


def _one_arg(lw: LoweringContext, call: Call) -> Value:
    """The argument of a one-argument builtin: a constant (folded by the caller) or a runtime number."""
    v = call.bind(lw, "x")["x"]
    if not (v.is_const or is_number(v)):
        lw.type_error(f"{call.name}() in a kernel takes a number, got {lw.describe(v)}", call.node)
    return v


@rule(builtins.abs)
def _abs(lw: LoweringContext, call: Call) -> Value:
    v = _one_arg(lw, call)
    if v.is_const:
        return _fold(lw, call, builtins.abs, v.const)
    return scalar("int" if v.type.kind == "bool" else v.type.kind, f"abs({lw.materialize(v, call.node)})")


@rule(builtins.int, builtins.float, builtins.bool)
def _convert(lw: LoweringContext, call: Call) -> Value:
    v = _one_arg(lw, call)
    if v.is_const:
        return _fold(lw, call, {"int": int, "float": float, "bool": bool}[call.name], v.const)
    if call.name == "int":
        return scalar("int", f"int({lw.materialize(v, call.node)})")
    if call.name == "float":
        return scalar("float", f"_f32({lw.materialize(v, call.node)})")
    return scalar("bool", f"bool({lw.materialize(v, call.node)})")


@rule(builtins.len)
def _len(lw: LoweringContext, call: Call) -> Value:
    v = call.bind(lw, "obj")["obj"]
    if v.is_const:
        return _fold(lw, call, builtins.len, v.const)
    if hasattr(v.type, "n"):
        return const(v.type.n)
    lw.type_error(f"len() of {lw.describe(v)}", call.node)


@rule(builtins.print)
def _print(lw: LoweringContext, call: Call) -> None:
    """Plain print works in both modes for scalars (debug mode prints as CPython does)."""
    parts = []
    for v in call.args:
        if v.is_const:
            parts.append(repr(str(v.const)))
        elif isinstance(v.type, ScalarT):
            parts.append(v.code[0])
        else:
            lw.type_error(f"print() can show numbers and strings; use asc.dump_tensor for {lw.describe(v)}",
                          call.node)
    lw.emit(f"print({', '.join(parts)})")


@rule(lang.ceildiv)
def _ceildiv(lw: LoweringContext, call: Call) -> Value:
    args = call.bind_to(lw, lang.ceildiv)
    a, b = args["a"], args["b"]
    if a.is_const and b.is_const:
        if b.const == 0:
            lw.type_error("ceildiv by zero", call.node)
        return const(lang.ceildiv(a.const, b.const))
    x, y = lw.int_expr(a, call.node), lw.int_expr(b, call.node)
    if b.is_const and b.const != 0:
        return scalar("int", f"((({x}) + ({y}) - 1) // ({y}))")
    return scalar("int", lw.call_isa("arith", "floordiv_int", [f"(({x}) + ({y}) - 1)", y], call.node))


@method(ScalarT, "ceildiv")
def _int_ceildiv(lw: LoweringContext, call: Call) -> Value:
    """``n.ceildiv(d)`` on a kernel integer (pyasc's RuntimeInt): ``asc.ceildiv(n, d)``."""
    if call.recv.type.kind != "int":
        lw.type_error(f"ceildiv is a method of int values, not of {call.recv.type.describe()}", call.node)
    if len(call.args) + len(call.kwargs) != 1:
        lw.type_error("ceildiv takes one argument: n.ceildiv(divisor)", call.node)
    divisor = call.args[0] if call.args else next(iter(call.kwargs.values()))
    return _ceildiv(lw, Call("ceildiv", call.node, [call.recv, divisor], {}))


@rule(lang.static_assert)
def _static_assert(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.static_assert)
    if not lw.const_value(a["cond"], call.node, "the static_assert condition"):
        lw.fail(f"static_assert failed: {a['msg'].const}", call.node)
