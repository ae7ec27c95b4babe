"""Rules for compare and select (``compare``, ``compare_scalar``, ``get/set_cmp_mask``, ``select``)."""
from __future__ import annotations

import ast

from ...isa import vec_cmpsel as isa
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_cmpsel as lang
from ...language.enums import CMPMODE, SelMode
from ..registry import Call, rule
from ..types import LocalTensorT, ScalarT, Value, is_number
from .common import check_dtype, is_params, local, mask_operand
from .vec_reduce import emit, enum_arg, flag, has_any, nbytes, operands, record_ints

KIND = {dt.float16: isa.KIND_F16, dt.float32: isa.KIND_F32, dt.int32: isa.KIND_I32}
CMP_TYPES = (dt.float16, dt.float32, dt.int32)
SEL_TYPES = (dt.float16, dt.float32)
BITS_TYPES = (dt.uint8, dt.int8)
SEL_MASK_TYPES = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)

_BIN_SRC = ("src0_blk_stride", "src1_blk_stride", "src0_rep_stride", "src1_rep_stride")
_BIN_ALL = ("dst_blk_stride", "src0_blk_stride", "src1_blk_stride", "dst_rep_stride", "src0_rep_stride",
            "src1_rep_stride")


def _is_tensor(v: Value) -> bool:
    return isinstance(v.type, LocalTensorT)


def _cmp_mode(lw, call: Call, v: Value, d: dt.DataType) -> int:
    mode = enum_arg(lw, v, call.node, CMPMODE, "cmp_mode")
    if d is dt.int32 and mode != CMPMODE.EQ:
        lw.type_error(f"{call.name} on int32 supports only CMPMODE.EQ, got CMPMODE.{CMPMODE(mode).name}",
                      call.node)
    return mode


def _scalar(lw, v: Value, d: dt.DataType, node: ast.AST | None, what: str) -> str:
    """A scalar operand as a float64 isa argument (converted to ``d`` inside the instruction)."""
    if not is_number(v):
        lw.type_error(f"{what} must be a number, got {lw.describe(v)}", node)
    if not d.is_int:
        return f"np.float64({lw.materialize(v, node, 'float')})"
    if (v.type.kind == "float") if isinstance(v.type, ScalarT) else isinstance(v.const, float):
        lw.type_error(f"{what} must be an integer for an {d.name} tensor", node)
    return f"np.float64({lw.materialize(v, node)})"


def _bits_dst(lw, call: Call, v: Value) -> None:
    local(lw, v, call.node, "dst")
    check_dtype(lw, f"{call.name} dst", v.type.dtype, BITS_TYPES, call.node)


# --------------------------------------------------------------------------- compare / compare_scalar

@rule(lang.compare)
def _compare(lw, call: Call) -> None:
    p = call.args
    tensor_form = "dst" in call.kwargs or (len(p) >= 3 and _is_tensor(p[2]))
    if not tensor_form:
        _compare_register(lw, call)
        return
    level0 = len(p) >= 6 or has_any(call, "mask", "repeat_times", "repeat_params")
    if level0:
        a = call.bind(lw, "dst, src0, src1, cmp_mode, mask, repeat_times, repeat_params, is_set_mask=True")
    else:
        a = call.bind(lw, "dst, src0, src1, cmp_mode, count")
    _bits_dst(lw, call, a["dst"])
    d = operands(lw, call, a, ("src0", "src1"), CMP_TYPES)
    mode = _cmp_mode(lw, call, a["cmp_mode"], d)
    head = ["_lm", str(KIND[d]), str(mode), a["dst"].code[0], nbytes(a["dst"]), *a["src0"].code,
            *a["src1"].code, "np.float64(0.0)", "0"]
    if not level0:
        emit(lw, "vec_cmpsel", "compare_count", [*head, lw.int_expr(a["count"], call.node, "count")], call.node)
        return
    mask_operand(lw, a["mask"], call.node)     # checked, but a reserved parameter on Atlas A2
    flag(lw, a["is_set_mask"], call.node, "is_set_mask")
    emit(lw, "vec_cmpsel", "compare", [
        *head, lw.int_expr(a["repeat_times"], call.node, "repeat_times"),
        *record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_SRC)],
        call.node)


