"""Lowering rules: how each kernel-language call becomes generated code.

A rule is a function ``rule(lw, call) -> Value | None`` where ``lw`` is the
lowerer, seen through :class:`~npuemu.frontend.context.LoweringContext` (it
emits code and reports errors), and ``call`` is a :class:`Call` (the lowered
arguments).  Rules are registered against the language object they
implement::

    @rule(lang.vec_binary.add)
    def _add(lw, call):
        a = call.bind_to(lw, lang.vec_binary.add)     # the arguments, by the name the stub gives them

    @method(LocalTensorT, "get_value")
    def _get_value(lw, call): ...

Keeping rules in a table (rather than an if/elif ladder in the visitor) lets
each instruction family live in its own module under ``frontend/rules``.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Optional

from . import binding
from .types import KType, Value, const

if TYPE_CHECKING:
    from .context import LoweringContext

Rule = Callable[["LoweringContext", "Call"], Optional[Value]]
AttrRule = Callable[["LoweringContext", Value, ast.AST], Value]

FUNC_RULES: dict[int, tuple[Any, Rule]] = {}
METHOD_RULES: dict[tuple[type, str], Rule] = {}
ATTR_RULES: dict[tuple[type, str], AttrRule] = {}
# ``with recv.m(...) as name: body`` runs as ``while recv.m(...): name = recv.<counter>(); body``:
# (receiver type, method m) -> the counter method's name (``Matmul.iterate``)
LOOP_CONTEXTS: dict[tuple[type, str], str] = {}

_MISSING = object()
_REQUIRED = object()


def _key(obj: Any) -> int:
    return id(obj)


def rule(*targets: Any) -> Callable[[Rule], Rule]:
    """Register a rule for calls of the given language functions or classes."""

    def deco(fn: Rule) -> Rule:
        for t in targets:
            FUNC_RULES[_key(t)] = (t, fn)
        return fn

    return deco


def method(ktype: type[KType], *names: str) -> Callable[[Rule], Rule]:
    """Register a rule for ``obj.name(...)`` where ``obj`` has static type ``ktype``."""

    def deco(fn: Rule) -> Rule:
        for n in names:
            METHOD_RULES[(ktype, n)] = fn
        return fn

    return deco


def attribute(ktype: type[KType], *names: str) -> Callable[[AttrRule], AttrRule]:
    """Register a rule for reading ``obj.name`` where ``obj`` has static type ``ktype``."""

    def deco(fn: AttrRule) -> AttrRule:
        for n in names:
            ATTR_RULES[(ktype, n)] = fn
        return fn

    return deco


def func_rule(obj: Any) -> Rule | None:
    entry = FUNC_RULES.get(_key(obj))
    if entry is None or entry[0] is not obj:
        return None
    return entry[1]


@dataclass
class Call:
    """A call site being lowered: its name, receiver, arguments and AST node."""

    name: str
    node: ast.Call
    args: list[Value]
    kwargs: dict[str, Value]
    recv: Value | None = None
    recv_node: ast.AST | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def bind_to(self, lw: LoweringContext, stub: Any) -> dict[str, Value]:
        """The arguments by parameter name (defaults included), bound to the form of the language function,
        method or class ``stub`` that they match (see :mod:`.binding`)."""
        return binding.bind(lw, self, stub)

    def bind(self, lw: LoweringContext, spec: str) -> dict[str, Value]:
        """Match arguments against ``spec``: ``"dst, src, count=?, mask=None"``, for calls without a stub.

        Parameters without a default are required; ``=?`` marks an optional
        parameter that is absent (not in the result) unless given; any other
        default is a Python literal used as a constant.
        """
        params: list[tuple[str, Any]] = []
        for part in (p.strip() for p in spec.split(",")):
            if not part:
                continue
            if "=" in part:
                name, default = (s.strip() for s in part.split("=", 1))
                params.append((name, _MISSING if default == "?" else ast.literal_eval(default)))
            else:
                params.append((part, _REQUIRED))
        required = {n for n, d in params if d is _REQUIRED}
        names = [n for n, _ in params]
        if len(self.args) > len(params):
            lw.type_error(f"{self.name}() takes at most {len(params)} arguments ({len(self.args)} given)",
                          self.node)
        out: dict[str, Value] = dict(zip(names, self.args))
        for k, v in self.kwargs.items():
            if k not in names:
                lw.type_error(f"{self.name}() got an unexpected keyword argument '{k}' "
                              f"(parameters: {', '.join(names) or 'none'})", self.node)
            if k in out:
                lw.type_error(f"{self.name}() got multiple values for argument '{k}'", self.node)
            out[k] = v
        for n, d in params:
            if n not in out:
                if n in required:
                    lw.type_error(f"{self.name}() missing required argument '{n}'", self.node)
                if d is not _MISSING:
                    out[n] = const(d)
        return out


# Registering the rules needs only this module: they import it, never the lowerer, so the table is
# complete whichever of this module, ``lower`` or a rules module is imported first.
from . import rules  # noqa: E402,F401
