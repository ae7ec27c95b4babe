"""Rules for ``data_copy``, ``data_copy_pad`` and ``set_pad_value``.

The rule picks the instruction from the operand kinds (GM or local, and which
memory) and the parameter struct, checks dtypes and positions at compile time,
and passes every struct field as a runtime integer: the instructions check the
field ranges, so a constant and a computed ``block_len`` fail the same way.
"""
from __future__ import annotations

from ...language import data_copy as lang
from ...language import dtype as dt
from ...language.enums import POSITION_MEMORY, VECTOR_POSITIONS, Hardware, TPosition
from ...language.params import DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams
from ..registry import Call, rule
from ..types import GlobalTensorT, LocalTensorT, ScalarT, Value
from .common import is_int_like, is_params

# memories a strided data_copy may move to / from GM (MTE2 into UB or L1, MTE3 out of UB)
_GM_IN = (Hardware.UB, Hardware.L1)
_GM_OUT = (Hardware.UB,)


@rule(lang.data_copy)
def _data_copy(lw, call: Call) -> None:
    if len(call.args) + len(call.kwargs) < 3:
        lw.fail("data_copy(dst, src, count | params) needs three arguments", call.node)
    a = call.bind(lw, "dst, src, count=?, repeat_params=?, intri_params=?")
    dst, src = a["dst"], a["src"]
    third = a.get("count") or a.get("repeat_params") or a.get("intri_params")
    if third is None:
        lw.fail("data_copy(dst, src, count | params) needs a count or a DataCopyParams", call.node)
    if is_params(third, DataCopyParams):
        _strided(lw, call, dst, src, third)
        return
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
        _ub_to_ub(lw, call, dst, src)
        lw.emit_isa("datamove", "local_to_local", [
            "_lm", dst.code[0], dst.code[1], src.code[0], src.code[1], count,
            str(dst.type.dtype.sizeof())], call.node)
    else:
        _bad_path(lw, call, dst, src)


