"""Lowering of ``ArrayField`` reads: ``cfg.splits[i]`` and ``len(cfg.splits)``.

An array field of a struct argument is one kernel parameter (see
``jit._build``); its static type :class:`~npuemu.frontend.types.ArrayT` names
that parameter.  A constant index is checked here and read directly; a
run-time index reads through ``isa.tiling_data.array_item``, which checks it.
``len()`` is the constant ``n`` (the generic ``len`` rule reads ``type.n``).
"""
from __future__ import annotations

import ast

from ...errors import UnsupportedSyntaxError
from ..registry import Call, method
from ..context import LoweringContext
from ..types import ArrayT, Value, scalar
from .common import is_int_like


@method(ArrayT, "__getitem__")
def _array_item(lw: LoweringContext, call: Call) -> Value:
    arr: ArrayT = call.recv.type
    if isinstance(getattr(call.node, "slice", None), ast.Slice):
        lw.fail(f"{arr.describe()}: tiling-data arrays are read one element at a time (a[i])", call.node,
                UnsupportedSyntaxError)
    index = call.args[0]
    if not is_int_like(index):
        lw.type_error(f"{arr.describe()} needs an integer index, got {lw.describe(index)}", call.node)
    if index.is_const:
        i = int(index.const)
        if not 0 <= i < arr.n:
            lw.type_error(f"index {i} is out of range for {arr.describe()} (valid: 0 to {arr.n - 1})", call.node)
        return scalar(arr.kind, f"{arr.var}[{i}]")
    return scalar(arr.kind, lw.call_isa("tiling_data", "array_item",
                                        [arr.var, lw.int_expr(index, call.node)], call.node))
