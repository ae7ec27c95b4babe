"""Rules for ``asc.adv.softmax`` and ``asc.adv.rmsnorm`` (:mod:`npuemu.language.adv_softmax`,
:mod:`npuemu.language.adv_norm`): operand and tiling checks at compile time, one instruction each."""
from __future__ import annotations

import ast

from ...isa import hb
from ...language import adv_norm, adv_softmax
from ...language import dtype as dt
from ...language.adv_tiling import RmsNormTiling, SoftmaxTiling
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import Value, const
from . import access
from .adv_math import scratch_args
from .common import check_dtype, const_bool, is_params, local, plain_int, same_dtype, suffix
from .vec_scalar import scalar_operand


def tiling_fields(lw: LoweringContext, v: Value, cls: type, node: ast.AST | None, names: list[str]) -> list[str]:
    """Fields of a tiling struct argument (a kernel parameter, a kernel-built struct or a constant)."""
    if v.is_const and isinstance(v.const, cls):
        return [_scalar(lw, const(getattr(v.const, n)), node, f"tiling.{n}") for n in names]
    if not is_params(v, cls):
        lw.type_error(f"tiling must be an asc.adv.{cls.__name__}, got {lw.describe(v)}", node)
    return [_scalar(lw, v.item(n), node, f"tiling.{n}") for n in names]


def _scalar(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> str:
    if v.is_const and isinstance(v.const, float):
        return f"np.float64({float(v.const)!r})"
    if v.is_const or getattr(v.type, "kind", "int") in ("int", "bool"):
        return plain_int(lw.int_expr(v, node, what))
    return f"np.float64({v.code[0]})"


_SM_FIELDS = ["src_m", "src_k", "reduce_k", "split_m", "range_m", "tail_m"]


@rule(adv_softmax.softmax)
def _softmax(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, adv_softmax.softmax)
    for n in ("dst", "src", "sum", "max"):
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, "asc.adv.softmax", call.node, ("dst", a["dst"]), ("src", a["src"]))
    check_dtype(lw, "asc.adv.softmax", d, adv_softmax.DTYPES[adv_softmax.softmax], call.node)
    sd = same_dtype(lw, "asc.adv.softmax", call.node, ("sum", a["sum"]), ("max", a["max"]))
    if sd is not d and not (d is dt.float16 and sd is dt.float32):
        lw.type_error(f"asc.adv.softmax: sum and max are {sd.name}; they must be {d.name} like src"
                      + (" or float32" if d is dt.float16 else ""), call.node)
    if const_bool(lw, a["data_format_nz"], call.node, "data_format_nz"):
        lw.type_error("asc.adv.softmax: data_format_nz=True (NZ-format input) is not emulated by npuemu; "
                      "pass ND data", call.node)
    const_bool(lw, a["reuse_source"], call.node, "reuse_source")
    basic = "True" if const_bool(lw, a["basic_block"], call.node, "basic_block") else "False"
    fields = tiling_fields(lw, a["tiling"], SoftmaxTiling, call.node, _SM_FIELDS)
    src_m, src_k, reduce_k = fields[0], fields[1], fields[2]
    access.local_count(lw, hb.V, a["src"], f"({src_m}) * ({src_k})", access.READ, call.node)
    tmp = scratch_args(lw, call, a)
    for n in ("dst",):
        access.local_count(lw, hb.V, a[n], f"({src_m}) * ({src_k})", access.WRITE, call.node)
    for n in ("sum", "max"):
        access.local_count(lw, hb.V, a[n], f"({src_m}) * ({reduce_k})", access.WRITE, call.node)
    fn = f"softmax_{suffix(d)}" + ("_f32" if sd is not d else "")
    lw.emit_isa("adv_softmax", fn, ["_st", "_lm", *(plain_int(c) for n in ("dst", "sum", "max", "src")
                                                    for c in a[n].code), *tmp, *fields, basic], call.node)


_RN_FIELDS = ["b_length", "s_length", "h_length", "original_h_length", "reciprocal_of_h_length", "main_bsh_length",
              "main_bs_length", "loop_round", "tail_bsh_length", "tail_bs_length"]


@rule(adv_norm.rmsnorm)
def _rmsnorm(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, adv_norm.rmsnorm)
    for n in ("dst", "src", "gamma"):
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, "asc.adv.rmsnorm", call.node, ("dst", a["dst"]), ("src", a["src"]), ("gamma", a["gamma"]))
    check_dtype(lw, "asc.adv.rmsnorm", d, adv_norm.DTYPES[adv_norm.rmsnorm], call.node)
    eps = scalar_operand(lw, a["epsilon"], dt.float32, call.node)
    basic = "True" if const_bool(lw, a["basic_block"], call.node, "basic_block") else "False"
    fields = tiling_fields(lw, a["tiling"], RmsNormTiling, call.node, _RN_FIELDS)
    fields[4] = f"np.float64({fields[4]})"
    total = f"({fields[0]}) * ({fields[1]}) * ({fields[2]})"
    access.local_count(lw, hb.V, a["src"], total, access.READ, call.node)
    access.local_count(lw, hb.V, a["gamma"], fields[2], access.READ, call.node)
    tmp = scratch_args(lw, call, a)
    access.local_count(lw, hb.V, a["dst"], total, access.WRITE, call.node)
    lw.emit_isa("adv_norm", f"rmsnorm_{suffix(d)}",
                ["_st", "_lm", *(plain_int(c) for n in ("dst", "src", "gamma") for c in a[n].code), *tmp,
                 f"np.float64({eps})", *fields, basic], call.node)
