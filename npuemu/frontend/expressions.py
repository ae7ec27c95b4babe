"""Lowering of expressions: constants, names, operators, comparisons, subscripts and calls.

:class:`ExpressionLowering` is one part of :class:`~npuemu.frontend.lower.Lowerer`;
calls to the kernel language go to the rules (:mod:`npuemu.frontend.registry`),
calls to ``@asc.jit`` helpers are inlined, plain Python functions on constants
run at compile time.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import operator
from typing import Any, Callable

from .. import errors
from ..errors import KernelTypeError, UnknownAPIError, UnsupportedSyntaxError
from ..language.builtin import builtin_name
from . import registry
from .kernel import KernelFunction, is_constexpr
from .source import parse_function
from .scope import Scope
from .types import RecordT, ScalarT, TupleT, Value, const, is_number, scalar

_BINOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod), ast.Div: ("/", operator.truediv),
    ast.Pow: ("**", operator.pow), ast.LShift: ("<<", operator.lshift), ast.RShift: (">>", operator.rshift),
    ast.BitAnd: ("&", operator.and_), ast.BitOr: ("|", operator.or_), ast.BitXor: ("^", operator.xor),
}
_CMPOPS: dict[type, tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt), ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge), ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne),
    ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
    ast.In: ("in", lambda a, b: a in b), ast.NotIn: ("not in", lambda a, b: a not in b),
}
_WRAPPING = {"+": "add", "-": "sub", "*": "mul"}
_SHIFTS = {"<<": "shl", ">>": "shr"}
_CONST_ONLY_CMP = {"is", "is not", "in", "not in"}
_INT_ONLY = {"<<", ">>", "&", "|", "^"}
# operators that fault on a zero divisor: (int instruction, float instruction) in npuemu.isa.arith
_DIVISIONS = {"/": ("div_f32", "div_f32"), "//": ("floordiv_int", "floordiv_f32"), "%": ("mod_int", "mod_f32")}
MAX_INLINE_DEPTH = 64


class ExpressionLowering:
    """The ``expr_*`` visitors of the lowerer, and calls."""

    def expr(self, node: ast.expr) -> Value:
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is None:
            self.fail(f"'{type(node).__name__}' expressions are not supported in kernels",
                      node, UnsupportedSyntaxError)
        return handler(node)

    def expr_Constant(self, node: ast.Constant) -> Value:
        return const(node.value)

    def lookup(self, name: str, node: ast.AST) -> Value:
        sc = self.scope
        if name in sc.bindings:
            return sc.bindings[name]
        ns = sc.namespace
        if name in ns:
            return const(ns[name])
        if hasattr(builtins, name):
            return const(getattr(builtins, name))
        self.fail(f"name '{name}' is not defined", node, UnknownAPIError)

    def expr_Name(self, node: ast.Name) -> Value:
        return self.lookup(node.id, node)

    def expr_Tuple(self, node: ast.Tuple | ast.List) -> Value:
        items = [self.expr(e) for e in node.elts]
        if all(i.is_const for i in items):
            vals = [i.const for i in items]
            return const(tuple(vals) if isinstance(node, ast.Tuple) else vals)
        return Value(TupleT(len(items)), items=tuple(items))

    expr_List = expr_Tuple

    def expr_Attribute(self, node: ast.Attribute) -> Value:
        obj = self.expr(node.value)
        if obj.is_const:
            try:
                return const(getattr(obj.const, node.attr))
            except AttributeError:
                self.fail(f"{self.describe(obj)} has no attribute '{node.attr}'", node, UnknownAPIError)
        if isinstance(obj.type, RecordT) and node.attr in obj.type.names:
            return obj.item(node.attr)
        rule = registry.ATTR_RULES.get((type(obj.type), node.attr))
        if rule is None:
            self.fail(f"{obj.type.describe()} has no attribute '{node.attr}'", node, UnknownAPIError)
        return rule(self, obj, node)

    def expr_Subscript(self, node: ast.Subscript) -> Value:
        obj = self.expr(node.value)
        if isinstance(node.slice, ast.Slice):
            s = node.slice
            if s.upper is not None or s.step is not None:
                self.fail("tensor slices take a start index only (t[i:])", node, UnsupportedSyntaxError)
            start = self.expr(s.lower) if s.lower is not None else const(0)
            return self.subscript(obj, start, node)
        index = self.expr(node.slice)
        if obj.is_const and index.is_const:
            try:
                return const(obj.const[index.const])
            except Exception as exc:  # noqa: BLE001 - report any failure as a compile error
                self.type_error(f"cannot index {self.describe(obj)}: {exc}", node)
        if isinstance(obj.type, TupleT):
            i = self.const_value(index, node.slice, "a tuple index")
            return obj.items[i]
        return self.subscript(obj, index, node)

    def subscript(self, obj: Value, start: Value, node: ast.AST) -> Value:
        rule = registry.METHOD_RULES.get((type(obj.type), "__getitem__"))
        if rule is None:
            self.fail(f"{self.describe(obj)} cannot be indexed", node, UnsupportedSyntaxError)
        return rule(self, registry.Call("__getitem__", node, [start], {}, recv=obj))  # type: ignore[arg-type]

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Value:
        v = self.expr(node.operand)
        if v.is_const:
            ops = {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                   ast.Invert: operator.invert}
            try:
                return const(ops[type(node.op)](v.const))
            except Exception as exc:  # noqa: BLE001
                self.type_error(f"cannot evaluate {ast.unparse(node)}: {exc}", node)
        if not isinstance(v.type, ScalarT):
            self.type_error(f"unary operator on {self.describe(v)}", node)
        if isinstance(node.op, ast.Not):
            return scalar("bool", f"(not {v.code[0]})")
        if isinstance(node.op, ast.Invert):
            if v.type.kind == "float":
                self.type_error("~ needs an integer", node)
            return scalar("int", f"(~{v.code[0]})")
        sym = "-" if isinstance(node.op, ast.USub) else "+"
        kind = "int" if v.type.kind == "bool" else v.type.kind
        if sym == "-" and kind == "int":        # wraps, in debug mode too (isa/arith.py)
            return scalar("int", f"{self.isa('arith', 'neg')}({v.code[0]})")
        return scalar(kind, f"({sym}{v.code[0]})")

    def expr_BinOp(self, node: ast.BinOp) -> Value:
        return self.binop(node.op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op: ast.operator, a: Value, b: Value, node: ast.AST) -> Value:
        sym, fn = _BINOPS[type(op)]
        if a.is_const and b.is_const:
            try:
                return const(fn(a.const, b.const))
            except Exception as exc:  # noqa: BLE001
                self.type_error(f"cannot evaluate {a.const!r} {sym} {b.const!r}: {exc}", node)
        rule = registry.METHOD_RULES.get((type(a.type), f"__{type(op).__name__.lower()}__"))
        if rule is not None:
            return rule(self, registry.Call(sym, node, [b], {}, recv=a))  # type: ignore[arg-type]
        rule = registry.METHOD_RULES.get((type(b.type), f"__r{type(op).__name__.lower()}__"))
        if rule is not None:
            return rule(self, registry.Call(sym, node, [a], {}, recv=b))  # type: ignore[arg-type]
        if not (is_number(a) and is_number(b)):
            self.type_error(f"unsupported operand types for {sym}: {self.describe(a)} and {self.describe(b)}",
                            node)
        ka, kb = _num_kind(a), _num_kind(b)
        kind = "float" if sym == "/" or "float" in (ka, kb) else "int"
        if kind == "float" and sym in _INT_ONLY:
            self.type_error(f"operator {sym} needs integers", node)
        x, y = self.materialize(a, node, kind), self.materialize(b, node, kind)
        if sym in _DIVISIONS and not (b.is_const and b.const != 0):
            fn = _DIVISIONS[sym][kind == "float"]
            call = self.call_isa("arith", fn, [x, y], node)   # faults on a zero divisor
            return scalar(kind, f"_f32({call})" if kind == "float" else call)
        if kind == "int" and sym in _WRAPPING:     # int64 wraps, in debug mode too (isa/arith.py)
            return scalar(kind, f"{self.isa('arith', _WRAPPING[sym])}({x}, {y})")
        if kind == "int" and sym in _SHIFTS:       # a count outside 0..63 faults, in both modes
            return scalar(kind, self.call_isa("arith", _SHIFTS[sym], [x, y], node))
        return scalar(kind, f"_f32({x} {sym} {y})" if kind == "float" else f"({x} {sym} {y})")

    def expr_BoolOp(self, node: ast.BoolOp) -> Value:
        is_and = isinstance(node.op, ast.And)
        vals = [self.expr(node.values[0])]
        mark = len(self.em.lines)
        plan_mark = self.sync_plan.mark()
        vals.extend(self.expr(v) for v in node.values[1:])
        if len(self.em.lines) != mark:
            # a later operand runs statements (an API call): run them only when Python would,
            # so that ``i < n and t.get_value(i) > 0`` does not read t[n]
            del self.em.lines[mark:]
            self.sync_plan.rollback(plan_mark)
            result = self.new_var("bo", "bool")
            self.emit(f"{result} = {self._bool_code(vals[0], node)}")
            for sub in node.values[1:]:
                with self.em.block(f"if {result}:" if is_and else f"if not {result}:"), self.sync_region("if"):
                    self.emit(f"{result} = {self._bool_code(self.expr(sub), node)}")
            return scalar("bool", result)
        if all(v.is_const for v in vals):
            out = vals[0].const
            for v in vals[1:]:
                out = (out and v.const) if is_and else (out or v.const)
            return const(out)
        parts = [self._bool_code(v, node) for v in vals]
        return scalar("bool", "(" + (" and " if is_and else " or ").join(parts) + ")")

    def _bool_code(self, v: Value, node: ast.AST) -> str:
        return repr(bool(v.const)) if v.is_const else f"bool({self.truth(v, node)})"

    def expr_Compare(self, node: ast.Compare) -> Value:
        left = self.expr(node.left)
        terms: list[str] = []
        folded = True
        result = True
        for op, rnode in zip(node.ops, node.comparators):
            right = self.expr(rnode)
            sym, fn = _CMPOPS.get(type(op), (None, None))
            if sym is None:
                self.fail(f"comparison '{type(op).__name__}' is not supported in kernels", node,
                          UnsupportedSyntaxError)
            if left.is_const and right.is_const:
                result = result and bool(fn(left.const, right.const))
            elif sym in ("in", "not in") and _is_number_set(right) and is_number(left):
                # ``n in (1, 2)``: a chain of equality tests
                x = self.materialize(left, node)
                eq = " or ".join(f"({x} == {self.materialize(const(c), node)})" for c in right.const) or "False"
                folded = False
                terms.append(f"({eq})" if sym == "in" else f"(not ({eq}))")
            else:
                if sym in _CONST_ONLY_CMP or not (is_number(left) and is_number(right)):
                    self.type_error(f"cannot compare {self.describe(left)} and {self.describe(right)} "
                                    f"at run time", node)
                folded = False
                terms.append(f"({self.materialize(left, node)} {sym} {self.materialize(right, node)})")
            left = right
        if folded:
            return const(result)
        if not result:
            return const(False)
        return scalar("bool", " and ".join(terms) if len(terms) > 1 else terms[0])

    def expr_IfExp(self, node: ast.IfExp) -> Value:
        test = self.expr(node.test)
        if test.is_const:
            return self.expr(node.body if test.const else node.orelse)
        mark = len(self.em.lines)
        a, b = self.expr(node.body), self.expr(node.orelse)
        if len(self.em.lines) != mark:
            self.fail("a conditional expression whose branches call kernel APIs; use an if statement",
                      node, UnsupportedSyntaxError)
        cond = self.truth(test, node.test)
        if is_number(a) and is_number(b):
            kind = "float" if "float" in (_num_kind(a), _num_kind(b)) else "int"
            return scalar(kind, f"({self.materialize(a, node, kind)} if {cond} else "
                                f"{self.materialize(b, node, kind)})")
        if a.type != b.type or not a.type.fields:
            self.type_error(f"the branches of a conditional expression differ: {self.describe(a)} and "
                            f"{self.describe(b)}", node)
        return Value(a.type, code=tuple(f"({x} if {cond} else {y})" for x, y in zip(a.code, b.code)))

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Value:
        self.fail("f-strings are not supported in kernels; use asc.printf with a format string", node,
                  UnsupportedSyntaxError)

    # ------------------------------------------------------------------ calls

    def expr_Call(self, node: ast.Call) -> Value:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.fail("*args and **kwargs are not supported in kernel calls", node, UnsupportedSyntaxError)
        if isinstance(node.func, ast.Attribute):
            recv = self.expr(node.func.value)
            if not recv.is_const:
                return self.method_call(recv, node.func.attr, node)
            try:
                fn = const(getattr(recv.const, node.func.attr))
            except AttributeError:
                self.fail(f"{self.describe(recv)} has no attribute '{node.func.attr}'", node, UnknownAPIError)
        else:
            fn = self.expr(node.func)
        if not fn.is_const:
            rule = registry.METHOD_RULES.get((type(fn.type), "__call__"))
            if rule is None:
                self.fail(f"{self.describe(fn)} is not callable", node, UnsupportedSyntaxError)
            return self._apply(rule, "__call__", node, recv=fn)
        return self.call_const(fn.const, node)

    def _apply(self, rule: registry.Rule, name: str, node: ast.Call, recv: Value | None = None) -> Value:
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        out = rule(self, registry.Call(name, node, args, kwargs, recv=recv,
                                       recv_node=getattr(node.func, "value", None)))
        return const(None) if out is None else out

    def method_call(self, recv: Value, name: str, node: ast.Call) -> Value:
        rule = registry.METHOD_RULES.get((type(recv.type), name))
        if rule is None:
            self.fail(f"{recv.type.describe()} has no method '{name}'", node, UnknownAPIError)
        return self._apply(rule, name, node, recv)

    def call_const(self, fn: Any, node: ast.Call) -> Value:
        rule = registry.func_rule(fn)
        if rule is not None:
            return self._apply(rule, getattr(fn, "__name__", str(fn)), node)
        if isinstance(fn, KernelFunction):
            return self.inline(fn, node)
        if builtin_name(fn) is not None:
            self.fail(f"asc.{builtin_name(fn)} is not supported by npuemu yet", node, UnknownAPIError)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        if all(a.is_const for a in args) and all(v.is_const for v in kwargs.values()) and callable(fn):
            try:  # a plain Python function on constants runs at compile time
                return const(fn(*[a.const for a in args], **{k: v.const for k, v in kwargs.items()}))
            except errors.NpuemuError:
                raise
            except Exception as exc:  # noqa: BLE001
                self.fail(f"compile-time call {getattr(fn, '__name__', fn)}(...) failed: "
                          f"{type(exc).__name__}: {exc}", node)
        name = getattr(fn, "__qualname__", repr(fn))
        self.fail(f"{name}() is called with run-time values; only @asc.jit helpers and the kernel API can "
                  f"take them (decorate {name} with @asc.jit?)", node, UnknownAPIError)

    def inline(self, jitfn: Any, node: ast.Call) -> Value:
        parsed = parse_function(jitfn.fn)
        if len(self.scopes) > MAX_INLINE_DEPTH or any(s.parsed.fn is jitfn.fn for s in self.scopes):
            self.fail(f"recursive call of @asc.jit helper '{parsed.name}' (helpers are inlined)", node,
                      UnsupportedSyntaxError)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        return self.inline_values(jitfn, args, kwargs, node)

    def inline_values(self, jitfn: Any, args: list[Value], kwargs: dict[str, Value], node: ast.AST) -> Value:
        """Inline the helper ``jitfn`` called at ``node`` with argument values already lowered."""
        parsed = parse_function(jitfn.fn)
        if len(self.scopes) > MAX_INLINE_DEPTH or any(s.parsed.fn is jitfn.fn for s in self.scopes):
            self.fail(f"recursive call of @asc.jit helper '{parsed.name}' (helpers are inlined)", node,
                      UnsupportedSyntaxError)
        sig = inspect.signature(jitfn.fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            self.fail(f"bad call of helper '{parsed.name}': {exc}", node, KernelTypeError)
        params: dict[str, Value] = {}
        for pname, p in sig.parameters.items():
            v = bound.arguments[pname] if pname in bound.arguments else const(p.default)
            if is_constexpr(p.annotation) and not v.is_const:
                self.type_error(f"argument '{pname}' of helper '{parsed.name}' is a ConstExpr but got a "
                                f"runtime {v.type.describe()}", node)
            params[pname] = v
        self._inline_count += 1
        scope = Scope(parsed, f"h{self._inline_count}_", self.loc(node))
        self.scopes.append(scope)
        try:
            self.bind_params(params, node)
            self.block(parsed.tree.body, top_level=True)
        finally:
            self.scopes.pop()
        return scope.returned if scope.returned is not None else const(None)


def _is_number_set(v: Value) -> bool:
    """A constant tuple, list or range of numbers (the right side of a runtime ``in``)."""
    return v.is_const and isinstance(v.const, (tuple, list, range)) and all(
        isinstance(c, (int, float)) and not hasattr(c, "__members__") for c in v.const)


def _num_kind(v: Value) -> str:
    if isinstance(v.type, ScalarT):
        return "int" if v.type.kind == "bool" else v.type.kind
    return "float" if isinstance(v.const, float) else "int"
