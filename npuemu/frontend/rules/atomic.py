"""Rules for the store-atomic config register: ``set_atomic_*``, ``set_store_atomic_config`` and
``get_store_atomic_config``.

Types and operations are compile-time arguments (C++ template parameters in
Ascend C), so an unsupported one is a compile-time error; the register is a
run-time state of the core, which the GM-writing instructions read
(``isa/datamove.py``, ``isa/fixpipe.py``: a data type other than the atomic
type faults there, naming the line).
"""
from __future__ import annotations

from typing import Callable

from ...isa import atomic as isa
from ...language import atomic as lang
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import TupleT, Value, scalar
from .common import check_dtype, dtype_arg

# npuemu's system GM region (the launch's lock word lives there)
_SYSTEM = "_gm[len(_gm) - 1]"

_OPS: dict[Callable, int] = {lang.set_atomic_add: isa.OP_SUM, lang.set_atomic_max: isa.OP_MAX,
                             lang.set_atomic_min: isa.OP_MIN}


def _atomic_type(lw: LoweringContext, call: Call, stub: Callable, v: Value) -> int:
    d = dtype_arg(lw, v, call.node, f"{call.name}'s dtype")
    check_dtype(lw, call.name, d, lang.DTYPES[stub], call.node)
    return lang.atomic_dtype(d)


def _setter(stub: Callable, op: int) -> None:
    """The rule of ``set_atomic_add/max/min``: operation ``op``, and the type when ``dtype`` is given."""

    def set_op(lw: LoweringContext, call: Call) -> None:
        d = call.bind_to(lw, stub).get("dtype")
        if d is None or (d.is_const and d.const is None):
            lw.emit_isa("atomic", "set_op", ["_st", _SYSTEM, str(op)], call.node)
            return
        t = _atomic_type(lw, call, stub, d)
        lw.emit_isa("atomic", "set_config", ["_st", _SYSTEM, str(t), str(op)], call.node)

    rule(stub)(set_op)


for _stub, _op in _OPS.items():
    _setter(_stub, _op)


@rule(lang.set_atomic_none)
def _set_atomic_none(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, lang.set_atomic_none)
    lw.emit_isa("atomic", "set_config", ["_st", _SYSTEM, str(isa.NONE), str(isa.OP_SUM)], call.node)


@rule(lang.set_atomic_type)
def _set_atomic_type(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_atomic_type)
    t = _atomic_type(lw, call, lang.set_atomic_type, a["dtype"])
    lw.emit_isa("atomic", "set_type", ["_st", _SYSTEM, str(t)], call.node)


def _enum(lw: LoweringContext, call: Call, v: Value, cls: type, what: str) -> int:
    c = lw.const_value(v, call.node, what) if v.is_const else None
    if isinstance(c, bool) or not isinstance(c, int) or c not in {int(m) for m in cls}:
        names = ", ".join(f"{cls.__name__}.{m.name}" for m in cls)
        lw.type_error(f"set_store_atomic_config's {what} must be a compile-time {cls.__name__} ({names}), "
                      f"got {lw.describe(v)}", call.node)
    return int(c)


@rule(lang.set_store_atomic_config)
def _set_store_atomic_config(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_store_atomic_config)
    t = _enum(lw, call, a["atomic_type"], lang.AtomicDtype, "atomic_type")
    op = _enum(lw, call, a["atomic_op"], lang.AtomicOp, "atomic_op")
    lw.emit_isa("atomic", "set_config", ["_st", _SYSTEM, str(t), str(op)], call.node)


@rule(lang.get_store_atomic_config)
def _get_store_atomic_config(lw: LoweringContext, call: Call) -> Value:
    call.bind(lw, "")
    fn = lw.isa("atomic", "config")
    fields = tuple(lw.fresh_value(scalar("int", f"{fn}(_st, {k})"), "atomic") for k in range(2))
    return Value(TupleT(2), items=fields)