def _compare_register(lw, call: Call) -> None:
    a = call.bind(lw, "src0, src1, cmp_mode, mask, repeat_params, is_set_mask=True")
    d = operands(lw, call, a, ("src0", "src1"), SEL_TYPES)      # the register form has no int32 variant
    mode = _cmp_mode(lw, call, a["cmp_mode"], d)
    emit(lw, "vec_cmpsel", "compare_to_cmpmask", [
        "_lm", "_st", str(KIND[d]), str(mode), *a["src0"].code, *a["src1"].code,
        flag(lw, a["is_set_mask"], call.node, "is_set_mask"), *mask_operand(lw, a["mask"], call.node),
        *record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_SRC)],
        call.node)


@rule(lang.compare_scalar)
def _compare_scalar(lw, call: Call) -> None:
    level0 = len(call.args) >= 6 or has_any(call, "mask", "repeat_times", "repeat_params")
    if level0:
        a = call.bind(lw, "dst, src0, src1_scalar, cmp_mode, mask, repeat_times, repeat_params, is_set_mask=True")
    else:
        a = call.bind(lw, "dst, src0, src1_scalar, cmp_mode, count")
    _bits_dst(lw, call, a["dst"])
    d = operands(lw, call, a, ("src0",), CMP_TYPES)
    mode = _cmp_mode(lw, call, a["cmp_mode"], d)
    head = ["_lm", str(KIND[d]), str(mode), a["dst"].code[0], nbytes(a["dst"]), *a["src0"].code, "0", "0",
            _scalar(lw, a["src1_scalar"], d, call.node, "src1_scalar"), "1"]
    if not level0:
        emit(lw, "vec_cmpsel", "compare_count", [*head, lw.int_expr(a["count"], call.node, "count")], call.node)
        return
    mask_operand(lw, a["mask"], call.node)
    flag(lw, a["is_set_mask"], call.node, "is_set_mask")
    blk, rep = record_ints(lw, a["repeat_params"], P.UnaryRepeatParams, call.node, "repeat_params",
                           ("src_blk_stride", "src_rep_stride"))
    emit(lw, "vec_cmpsel", "compare", [
        *head, lw.int_expr(a["repeat_times"], call.node, "repeat_times"), blk, "0", rep, "0"], call.node)


@rule(lang.get_cmp_mask)
def _get_cmp_mask(lw, call: Call) -> None:
    a = call.bind(lw, "dst")
    local(lw, a["dst"], call.node, "dst")
    emit(lw, "vec_cmpsel", "get_cmp_mask", ["_lm", "_st", a["dst"].code[0], nbytes(a["dst"])], call.node)


@rule(lang.set_cmp_mask)
def _set_cmp_mask(lw, call: Call) -> None:
    a = call.bind(lw, "src")
    local(lw, a["src"], call.node, "src")
    emit(lw, "vec_cmpsel", "set_cmp_mask", ["_lm", "_st", a["src"].code[0], nbytes(a["src"])], call.node)


# --------------------------------------------------------------------------- select

def _sel_mask(lw, call: Call, v: Value) -> list[str]:
    local(lw, v, call.node, "sel_mask")
    check_dtype(lw, f"{call.name} sel_mask", v.type.dtype, SEL_MASK_TYPES, call.node)
    return [v.code[0], nbytes(v)]