def _strided(lw, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``data_copy(dst, src, DataCopyParams(block_count, block_len, src_stride, dst_stride))``."""
    geometry = _fields(lw, call, p, ("block_count", "block_len", "src_stride", "dst_stride"))
    if isinstance(dst.type, LocalTensorT) and isinstance(src.type, GlobalTensorT):
        _same(lw, call, dst, src)
        _memory(lw, call, dst, _GM_IN, "the destination of a GM -> local data_copy")
        lw.emit_isa("datamove", "gm_to_local_strided", [
            "_lm", "_gm", *dst.code, *src.code, *geometry, str(dst.type.dtype.sizeof())], call.node)
    elif isinstance(dst.type, GlobalTensorT) and isinstance(src.type, LocalTensorT):
        _same(lw, call, src, dst)
        _memory(lw, call, src, _GM_OUT, "the source of a local -> GM data_copy")
        lw.emit_isa("datamove", "local_to_gm_strided", [
            "_gm", "_lm", *dst.code, *src.code, *geometry, str(src.type.dtype.sizeof())], call.node)
    elif isinstance(dst.type, LocalTensorT) and isinstance(src.type, LocalTensorT):
        _ub_to_ub(lw, call, dst, src)
        lw.emit_isa("datamove", "local_to_local_strided", [
            "_lm", *dst.code, *src.code, *geometry, str(dst.type.dtype.sizeof())], call.node)
    else:
        _bad_path(lw, call, dst, src)


@rule(lang.data_copy_pad)
def _data_copy_pad(lw, call: Call) -> None:
    a = call.bind(lw, "dst, src, data_copy_params, pad_params=?")
    dst, src, p = a["dst"], a["src"], a["data_copy_params"]
    pad = a.get("pad_params")
    legacy = is_params(p, DataCopyParams)
    if not (legacy or is_params(p, DataCopyExtParams)):
        lw.type_error(f"data_copy_pad needs a DataCopyExtParams or DataCopyParams, got {lw.describe(p)}",
                      call.node)
    geometry = _fields(lw, call, p, ("block_count", "block_len", "src_stride", "dst_stride"))
    if isinstance(dst.type, LocalTensorT) and isinstance(src.type, GlobalTensorT):
        _same(lw, call, dst, src)
        _vector(lw, call, dst, "the destination of data_copy_pad")
        _pad_in(lw, call, dst, src, geometry, legacy, pad)
    elif isinstance(dst.type, GlobalTensorT) and isinstance(src.type, LocalTensorT):
        _same(lw, call, src, dst)
        _vector(lw, call, src, "the source of data_copy_pad")
        if pad is not None:
            lw.type_error("data_copy_pad from UB to GM takes no padding parameters", call.node)
        lw.emit_isa("datamove", "ub_to_gm_pad", [
            "_gm", "_lm", *dst.code, *src.code, *geometry, str(int(legacy)), str(src.type.dtype.sizeof())],
            call.node)
    else:
        lw.type_error(f"data_copy_pad from {lw.describe(src)} to {lw.describe(dst)} is not supported "
                      f"(GM -> UB or UB -> GM)", call.node)


def _pad_in(lw, call: Call, dst: Value, src: Value, geometry: list[str], legacy: bool, pad: Value | None) -> None:
    """GM -> UB: load the pad-value register if ``is_pad``, then copy."""
    d = dst.type.dtype
    if pad is None:
        lw.type_error("data_copy_pad from GM to UB needs pad parameters (DataCopyPadExtParams, or "
                      "DataCopyPadParams with a DataCopyParams)", call.node)
    want = DataCopyPadParams if legacy else DataCopyPadExtParams
    if not is_params(pad, want):
        lw.type_error(f"data_copy_pad with {_params_name(legacy)} takes a {want.__name__}, got {lw.describe(pad)}",
                      call.node)
    if not legacy and pad.item("dtype").const is not d:
        lw.type_error(f"DataCopyPadExtParams is for {pad.item('dtype').const.name} but the tensors are "
                      f"{d.name}", call.node)
    left, right = (lw.int_expr(pad.item(f), call.node, f) for f in ("left_padding", "right_padding"))
    _load_pad_register(lw, call, pad, legacy, d)
    lw.emit_isa("datamove", "gm_to_ub_pad", [
        "_lm", "_st", "_gm", *dst.code, *src.code, *geometry, left, right, str(int(legacy)), str(d.sizeof()),
        str(_pad_kind(d))], call.node)


def _params_name(legacy: bool) -> str:
    return "DataCopyParams" if legacy else "DataCopyExtParams"


def _load_pad_register(lw, call: Call, pad: Value, legacy: bool, d: dt.DataType) -> None:
    """``is_pad=True`` writes ``padding_value`` into the pad-value register before the copy."""
    is_pad = pad.item("is_pad")
    if is_pad.is_const and not is_pad.const:
        return
    value = pad.item("padding_value")
    if legacy:
        fn, expr = "set_pad_raw", lw.u64_expr(value, call.node, "padding_value")
    else:
        fn, expr = _pad_setter(lw, call, value)
    line = lw.call_isa("datamove", fn, ["_st", expr, str(d.sizeof())], call.node)
    if is_pad.is_const:
        lw.emit(line)
        return
    with lw.em.block(f"if {lw.truth(is_pad, call.node)}:"):
        lw.emit(line)


def _pad_setter(lw, call: Call, value: Value) -> tuple[str, str]:
    if (isinstance(value.type, ScalarT) and value.type.kind == "float") or \
            (value.is_const and isinstance(value.const, float)):
        return "set_pad_float", lw.materialize(value, call.node, "float")
    return "set_pad_int", lw.u64_expr(value, call.node, "padding_value")


def _pad_kind(d: dt.DataType) -> int:
    """How the pad-value register converts to ``d`` (``K_*`` in isa/datamove.py)."""
    from ...isa import datamove as isa
    if d.is_int:
        return isa.K_INT
    return {dt.float32: isa.K_F32, dt.float64: isa.K_F64, dt.float16: isa.K_F16, dt.bfloat16: isa.K_BF16}[d]


@rule(lang.set_pad_value)
def _set_pad_value(lw, call: Call) -> None:
    a = call.bind(lw, f"padding_value, pos={int(TPosition.MAX)}")
    pos = a["pos"]
    p = lw.const_value(pos, call.node, "pos")
    if p is not None and p not in (TPosition.MAX, TPosition.VECIN, TPosition.VECOUT):
        lw.type_error(f"set_pad_value pos must be TPosition.MAX, VECIN or VECOUT, got {p!r}", call.node)
    value = a["padding_value"]
    if not (isinstance(value.type, ScalarT) or (value.is_const and isinstance(value.const, (int, float)))):
        lw.type_error(f"set_pad_value needs a number, got {lw.describe(value)}", call.node)
    fn, expr = _pad_setter(lw, call, value)
    # the element size is not known here; 0 skips the 64-bit check until a copy loads the register
    lw.emit_isa("datamove", fn, ["_st", expr, "0"], call.node)


# ---------------------------------------------------------------------------- operand checks


def _fields(lw, call: Call, p: Value, names: tuple[str, ...]) -> list[str]:
    return [lw.int_expr(p.item(n), call.node, f"{p.type.cls.__name__}.{n}") for n in names]


def _same(lw, call: Call, local: Value, glob: Value) -> None:
    if glob.type.dtype is None:
        lw.fail("GlobalTensor used before set_global_buffer", call.node)
    if local.type.dtype is not glob.type.dtype:
        lw.type_error(f"{call.name} between {glob.type.dtype.name} and {local.type.dtype.name}: the element "
                      f"types must match (use cast for conversions)", call.node)


def _memory(lw, call: Call, t: Value, allowed: tuple[Hardware, ...], what: str) -> None:
    hw = POSITION_MEMORY.get(t.type.pos)
    if hw not in allowed:
        names = " or ".join(h.name for h in allowed)
        lw.type_error(f"{what} is in position {t.type.pos.name}; this path moves data to/from {names}",
                      call.node)


def _vector(lw, call: Call, t: Value, what: str) -> None:
    if t.type.pos not in VECTOR_POSITIONS:
        lw.type_error(f"{what} is in position {t.type.pos.name}; data_copy_pad moves between GM and UB "
                      f"(VECIN/VECOUT/VECCALC)", call.node)


def _ub_to_ub(lw, call: Call, dst: Value, src: Value) -> None:
    if dst.type.pos not in VECTOR_POSITIONS or src.type.pos not in VECTOR_POSITIONS:
        lw.fail("local-to-local data_copy is a UB to UB copy (VECIN/VECOUT/VECCALC)", call.node)
    if dst.type.dtype is not src.type.dtype:
        lw.type_error(f"data_copy between {src.type.dtype.name} and {dst.type.dtype.name}: the element types "
                      f"must match", call.node)


def _bad_path(lw, call: Call, dst: Value, src: Value) -> None:
    lw.type_error(f"data_copy from {lw.describe(src)} to {lw.describe(dst)} is not a supported path", call.node)
