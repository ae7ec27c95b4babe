"""Rules for compare and select (``compare``, ``compare_scalar``, ``get/set_cmp_mask``, ``select``).

Which form a call is comes from binding it to the stubs' overloads in
:mod:`npuemu.language.vec_cmpsel`, whose ``DTYPES`` are the data types each
instruction compares or selects.
"""
from __future__ import annotations

import ast

from ...isa import hb
from ...isa import vec_cmpsel as isa
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_cmpsel as lang
from ...language.enums import CMPMODE, SelMode
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import LocalTensorT, ScalarT, Value, is_number
from . import access
from .common import check_dtype, local, mask_operand
from .vec_reduce import emit, enum_arg, flag, nbytes, operands, record_ints

KIND = {dt.float16: isa.KIND_F16, dt.float32: isa.KIND_F32, dt.int32: isa.KIND_I32}
CMP_TYPES = lang.DTYPES[lang.compare]
CMPMASK_TYPES = tuple(d for d in CMP_TYPES if d.is_float)     # compare into CMPMASK has no int32 variant
SEL_TYPES = lang.DTYPES[lang.select]
BITS_TYPES = (dt.uint8, dt.int8)
SEL_MASK_TYPES = (dt.uint8, dt.uint16, dt.uint32, dt.uint64)

_BIN_SRC = ("src0_blk_stride", "src1_blk_stride", "src0_rep_stride", "src1_rep_stride")
_BIN_ALL = ("dst_blk_stride", "src0_blk_stride", "src1_blk_stride", "dst_rep_stride", "src0_rep_stride",
            "src1_rep_stride")


def _is_tensor(v: Value) -> bool:
    return isinstance(v.type, LocalTensorT)


def _cmp_mode(lw: LoweringContext, call: Call, v: Value, d: dt.DataType) -> int:
    mode = enum_arg(lw, v, call.node, CMPMODE, "cmp_mode")
    if d is dt.int32 and mode != CMPMODE.EQ:
        lw.type_error(f"{call.name} on int32 supports only CMPMODE.EQ, got CMPMODE.{CMPMODE(mode).name}",
                      call.node)
    return mode


def _scalar(lw: LoweringContext, v: Value, d: dt.DataType, node: ast.AST | None, what: str) -> str:
    """A scalar operand as a float64 isa argument (converted to ``d`` inside the instruction)."""
    if not is_number(v):
        lw.type_error(f"{what} must be a number, got {lw.describe(v)}", node)
    if not d.is_int:
        return f"np.float64({lw.materialize(v, node, 'float')})"
    if (v.type.kind == "float") if isinstance(v.type, ScalarT) else isinstance(v.const, float):
        lw.type_error(f"{what} must be an integer for an {d.name} tensor", node)
    return f"np.float64({lw.materialize(v, node)})"


def _bits_dst(lw: LoweringContext, call: Call, v: Value) -> None:
    local(lw, v, call.node, "dst")
    check_dtype(lw, f"{call.name} dst", v.type.dtype, BITS_TYPES, call.node)


def _full_repeats(lw: LoweringContext, call: Call, t: Value, repeat: str, blk: str, rep: str) -> None:
    """A compare source: every lane of ``repeat`` repeats (the mask is reserved on A2)."""
    access.local(lw, hb.V, t, f"((({repeat}) - 1) * max({rep}, 0) + 7 * max({blk}, 0) + 1) * 32 if ({repeat}) > 0 "
                              f"else 0", access.READ_SPAN, call.node)


# --------------------------------------------------------------------------- compare / compare_scalar

@rule(lang.compare)
def _compare(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.compare)
    if "dst" not in a:
        _compare_register(lw, call, a)
        return
    _bits_dst(lw, call, a["dst"])
    d = operands(lw, call, a, ("src0", "src1"), CMP_TYPES)
    mode = _cmp_mode(lw, call, a["cmp_mode"], d)
    head = ["_lm", str(KIND[d]), str(mode), a["dst"].code[0], nbytes(a["dst"]), *a["src0"].code,
            *a["src1"].code, "np.float64(0.0)", "0"]
    if "count" in a:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, a["src0"], count, access.READ, call.node)
        access.local_count(lw, hb.V, a["src1"], count, access.READ, call.node)
        access.local(lw, hb.V, a["dst"], f"({count}) // 8", access.WRITE, call.node)
        emit(lw, "vec_cmpsel", "compare_count", [*head, count], call.node)
        return
    mask_operand(lw, a["mask"], call.node)     # checked, but a reserved parameter on Atlas A2
    flag(lw, a["is_set_mask"], call.node, "is_set_mask")
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    s0blk, s1blk, s0rep, s1rep = record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node,
                                             "repeat_params", _BIN_SRC)
    _full_repeats(lw, call, a["src0"], repeat, s0blk, s0rep)
    _full_repeats(lw, call, a["src1"], repeat, s1blk, s1rep)
    access.local(lw, hb.V, a["dst"], f"max({repeat}, 0) * {32 // d.sizeof()}", access.WRITE, call.node)
    emit(lw, "vec_cmpsel", "compare", [*head, repeat, s0blk, s1blk, s0rep, s1rep], call.node)


