"""Rules for ``transpose``, ``trans_data_to_5hd`` and their parameter structs.

The data types each form takes are :mod:`npuemu.language.vec_transpose`'s
tables; semantics in :mod:`npuemu.isa.vec_transpose`.
"""
from __future__ import annotations

import ast

from ...isa import hb
from ...language import dtype as dt
from ...language import vec_transpose as lang
from ...language.enums import TransposeType
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import LocalTensorT, TupleT, Value, const
from . import access
from .common import check_dtype, is_params, local, plain_int
from .params import register_param_struct
from .vec_reduce import flag, operands

register_param_struct(lang.TransposeParamsExt)
register_param_struct(lang.TransDataTo5HDParams)


def _width(d: dt.DataType) -> str:
    return f"b{8 * d.sizeof()}"


def _field(lw: LoweringContext, v: Value, cls: type, name: str, node: ast.AST | None) -> Value:
    """Field ``name`` of a parameter struct built in the kernel or given as a host-side constant."""
    if v.is_const and isinstance(v.const, cls):
        return const(getattr(v.const, name))
    if not is_params(v, cls):
        lw.type_error(f"params must be an asc.{cls.__name__}, got {lw.describe(v)}", node)
    return v.item(name)


@rule(lang.transpose)
def _transpose(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.transpose)
    dst, src = a["dst"], a["src"]
    if "params" not in a:
        operands(lw, call, a, ("dst", "src"), lang.TRANSPOSE_BASIC_TYPES)
        access.local(lw, hb.V, src, "512", access.READ, call.node)
        access.local(lw, hb.V, dst, "512", access.WRITE, call.node)
        lw.emit_isa("vec_transpose", "transpose16", ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code))],
                    call.node)
        return
    d = operands(lw, call, a, ("dst", "src"), lang.TRANSPOSE_NCHW_TYPES)
    tmp = a["shared_tmp_buffer"]
    local(lw, tmp, call.node, "shared_tmp_buffer")
    check_dtype(lw, "transpose shared_tmp_buffer", tmp.type.dtype, (dt.uint8,), call.node)
    p = a["params"]
    kind = lw.const_value(_field(lw, p, lang.TransposeParamsExt, "transpose_type", call.node), call.node,
                          "TransposeParamsExt.transpose_type")
    try:
        kind = TransposeType(kind)
    except ValueError:
        lw.type_error(f"TransposeParamsExt.transpose_type must be a TransposeType, got {kind!r}", call.node)
    if kind not in lang.TRANSPOSE_SUPPORTED:
        names = ", ".join(f"TransposeType.{k.name}" for k in lang.TRANSPOSE_SUPPORTED)
        lw.type_error(f"transpose does not implement TransposeType.{kind.name} on {lw.platform.name}: the "
                      f"library reserves it (\"当前不支持\"); use one of {names}", call.node)
    if kind is TransposeType.TRANSPOSE_TYPE_NONE:
        return          # the library does nothing
    if kind is TransposeType.TRANSPOSE_ND2ND_B16:
        check_dtype(lw, "transpose with TRANSPOSE_ND2ND_B16", d, lang.TRANSPOSE_ND2ND_B16_TYPES, call.node)
    n, c, h, w = (lw.int_expr(_field(lw, p, lang.TransposeParamsExt, f, call.node), call.node,
                              f"TransposeParamsExt.{f}") for f in ("n_size", "c_size", "h_size", "w_size"))
    if kind is TransposeType.TRANSPOSE_ND2ND_B16:
        nbytes = "512"
    else:
        nbytes = f"({n}) * ({c}) * ({h}) * ({w}) * {d.sizeof()}"
        access.local_all(lw, hb.V, tmp, access.WRITE, call.node)
    access.local(lw, hb.V, src, nbytes, access.READ, call.node)
    access.local(lw, hb.V, dst, nbytes, access.WRITE, call.node)
    args = [plain_int(x) for x in (*dst.code, *src.code, *tmp.code, n, c, h, w, str(int(kind)))]
    lw.emit_isa("vec_transpose", f"transpose_ext_{_width(d)}", ["_st", "_lm", *args], call.node)


def _tensor_list(lw: LoweringContext, v: Value, what: str, node: ast.AST | None) -> list[Value]:
    if v.is_const and isinstance(v.const, (list, tuple)):
        items = [const(x) for x in v.const]
    elif isinstance(v.type, TupleT):
        items = list(v.items)
    else:
        lw.type_error(f"{what} must be a list of {lang.ADDR_LIST_SIZE} LocalTensors, got {lw.describe(v)}", node)
    if len(items) != lang.ADDR_LIST_SIZE:
        lw.type_error(f"{what} must hold {lang.ADDR_LIST_SIZE} LocalTensors (one 32-byte block each per repeat), "
                      f"got {len(items)}", node)
    for i, t in enumerate(items):
        if not isinstance(t.type, LocalTensorT):
            lw.type_error(f"{what}[{i}] must be a LocalTensor (npuemu does not take address lists), got "
                          f"{lw.describe(t)}", node)
        local(lw, t, node, f"{what}[{i}]")
    return items


@rule(lang.trans_data_to_5hd)
def _trans_data_to_5hd(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.trans_data_to_5hd)
    dsts = _tensor_list(lw, a["dst_list"], "dst_list", call.node)
    srcs = _tensor_list(lw, a["src_list"], "src_list", call.node)
    d = dsts[0].type.dtype
    for name, ts in (("dst_list", dsts), ("src_list", srcs)):
        for i, t in enumerate(ts):
            if t.type.dtype is not d:
                lw.type_error(f"trans_data_to_5hd: {name}[{i}] is {t.type.dtype.name} but dst_list[0] is {d.name}",
                              call.node)
    check_dtype(lw, "trans_data_to_5hd", d, lang.DTYPES[lang.trans_data_to_5hd], call.node)
    p = a["params"]
    cls = lang.TransDataTo5HDParams
    dh, sh = (flag(lw, _field(lw, p, cls, f, call.node), call.node, f"{cls.__name__}.{f}")
              for f in ("dst_high_half", "src_high_half"))
    repeat, drep, srep = (lw.int_expr(_field(lw, p, cls, f, call.node), call.node, f"{cls.__name__}.{f}")
                          for f in ("repeat_times", "dst_rep_stride", "src_rep_stride"))
    reps = f"max(0, min({repeat}, 255))"
    for ts, rep, kind in ((srcs, srep, access.READ), (dsts, drep, access.WRITE)):
        for t in ts:
            # one repeat alone sits one stride past the list entry (isa.vec_transpose.block_offset)
            last = f"(max({rep}, 0) if ({reps}) == 1 else (({reps}) - 1) * max({rep}, 0))"
            access.local(lw, hb.V, t, f"(({last}) * 32 + 32 if ({reps}) > 0 else 0)", kind, call.node)

    def array(ts: list[Value], part: int) -> str:
        return f"np.array([{', '.join(str(t.code[part]) for t in ts)}], np.int64)"

    lw.emit_isa("vec_transpose", "trans_data_to_5hd",
                ["_st", "_lm", str(d.sizeof()), array(dsts, 0), array(dsts, 1), array(srcs, 0), array(srcs, 1),
                 *(plain_int(x) for x in (dh, sh, repeat, drep, srep))], call.node)
