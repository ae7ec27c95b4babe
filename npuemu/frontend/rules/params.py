"""Rules for constructing parameter structs (``BinaryRepeatParams(...)``, ``DataCopyParams(...)``, ...).

A struct built in a kernel is a record of its field values: constants stay
constants (so a constant struct selects code at compile time), runtime values
are evaluated once.  The fields, their order and defaults come from the
struct's ``_fields_`` table.
"""
from __future__ import annotations

from ...language import params as P
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import RecordT, Value, const, is_number
from .common import dtype_arg


def _record(lw: LoweringContext, call: Call, cls: type) -> Value:
    names = cls.field_names()
    # the constructor's parameters are the struct's fields: its ``_fields_`` table is the signature
    spec = ", ".join(n + ("" if d is P.REQUIRED else "=?") for n, d, _ in cls._fields_)
    a = call.bind(lw, spec)
    items = []
    for name, default, ctype in cls._fields_:
        v = a.get(name, const(default))
        if ctype == "dtype":
            v = const(dtype_arg(lw, v, call.node, name))
        elif ctype == "const":
            lw.const_value(v, call.node, name)
        elif not (is_number(v) or v.is_const):
            lw.type_error(f"{cls.__name__}.{name} must be a number, got {lw.describe(v)}", call.node)
        items.append(v if v.is_const else lw.fresh_value(v, "p"))
    return Value(RecordT(cls, names), items=tuple(items))


def _register_params() -> None:
    for obj in vars(P).values():
        if isinstance(obj, type) and issubclass(obj, P.ParamStruct) and obj is not P.ParamStruct:
            rule(obj)(lambda lw, call, _cls=obj: _record(lw, call, _cls))


_register_params()


def register_param_struct(cls: type) -> type:
    """Make a ParamStruct subclass defined elsewhere constructible in kernels."""
    rule(cls)(lambda lw, call, _cls=cls: _record(lw, call, _cls))
    return cls