def _compare_register(lw: LoweringContext, call: Call, a: dict[str, Value]) -> None:
    d = operands(lw, call, a, ("src0", "src1"), CMPMASK_TYPES)
    mode = _cmp_mode(lw, call, a["cmp_mode"], d)
    is_set_mask = flag(lw, a["is_set_mask"], call.node, "is_set_mask")
    mask = mask_operand(lw, a["mask"], call.node)
    strides = record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_SRC)
    l0 = [is_set_mask, *mask, "1"]
    access.level0(lw, hb.V, a["src0"], l0, strides[0], strides[2], access.READ, call.node)
    access.level0(lw, hb.V, a["src1"], l0, strides[1], strides[3], access.READ, call.node)
    emit(lw, "vec_cmpsel", "compare_to_cmpmask", [
        "_lm", "_st", str(KIND[d]), str(mode), *a["src0"].code, *a["src1"].code, is_set_mask, *mask, *strides],
        call.node)


@rule(lang.compare_scalar)
def _compare_scalar(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.compare_scalar)
    _bits_dst(lw, call, a["dst"])
    d = operands(lw, call, a, ("src0",), CMP_TYPES)
    mode = _cmp_mode(lw, call, a["cmp_mode"], d)
    head = ["_lm", str(KIND[d]), str(mode), a["dst"].code[0], nbytes(a["dst"]), *a["src0"].code, "0", "0",
            _scalar(lw, a["src1_scalar"], d, call.node, "src1_scalar"), "1"]
    if "count" in a:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, a["src0"], count, access.READ, call.node)
        access.local(lw, hb.V, a["dst"], f"({count}) // 8", access.WRITE, call.node)
        emit(lw, "vec_cmpsel", "compare_count", [*head, count], call.node)
        return
    mask_operand(lw, a["mask"], call.node)
    flag(lw, a["is_set_mask"], call.node, "is_set_mask")
    blk, rep = record_ints(lw, a["repeat_params"], P.UnaryRepeatParams, call.node, "repeat_params",
                           ("src_blk_stride", "src_rep_stride"))
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    _full_repeats(lw, call, a["src0"], repeat, blk, rep)
    access.local(lw, hb.V, a["dst"], f"max({repeat}, 0) * {32 // d.sizeof()}", access.WRITE, call.node)
    emit(lw, "vec_cmpsel", "compare", [*head, repeat, blk, "0", rep, "0"], call.node)


@rule(lang.get_cmp_mask)
def _get_cmp_mask(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.get_cmp_mask)
    local(lw, a["dst"], call.node, "dst")
    access.local(lw, hb.V, a["dst"], "16", access.WRITE, call.node)
    emit(lw, "vec_cmpsel", "get_cmp_mask", ["_lm", "_st", a["dst"].code[0], nbytes(a["dst"])], call.node)


@rule(lang.set_cmp_mask)
def _set_cmp_mask(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_cmp_mask)
    local(lw, a["src"], call.node, "src")
    access.local(lw, hb.V, a["src"], "16", access.READ, call.node)
    emit(lw, "vec_cmpsel", "set_cmp_mask", ["_lm", "_st", a["src"].code[0], nbytes(a["src"])], call.node)


# --------------------------------------------------------------------------- select

def _sel_mask(lw: LoweringContext, call: Call, v: Value) -> list[str]:
    local(lw, v, call.node, "sel_mask")
    check_dtype(lw, f"{call.name} sel_mask", v.type.dtype, SEL_MASK_TYPES, call.node)
    return [v.code[0], nbytes(v)]


