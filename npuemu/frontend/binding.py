"""Binding a call's arguments to the signatures of the language stub it calls.

The stubs in :mod:`npuemu.language` carry pyasc's signatures, one per C++
overload (``typing.overload``), so the parameter names, their order and their
defaults are written once, where users read them, and rules bind to them with
``call.bind_to(lw, stub)``.  A call binds to the first of the stub's forms
that its arguments fit (their number, the keywords, every required parameter
given) and whose annotations its values match.  Failing that it binds to the
form it comes closest to: the fewest arity problems, then the fewest values
of the wrong type, the first form on a tie.  If the arguments do not fit that
form, the call is rejected in the words Python would use (``add() missing
required argument 'count'``); if only values are of the wrong type, the rule
receives them and says what is wrong in its own terms.
"""
from __future__ import annotations

import functools
import inspect
import types
import typing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..language import core as lang
from ..language.params import ParamStruct
from .types import (AllocatorT, GlobalAddressT, GlobalTensorT, LocalTensorT, RecordT, ScalarT, TBufT, TPipeT,
                    TQueT, TupleT, Value, const, is_number)

if TYPE_CHECKING:
    from .context import LoweringContext
    from .registry import Call

# the static type of the value a kernel holds for an object of each language class
_KTYPES = {lang.LocalTensor: LocalTensorT, lang.GlobalTensor: GlobalTensorT, lang.GlobalAddress: GlobalAddressT,
           lang.TQue: TQueT, lang.TQueBind: TQueT, lang.TBuf: TBufT, lang.TPipe: TPipeT,
           lang.LocalMemAllocator: AllocatorT}
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class Form:
    """One signature of a stub: its parameters (``self`` left out) and their evaluated annotations."""

    params: tuple[inspect.Parameter, ...]
    hints: dict[str, Any]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def positional(self) -> int:
        """How many arguments may be given by position."""
        return sum(p.kind in _POSITIONAL for p in self.params)


@functools.cache
def forms(target: Any) -> tuple[Form, ...]:
    """The signatures of the language function, method or class ``target``, one per overload."""
    fn = inspect.unwrap(target.__init__ if isinstance(target, type) else target)
    overloads = typing.get_overloads(fn) or [fn]
    return tuple(_form(o) for o in overloads)


def _form(fn: Any) -> Form:
    params = list(inspect.signature(fn).parameters.values())
    if params and params[0].name == "self":
        params = params[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise TypeError(f"{fn.__qualname__}: a form to bind to lists its parameters (no *args or **kwargs)")
    hints = typing.get_type_hints(fn)
    return Form(tuple(params), {p.name: hints[p.name] for p in params if p.name in hints})


def bind(lw: LoweringContext, call: Call, target: Any) -> dict[str, Value]:
    """The call's values by parameter name, defaults included, for the form of ``target`` it matches."""
    form = min(forms(target), key=lambda f: (len(_arity_problems(call, f)), _type_mismatches(call, f)))
    problems = _arity_problems(call, form)
    if problems:
        lw.type_error(problems[0], call.node)
    out = dict(zip(form.names, call.args))
    out.update(call.kwargs)
    for p in form.params:
        if p.name not in out:
            out[p.name] = const(p.default)
    return out


def _arity_problems(call: Call, form: Form) -> list[str]:
    """Why the call's arguments do not fit ``form``, in the order Python reports them (empty: they fit)."""
    names = form.names
    out = []
    if len(call.args) > form.positional:
        out.append(f"{call.name}() takes at most {len(names)} arguments ({len(call.args)} given)")
    given = set(names[:len(call.args)])
    for k in call.kwargs:
        if k not in names:
            out.append(f"{call.name}() got an unexpected keyword argument '{k}' "
                       f"(parameters: {', '.join(names) or 'none'})")
        elif k in given:
            out.append(f"{call.name}() got multiple values for argument '{k}'")
    given |= set(call.kwargs)
    out.extend(f"{call.name}() missing required argument '{p.name}'" for p in form.params
               if p.default is p.empty and p.name not in given)
    return out


def _type_mismatches(call: Call, form: Form) -> int:
    """How many of the values the call gives ``form``'s parameters do not match their annotations."""
    given = {**dict(zip(form.names, call.args)), **call.kwargs}
    return sum(name in form.hints and not matches(v, form.hints[name]) for name, v in given.items())


def matches(v: Value, hint: Any) -> bool:
    """Whether kernel value ``v`` can be an argument annotated ``hint`` (unknown annotations match)."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(matches(v, h) for h in typing.get_args(hint))
    if hint is type(None):
        return v.is_const and v.const is None
    if origin in (list, tuple) or hint in (list, tuple):
        return isinstance(v.type, TupleT) or (v.is_const and isinstance(v.const, (list, tuple)))
    if hint in _KTYPES:
        return isinstance(v.type, _KTYPES[hint])
    if hint in (int, bool):
        return _is_int(v)
    if hint is float:
        return is_number(v)
    if isinstance(hint, type) and issubclass(hint, ParamStruct):
        return (isinstance(v.type, RecordT) and v.type.cls is hint) or (v.is_const and isinstance(v.const, hint))
    if isinstance(hint, type) and hint is not object:
        return v.is_const and isinstance(v.const, hint)        # data types, enum members, configs
    return True


def _is_int(v: Value) -> bool:
    if isinstance(v.type, ScalarT):
        return v.type.kind in ("int", "bool")
    return v.is_const and isinstance(v.const, int)


__all__ = ["Form", "forms", "bind", "matches"]
