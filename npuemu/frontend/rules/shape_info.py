"""Rules for ``set_shape_info``/``get_shape_info`` of LocalTensor and GlobalTensor.

A ShapeInfo is compile-time metadata: npuemu keeps the one set on a tensor
with the lowering, keyed by the tensor's runtime parts (the same variables
for every name bound to that tensor; a sub-tensor ``t[k:]`` is another
tensor and has none).  ``dump_tensor`` without a ``shape_info`` prints a
tensor with the shape set on it, as Ascend C's DumpTensor does.
"""
from __future__ import annotations

import weakref
from typing import Any

from ...language import core as lang
from ...language.params import ShapeInfo
from ..context import LoweringContext
from ..registry import Call, method
from ..types import GlobalTensorT, LocalTensorT, RecordT, Value, const
from .common import is_params

# lowering context -> tensor runtime parts -> shape set on it
_SHAPES: "weakref.WeakKeyDictionary[Any, dict[tuple[str, ...], tuple[int, ...]]]" = weakref.WeakKeyDictionary()


def shape_of(lw: LoweringContext, v: Value, node, what: str) -> tuple[int, ...] | None:
    """The shape of a ShapeInfo argument (None for ``None``)."""
    if v.is_const and v.const is None:
        return None
    if v.is_const and isinstance(v.const, ShapeInfo):
        shape = v.const.shape
    elif is_params(v, ShapeInfo):
        shape = v.item("shape").const
    else:
        lw.type_error(f"{what} must be a ShapeInfo, got {lw.describe(v)}", node)
    if not (isinstance(shape, (tuple, list)) and shape and
            all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape)):
        lw.type_error(f"ShapeInfo shape must be a non-empty tuple of positive ints, got {shape!r}", node)
    return tuple(shape)


def recorded_shape(lw: LoweringContext, t: Value) -> tuple[int, ...] | None:
    """The shape ``set_shape_info`` gave tensor ``t``, if any."""
    return _SHAPES.get(lw, {}).get(tuple(t.code))


@method(LocalTensorT, "set_shape_info")
@method(GlobalTensorT, "set_shape_info")
def _set_shape_info(lw: LoweringContext, call: Call) -> None:
    cls = lang.LocalTensor if isinstance(call.recv.type, LocalTensorT) else lang.GlobalTensor
    shape = shape_of(lw, call.bind_to(lw, cls.set_shape_info)["shape_info"], call.node, "set_shape_info's argument")
    _SHAPES.setdefault(lw, {})[tuple(call.recv.code)] = shape


@method(LocalTensorT, "get_shape_info")
@method(GlobalTensorT, "get_shape_info")
def _get_shape_info(lw: LoweringContext, call: Call) -> Value:
    cls = lang.LocalTensor if isinstance(call.recv.type, LocalTensorT) else lang.GlobalTensor
    call.bind_to(lw, cls.get_shape_info)
    info = ShapeInfo(recorded_shape(lw, call.recv) or ())
    return Value(RecordT(ShapeInfo, ShapeInfo.field_names()),
                 items=tuple(const(getattr(info, n)) for n in ShapeInfo.field_names()))
