"""Helpers shared by the lowering rules: operand checks and naming conventions."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterable

from ...language import dtype as dt
from ...language.enums import POSITION_MEMORY, VECTOR_POSITIONS, Hardware, TPosition
from ..types import GlobalTensorT, LocalTensorT, RecordT, ScalarT, Value

if TYPE_CHECKING:
    from ..lower import Lowerer

SUFFIX = {
    dt.int8: "i8", dt.uint8: "u8", dt.int16: "i16", dt.uint16: "u16", dt.int32: "i32", dt.uint32: "u32",
    dt.int64: "i64", dt.uint64: "u64", dt.float16: "f16", dt.bfloat16: "bf16", dt.float32: "f32",
    dt.float64: "f64",
}

# the isa suffix of the raw storage a dtype is moved as (16-bit floats move as uint16 bits)
STORAGE_SUFFIX = {**SUFFIX, dt.float16: "u16", dt.bfloat16: "u16"}


def suffix(d: dt.DataType) -> str:
    return SUFFIX[d]


def memory_of(lw: "Lowerer", pos: TPosition, node: ast.AST | None) -> Hardware:
    try:
        return POSITION_MEMORY[TPosition(pos)]
    except (KeyError, ValueError):
        lw.fail(f"TPosition {TPosition(pos).name if pos in TPosition._value2member_map_ else pos} has no "
                f"on-chip memory behind it", node)


def local(lw: "Lowerer", v: Value, node: ast.AST | None, what: str,
          positions: Iterable[TPosition] | None = VECTOR_POSITIONS) -> LocalTensorT:
    """Check ``v`` is a LocalTensor (in one of ``positions``); return its type."""
    if not isinstance(v.type, LocalTensorT):
        lw.type_error(f"{what} must be a LocalTensor, got {lw.describe(v)}", node)
    if positions is not None and v.type.pos not in positions:
        allowed = ", ".join(sorted(p.name for p in positions))
        lw.type_error(f"{what} is in position {v.type.pos.name}; this instruction accepts {allowed}", node)
    return v.type


def global_tensor(lw: "Lowerer", v: Value, node: ast.AST | None, what: str) -> GlobalTensorT:
    if not isinstance(v.type, GlobalTensorT) or v.type.dtype is None:
        lw.type_error(f"{what} must be a GlobalTensor bound with set_global_buffer, got {lw.describe(v)}", node)
    return v.type


def check_dtype(lw: "Lowerer", op: str, d: dt.DataType, allowed: Iterable[dt.DataType],
                node: ast.AST | None) -> None:
    allowed = tuple(allowed)
    if d not in allowed:
        names = ", ".join(a.name for a in allowed)
        lw.type_error(f"{op} does not support {d.name} on this platform (supported: {names})", node)


def same_dtype(lw: "Lowerer", op: str, node: ast.AST | None, *tensors: tuple[str, Value]) -> dt.DataType:
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


def tensor_args(v: Value) -> list[str]:
    """Runtime components of a LocalTensor as isa arguments: address, element count."""
    return [v.code[0], v.code[1]]
