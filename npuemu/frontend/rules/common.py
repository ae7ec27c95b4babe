"""Helpers shared by the lowering rules: operand checks and naming conventions."""
from __future__ import annotations

import ast
from typing import Iterable

from ...language import dtype as dt
from ...language.enums import POSITION_MEMORY, VECTOR_POSITIONS, Hardware, TPosition
from ..context import LoweringContext
from ..types import GlobalTensorT, LocalTensorT, RecordT, ScalarT, Value

SUFFIX = {
    dt.int8: "i8", dt.uint8: "u8", dt.int16: "i16", dt.uint16: "u16", dt.int32: "i32", dt.uint32: "u32",
    dt.int64: "i64", dt.uint64: "u64", dt.float16: "f16", dt.bfloat16: "bf16", dt.float32: "f32",
    dt.float64: "f64",
}

# the isa suffix of the raw storage a dtype is moved as (16-bit floats move as uint16 bits)
STORAGE_SUFFIX = {**SUFFIX, dt.float16: "u16", dt.bfloat16: "u16"}


def suffix(d: dt.DataType) -> str:
    return SUFFIX[d]


def memory_of(lw: LoweringContext, pos: TPosition, node: ast.AST | None) -> Hardware:
    try:
        return POSITION_MEMORY[TPosition(pos)]
    except (KeyError, ValueError):
        lw.fail(f"TPosition {TPosition(pos).name if pos in TPosition._value2member_map_ else pos} has no "
                f"on-chip memory behind it", node)


def position_arg(lw: LoweringContext, v: Value, node: ast.AST | None) -> TPosition:
    """A compile-time TPosition argument."""
    p = lw.const_value(v, node, "a TPosition")
    try:
        return TPosition(p)
    except ValueError:
        lw.type_error(f"{p!r} is not a TPosition", node)


def dtype_arg(lw: LoweringContext, v: Value, node: ast.AST | None, what: str = "dtype") -> dt.DataType:
    """A compile-time data type argument (``asc.float32``, ``x.dtype``)."""
    d = lw.const_value(v, node, what)
    if not isinstance(d, dt.DataType) or d is dt.void:
        lw.type_error(f"{what} must be an asc data type (asc.float32, x.dtype, ...), got {d!r}", node)
    return d


def local(lw: LoweringContext, v: Value, node: ast.AST | None, what: str,
          positions: Iterable[TPosition] | None = VECTOR_POSITIONS) -> LocalTensorT:
    """Check ``v`` is a LocalTensor (in one of ``positions``); return its type."""
    if not isinstance(v.type, LocalTensorT):
        lw.type_error(f"{what} must be a LocalTensor, got {lw.describe(v)}", node)
    if positions is not None and v.type.pos not in positions:
        allowed = ", ".join(sorted(p.name for p in positions))
        lw.type_error(f"{what} is in position {v.type.pos.name}; this instruction accepts {allowed}", node)
    return v.type


