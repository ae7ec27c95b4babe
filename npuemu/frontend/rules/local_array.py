"""Rules for ``asc.array``: a NumPy array declared at the top of the generated kernel.

Each ``asc.array`` call site owns one array; executing the call (re)fills it,
as a C array declaration with an initialiser does each time it is reached.
Elements are kept in the storage type of their dtype (float16 as its bits),
read and written through the conversions scalar tensor accesses use.
"""
from __future__ import annotations

from ...language import array as lang
from ...language import dtype as dt
from ..context import LoweringContext
from ..registry import Call, method, rule
from ..types import LocalArrayT, Value, const, is_number, scalar
from .common import dtype_arg
from .tensors import from_storage, scalar_kind, to_storage

MAX_ELEMENTS = 4096       # a scalar-memory array; larger ones belong in a LocalTensor


@rule(lang.array)
def _array(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.array)
    d = dtype_arg(lw, a["dtype"], call.node)
    if d in (dt.void, dt.bool_):
        lw.type_error(f"asc.array of {d.name} is not supported", call.node)
    values, fill = None, a.get("fill_value", const(None))
    if "values" in a:
        spec = a["values"]
        values = list(spec.items) if spec.items else [const(x) for x in lw.const_value(spec, call.node, "values")]
        n = len(values)
    else:
        n = lw.const_value(a["length"], call.node, "the array length")
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_ELEMENTS:
        lw.type_error(f"asc.array length must be a constant int in 1..{MAX_ELEMENTS}, got {n!r}", call.node)
    var = lw.declare_runtime(f"_arr{lw.count('asc.array')}", f"np.zeros({n}, np.{d.storage.name})")
    if values is not None:
        for i, v in enumerate(values):
            if not is_number(v):
                lw.type_error(f"asc.array values must be numbers, got {lw.describe(v)}", call.node)
            lw.emit(f"{var}[{i}] = {to_storage(d, v, lw, call.node)}")
    elif not (fill.is_const and fill.const is None):
        if not is_number(fill):
            lw.type_error(f"asc.array fill_value must be a number, got {lw.describe(fill)}", call.node)
        lw.emit(f"{var}[:] = {to_storage(d, fill, lw, call.node)}")
    return Value(LocalArrayT(d, n, var))


@method(LocalArrayT, "__getitem__")
def _item(lw: LoweringContext, call: Call) -> Value:
    arr: LocalArrayT = call.recv.type
    i = lw.int_expr(call.args[0], call.node, "an asc.array index")
    raw = lw.call_isa("local_array", "item", [arr.var, i], call.node)
    return lw.fresh_value(scalar(scalar_kind(arr.dtype), from_storage(arr.dtype, raw, lw)), "av")


@method(LocalArrayT, "__setitem__")
def _set_item(lw: LoweringContext, call: Call) -> None:
    arr: LocalArrayT = call.recv.type
    i = lw.int_expr(call.args[0], call.node, "an asc.array index")
    v = call.args[1]
    if not is_number(v):
        lw.type_error(f"an asc.array element must be set to a number, got {lw.describe(v)}", call.node)
    lw.emit_isa("local_array", "set_item", [arr.var, i, to_storage(arr.dtype, v, lw, call.node)], call.node)
