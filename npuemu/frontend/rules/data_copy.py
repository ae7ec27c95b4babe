"""Rules for ``data_copy`` (and, as they land, ``data_copy_pad`` / ``set_pad_value``)."""
from __future__ import annotations

from ...language import data_copy as lang
from ...language.enums import VECTOR_POSITIONS
from ..registry import Call, rule
from ..types import GlobalTensorT, LocalTensorT
from .common import is_int_like


@rule(lang.data_copy)
def _data_copy(lw, call: Call) -> None:
    if len(call.args) + len(call.kwargs) < 3:
        lw.fail("data_copy(dst, src, count | params) needs three arguments", call.node)
    a = call.bind(lw, "dst, src, count=?, params=?, repeat_params=?")
    dst, src = a["dst"], a["src"]
    third = a.get("count") or a.get("params") or a.get("repeat_params")
    if not is_int_like(third):
        lw.fail(f"data_copy with {lw.describe(third)} is not supported yet", call.node)
    count = lw.int_expr(third, call.node, "count")
    if isinstance(dst.type, LocalTensorT) and isinstance(src.type, GlobalTensorT):
        _same(lw, call, dst, src)
        lw.emit_isa("datamove", "gm_to_local", [
            "_lm", "_gm", dst.code[0], dst.code[1], src.code[0], src.code[1], src.code[2], count,
            str(dst.type.dtype.sizeof())], call.node)
    elif isinstance(dst.type, GlobalTensorT) and isinstance(src.type, LocalTensorT):
        _same(lw, call, src, dst)
        lw.emit_isa("datamove", "local_to_gm", [
            "_gm", "_lm", dst.code[0], dst.code[1], dst.code[2], src.code[0], src.code[1], count,
            str(src.type.dtype.sizeof())], call.node)
    elif isinstance(dst.type, LocalTensorT) and isinstance(src.type, LocalTensorT):
        if dst.type.pos not in VECTOR_POSITIONS or src.type.pos not in VECTOR_POSITIONS:
            lw.fail("local-to-local data_copy with a count is a UB to UB copy (VECIN/VECOUT/VECCALC)", call.node)
        _same(lw, call, dst, src)
        lw.emit_isa("datamove", "local_to_local", [
            "_lm", dst.code[0], dst.code[1], src.code[0], src.code[1], count,
            str(dst.type.dtype.sizeof())], call.node)
    else:
        lw.type_error(f"data_copy from {lw.describe(src)} to {lw.describe(dst)} is not a supported path",
                      call.node)


def _same(lw, call: Call, local, glob) -> None:
    if glob.type.dtype is None:
        lw.fail("GlobalTensor used before set_global_buffer", call.node)
    if local.type.dtype.sizeof() != glob.type.dtype.sizeof() or local.type.dtype is not glob.type.dtype:
        lw.type_error(f"data_copy between {glob.type.dtype.name} and {local.type.dtype.name}: the element "
                      f"types must match (use cast for conversions)", call.node)