def global_tensor(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> GlobalTensorT:
    if not isinstance(v.type, GlobalTensorT) or v.type.dtype is None:
        lw.type_error(f"{what} must be a GlobalTensor bound with set_global_buffer, got {lw.describe(v)}", node)
    return v.type


def check_dtype(lw: LoweringContext, op: str, d: dt.DataType, allowed: Iterable[dt.DataType],
                node: ast.AST | None) -> None:
    allowed = tuple(allowed)
    if d not in allowed:
        names = ", ".join(a.name for a in allowed)
        lw.type_error(f"{op} does not support {d.name} on this platform (supported: {names})", node)


def same_dtype(lw: LoweringContext, op: str, node: ast.AST | None, *tensors: tuple[str, Value]) -> dt.DataType:
    first_name, first = tensors[0]
    for name, t in tensors[1:]:
        if t.type.dtype is not first.type.dtype:  # type: ignore[attr-defined]
            lw.type_error(f"{op}: {name} is {t.type.dtype.name} but {first_name} is "  # type: ignore[attr-defined]
                          f"{first.type.dtype.name}", node)  # type: ignore[attr-defined]
    return first.type.dtype  # type: ignore[attr-defined]


def is_params(v: Value, cls: type) -> bool:
    return isinstance(v.type, RecordT) and v.type.cls is cls


def is_int_like(v: Value) -> bool:
    if isinstance(v.type, ScalarT):
        return v.type.kind in ("int", "bool")
    return v.is_const and isinstance(v.const, int)


# --------------------------------------------------------------------------- vector instruction arguments


def const_bool(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> bool:
    """A compile-time bool argument (a template parameter in Ascend C, such as ``is_set_mask``)."""
    c = lw.const_value(v, node, what)
    if not isinstance(c, (bool, int)):
        lw.type_error(f"{what} must be True or False, got {lw.describe(v)}", node)
    return bool(c)


def mask_operand(lw: LoweringContext, v: Value, node: ast.AST | None) -> list[str]:
    """The ``mask`` argument of a level-0 call as isa arguments ``[is_bits, lo, hi]``.

    An integer is a continuous mask (the first ``mask`` lanes); a list
    ``[mask0]`` or ``[mask0, mask1]`` of uint64 is a bit mask, ``mask0``
    covering lanes 0-63 and ``mask1`` lanes 64-127.
    """
    from ..types import TupleT, const
    if v.is_const and isinstance(v.const, (list, tuple)):
        items = [const(x) for x in v.const]
    elif isinstance(v.type, TupleT):
        items = list(v.items)
    else:
        if not is_int_like(v):
            lw.type_error(f"mask must be an int (continuous mask) or a list of uint64 (bit mask), got "
                          f"{lw.describe(v)}", node)
        return ["False", lw.u64_expr(v, node, "mask"), "0"]
    if not 1 <= len(items) <= 2:
        lw.type_error(f"a bit mask is a list of one or two uint64 words ([mask0] or [mask0, mask1]), got "
                      f"{len(items)} items", node)
    words = [lw.u64_expr(it, node, f"mask[{i}]") for i, it in enumerate(items)]
    return ["True", words[0], words[1] if len(words) == 2 else "0"]


def repeat_params(lw: LoweringContext, v: Value, cls: type, node: ast.AST | None) -> list[str]:
    """The fields of a ``BinaryRepeatParams``/``UnaryRepeatParams`` argument as isa arguments, in order.

    The struct may be built in the kernel or be a host-side instance (a module constant).
    """
    from ..types import const as const_value
    if v.is_const and isinstance(v.const, cls):
        return [lw.int_expr(const_value(getattr(v.const, name)), node, f"repeat_params.{name}")
                for name in cls.field_names()]
    if not is_params(v, cls):
        lw.type_error(f"repeat_params must be an asc.{cls.__name__}, got {lw.describe(v)}", node)
    return [lw.int_expr(v.item(name), node, f"repeat_params.{name}") for name in cls.field_names()]


# --------------------------------------------------------------------------- literal-free instruction calls
# Numba compiles a called function once per distinct *literal* argument, so ``add(..., 64, 3)`` and
# ``add(..., 128, 7)`` would compile the instruction twice (and again in every other kernel);
# ``np.int64(64)`` is a plain int64 and shares one compilation.  ``lw.emit_isa``/``lw.call_isa`` pass
# literals that way; these helpers do it for expressions rules build themselves.


def plain_arg(arg: str) -> str:
    """An isa argument expression with an int or bool literal turned into a NumPy scalar."""
    if arg in ("True", "False"):
        return f"np.bool_({arg})"
    if arg.lstrip("-").isdigit():
        return f"np.int64({arg})"
    return arg


def plain_int(expr: str) -> str:
    """An integer isa argument as int64 even when it is a variable only ever assigned constants.

    Numba types such a variable (a GlobalTensor's region id, a constant
    struct field held in storage) as a literal, with the effect described
    above.
    """
    return plain_arg(expr) if expr.lstrip("-").isdigit() else f"np.int64({expr})"


def level0_args(lw: LoweringContext, a: dict, params_cls: type, node: ast.AST | None) -> list[str]:
    """The isa arguments of a bound level-0 call after its operands.

    ``is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat_times, *strides``.
    """
    is_set_mask = const_bool(lw, a["is_set_mask"], node, "is_set_mask")
    is_bits, lo, hi = mask_operand(lw, a["mask"], node)
    ints = [lo, hi, lw.int_expr(a["repeat_times"], node, "repeat_times"),
            *repeat_params(lw, a["repeat_params"], params_cls, node)]
    return [str(is_set_mask), is_bits, *(plain_int(c) for c in ints)]


def settle_l0c(lw: LoweringContext, t: Value, node: ast.AST | None) -> None:
    """Before code reads or writes the LocalTensor ``t`` element by element: if it is in L0C, carry out
    the accumulation ``mmad`` left pending there (isa/mmad.py)."""
    if POSITION_MEMORY.get(t.type.pos) == Hardware.L0C:
        lw.emit_isa("mmad", "settle_l0c", ["_st", "_lm"], node)