@rule(lang.select)
def _select(lw, call: Call) -> None:
    p = call.args
    plain = not has_any(call, "mask", "count")
    if plain and (len(p) == 6 and is_params(p[4], P.BinaryRepeatParams) or
                  len(p) == 3 and has_any(call, "sel_mode", "repeat_params") and "src1" not in call.kwargs):
        _select_register(lw, call)
        return
    if plain and not has_any(call, "src1", "sel_mode") and (
            len(p) == 5 and is_params(p[4], P.BinaryRepeatParams) or len(p) <= 4 and "repeat_params" in call.kwargs):
        _select_register_scalar(lw, call)
        return
    level0 = len(p) >= 7 or has_any(call, "mask", "repeat_times", "repeat_params")
    if level0:
        a = call.bind(lw, "dst, sel_mask, src0, src1, sel_mode, mask, repeat_times, repeat_params, "
                          "is_set_mask=True")
    else:
        a = call.bind(lw, "dst, sel_mask, src0, src1, sel_mode, count")
    mode = enum_arg(lw, a["sel_mode"], call.node, SelMode, "sel_mode")
    if mode == SelMode.VSEL_TENSOR_SCALAR_MODE:
        if _is_tensor(a["src1"]):
            lw.type_error("select with SelMode.VSEL_TENSOR_SCALAR_MODE takes a scalar src1", call.node)
        d = operands(lw, call, a, ("dst", "src0"), SEL_TYPES)
        src1 = ["0", "0"]
        scalar = _scalar(lw, a["src1"], d, call.node, "src1")
    else:
        if not _is_tensor(a["src1"]):
            lw.type_error(f"select with SelMode.{SelMode(mode).name} takes a LocalTensor src1 (a scalar needs "
                          f"SelMode.VSEL_TENSOR_SCALAR_MODE)", call.node)
        d = operands(lw, call, a, ("dst", "src0", "src1"), SEL_TYPES)
        src1 = list(a["src1"].code)
        scalar = "np.float64(0.0)"
    head = ["_lm", "_st", str(KIND[d]), str(mode), *a["dst"].code, *_sel_mask(lw, call, a["sel_mask"]),
            *a["src0"].code, *src1, scalar]
    if not level0:
        emit(lw, "vec_cmpsel", "select_count", [*head, lw.int_expr(a["count"], call.node, "count")], call.node)
        return
    emit(lw, "vec_cmpsel", "select", [
        *head, "1", flag(lw, a["is_set_mask"], call.node, "is_set_mask"), *mask_operand(lw, a["mask"], call.node),
        lw.int_expr(a["repeat_times"], call.node, "repeat_times"),
        *record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_ALL)],
        call.node)


def _select_register(lw, call: Call) -> None:
    """``select(dst, src0, src1, repeat_times, repeat_params, sel_mode)``: bits (or their address) in CMPMASK."""
    a = call.bind(lw, "dst, src0, src1, repeat_times, repeat_params, sel_mode")
    d = operands(lw, call, a, ("dst", "src0", "src1"), SEL_TYPES)
    mode = enum_arg(lw, a["sel_mode"], call.node, SelMode, "sel_mode")
    if mode == SelMode.VSEL_TENSOR_SCALAR_MODE:
        lw.type_error("this select form takes two tensors; for a scalar use select(dst, sel_mask, src0, "
                      "repeat_times, repeat_params) after set_cmp_mask", call.node)
    emit(lw, "vec_cmpsel", "select", [
        "_lm", "_st", str(KIND[d]), str(mode), *a["dst"].code, "-1", "0", *a["src0"].code, *a["src1"].code,
        "np.float64(0.0)", "0", "0", "False", "0", "0", lw.int_expr(a["repeat_times"], call.node, "repeat_times"),
        *record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_ALL)],
        call.node)


def _select_register_scalar(lw, call: Call) -> None:
    """``select(dst, sel_mask, src0, repeat_times, repeat_params)``: mode 1 with the scalar in CMPMASK."""
    a = call.bind(lw, "dst, sel_mask, src0, repeat_times, repeat_params")
    d = operands(lw, call, a, ("dst", "src0"), SEL_TYPES)
    emit(lw, "vec_cmpsel", "select", [
        "_lm", "_st", str(KIND[d]), str(isa.SEL_SCALAR), *a["dst"].code, *_sel_mask(lw, call, a["sel_mask"]),
        *a["src0"].code, "0", "0", "np.float64(0.0)", "0", "0", "False", "0", "0",
        lw.int_expr(a["repeat_times"], call.node, "repeat_times"),
        *record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_ALL)],
        call.node)