@rule(lang.select)
def _select(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.select)
    if "sel_mask" not in a:
        _select_register(lw, call, a)
        return
    if "sel_mode" not in a:
        _select_register_scalar(lw, call, a)
        return
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
    lanes = 256 // d.sizeof()
    if "count" in a:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, a["src0"], count, access.READ, call.node)
        if mode != SelMode.VSEL_TENSOR_SCALAR_MODE:
            access.local_count(lw, hb.V, a["src1"], count, access.READ, call.node)
        sel_bytes = str(lanes // 8) if mode == SelMode.VSEL_CMPMASK_SPR else f"(({count}) + 7) // 8"
        access.local(lw, hb.V, a["sel_mask"], sel_bytes, access.READ, call.node)
        access.local_count(lw, hb.V, a["dst"], count, access.WRITE, call.node)
        emit(lw, "vec_cmpsel", "select_count", [*head, count], call.node)
        return
    is_set_mask = flag(lw, a["is_set_mask"], call.node, "is_set_mask")
    mask = mask_operand(lw, a["mask"], call.node)
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    strides = record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_ALL)
    l0 = [is_set_mask, *mask, repeat]
    _select_access(lw, call, a, mode, l0, strides, d)
    if mode == SelMode.VSEL_CMPMASK_SPR:
        sel_bytes = str(lanes // 8)
    else:
        sel_bytes = f"({access.repeats_expr(lw, l0, d.sizeof())}) * {lanes // 8}"
    access.local(lw, hb.V, a["sel_mask"], sel_bytes, access.READ_SPAN, call.node)
    emit(lw, "vec_cmpsel", "select", [*head, "1", is_set_mask, *mask, repeat, *strides], call.node)


def _select_access(lw: LoweringContext, call: Call, a: dict[str, Value], mode: int, l0: list[str], strides: list[str],
                   d: dt.DataType) -> None:
    """The tensor operands of a level-0 select (strides in BinaryRepeatParams order)."""
    dblk, s0blk, s1blk, drep, s0rep, s1rep = strides
    access.level0(lw, hb.V, a["src0"], l0, s0blk, s0rep, access.READ, call.node)
    if mode != SelMode.VSEL_TENSOR_SCALAR_MODE:
        access.level0(lw, hb.V, a["src1"], l0, s1blk, s1rep, access.READ, call.node)
    access.level0(lw, hb.V, a["dst"], l0, dblk, drep, access.WRITE, call.node)


def _select_register(lw: LoweringContext, call: Call, a: dict[str, Value]) -> None:
    """``select(dst, src0, src1, repeat_times, repeat_params, sel_mode)``: bits (or their address) in CMPMASK."""
    d = operands(lw, call, a, ("dst", "src0", "src1"), SEL_TYPES)
    mode = enum_arg(lw, a["sel_mode"], call.node, SelMode, "sel_mode")
    if mode == SelMode.VSEL_TENSOR_SCALAR_MODE:
        lw.type_error("this select form takes two tensors; for a scalar use select(dst, sel_mask, src0, "
                      "repeat_times, repeat_params) after set_cmp_mask", call.node)
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    strides = record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_ALL)
    # VSEL_TENSOR_TENSOR_MODE reads selection bits at a UB address held in CMPMASK: not declared
    _select_access(lw, call, a, mode, ["0", "False", "0", "0", repeat], strides, d)
    emit(lw, "vec_cmpsel", "select", [
        "_lm", "_st", str(KIND[d]), str(mode), *a["dst"].code, "-1", "0", *a["src0"].code, *a["src1"].code,
        "np.float64(0.0)", "0", "0", "False", "0", "0", repeat, *strides], call.node)


def _select_register_scalar(lw: LoweringContext, call: Call, a: dict[str, Value]) -> None:
    """``select(dst, sel_mask, src0, repeat_times, repeat_params)``: mode 1 with the scalar in CMPMASK."""
    d = operands(lw, call, a, ("dst", "src0"), SEL_TYPES)
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    strides = record_ints(lw, a["repeat_params"], P.BinaryRepeatParams, call.node, "repeat_params", _BIN_ALL)
    l0 = ["0", "False", "0", "0", repeat]
    _select_access(lw, call, a, SelMode.VSEL_TENSOR_SCALAR_MODE, l0, strides, d)
    access.local(lw, hb.V, a["sel_mask"], f"({access.repeats_expr(lw, l0, d.sizeof())}) * {256 // d.sizeof() // 8}",
                 access.READ_SPAN, call.node)
    emit(lw, "vec_cmpsel", "select", [
        "_lm", "_st", str(KIND[d]), str(isa.SEL_SCALAR), *a["dst"].code, *_sel_mask(lw, call, a["sel_mask"]),
        *a["src0"].code, "0", "0", "np.float64(0.0)", "0", "0", "False", "0", "0", repeat, *strides], call.node)
