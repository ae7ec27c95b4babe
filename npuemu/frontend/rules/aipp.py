"""Rules for AIPP (:mod:`npuemu.language.aipp`; semantics in :mod:`npuemu.isa.aipp`)."""
from __future__ import annotations

import ast

from ...isa import aipp as isa
from ...isa import hb
from ...language import aipp as lang
from ...language import dtype as dt
from ...language.enums import TPosition
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import GlobalTensorT, RecordT, Value, const
from . import access
from .common import dtype_arg, is_params, local, plain_int
from .params import register_param_struct

for _cls in (*lang.AippParams.SUBSTRUCTS.values(), lang.LoadImageToLocalParams):
    register_param_struct(_cls)

OUT_TYPES = (dt.int8, dt.float16)


def _field(lw: LoweringContext, v: Value, cls: type, name: str, node: ast.AST | None) -> Value:
    """Field ``name`` of a struct built in the kernel or given as a host-side constant."""
    if v.is_const and isinstance(v.const, cls):
        return const(getattr(v.const, name))
    if not is_params(v, cls):
        lw.type_error(f"expected an asc.{cls.__name__}, got {lw.describe(v)}", node)
    return v.item(name)


@rule(lang.AippParams)
def _aipp_params(lw: LoweringContext, call: Call) -> Value:
    names = lang.AippParams.field_names()
    a = call.bind(lw, ", ".join(n if n == "dtype" else f"{n}=?" for n in names))
    d = dtype_arg(lw, a["dtype"], call.node)
    if d not in OUT_TYPES:
        lw.type_error(f"AippParams dtype must be asc.int8 or asc.float16 (the output type), got {d.name}", call.node)
    items = [const(d)]
    for name, cls in lang.AippParams.SUBSTRUCTS.items():
        v = a.get(name, const(None))
        if v.is_const and v.const is None:
            v = const(cls())
        elif not ((v.is_const and isinstance(v.const, cls)) or is_params(v, cls)):
            lw.type_error(f"AippParams.{name} must be an asc.{cls.__name__}, got {lw.describe(v)}", call.node)
        items.append(v)
    return Value(RecordT(lang.AippParams, names), items=tuple(items))


def _config(lw: LoweringContext, v: Value, node: ast.AST | None) -> tuple[dt.DataType, list[str], list[str]]:
    """The output dtype and the config's integer and float fields (in the isa's order) as expressions."""
    if v.is_const and isinstance(v.const, lang.AippParams):
        p = v.const
        d = p.dtype
        if d not in OUT_TYPES:
            lw.type_error(f"AippParams dtype must be asc.int8 or asc.float16, got {d!r}", node)
        subs = {n: const(getattr(p, n) if getattr(p, n) is not None else cls())
                for n, cls in lang.AippParams.SUBSTRUCTS.items()}
    elif is_params(v, lang.AippParams):
        d = v.item("dtype").const
        subs = {n: v.item(n) for n in lang.AippParams.SUBSTRUCTS}
    else:
        lw.type_error(f"set_aipp_functions' config must be an asc.AippParams, got {lw.describe(v)}", node)
    where = {f: n for n, cls in lang.AippParams.SUBSTRUCTS.items() for f in cls.field_names()}

    def leaf(f: str) -> Value:
        return _field(lw, subs[where[f]], lang.AippParams.SUBSTRUCTS[where[f]], f, node)

    ints = [f"np.int64({lw.int_expr(leaf(f), node, f)})" for f in isa.INT_FIELDS]
    floats = [f"np.float64({lw.materialize(leaf(f), node, 'float')})" for f in isa.FLOAT_FIELDS]
    return d, ints, floats


def _gm_operand(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> list[str]:
    if not isinstance(v.type, GlobalTensorT) or v.type.dtype is None:
        lw.type_error(f"set_aipp_functions' {what} must be a GlobalTensor bound with set_global_buffer, got "
                      f"{lw.describe(v)}", node)
    if v.type.dtype is not dt.uint8:
        lw.type_error(f"set_aipp_functions' {what} is {v.type.dtype.name}; every AIPP input format holds uint8 "
                      f"pixels", node)
    rid, off, size = (plain_int(c) for c in v.code)
    return [rid, off, f"np.int64(-1) if {size} < 0 else np.int64({size})"]


@rule(lang.set_aipp_functions)
def _set_aipp(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_aipp_functions)
    fmt = lw.const_value(a["input_format"], call.node, "input_format")
    try:
        fmt = lang.AippInputFormat(fmt)
    except ValueError:
        lw.type_error(f"input_format must be an asc.AippInputFormat, got {fmt!r}", call.node)
    if fmt is lang.AippInputFormat.YUV420SP_U8 and "src1" not in a:
        lw.type_error("set_aipp_functions with YUV420SP_U8 needs src1, the interleaved UV plane: "
                      "set_aipp_functions(src0, src1, input_format, config)", call.node)
    src0 = _gm_operand(lw, a["src0"], call.node, "src0")
    src1 = _gm_operand(lw, a["src1"], call.node, "src1") if "src1" in a else ["np.int64(-1)", "np.int64(0)",
                                                                               "np.int64(-1)"]
    d, ints, floats = _config(lw, a["config"], call.node)
    lw.emit_isa("aipp", "set_aipp", ["_st", str(int(fmt)), str(int(d is dt.float16)), *src0, *src1,
                                     f"({', '.join(ints)},)", f"({', '.join(floats)},)"], call.node)


@rule(lang.load_image_to_local)
def _load_image(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.load_image_to_local)
    dst = a["dst"]
    t = local(lw, dst, call.node, "load_image_to_local's dst", positions=(TPosition.A1, TPosition.B1))
    if t.dtype not in OUT_TYPES:
        lw.type_error(f"load_image_to_local does not support {t.dtype.name} on this platform (supported: int8, "
                      f"float16)", call.node)
    p = a["load_data_params"]
    fields = [lw.int_expr(_field(lw, p, lang.LoadImageToLocalParams, f, call.node), call.node, f)
              for f in lang.LoadImageToLocalParams.field_names()[:9]]
    access.local_all(lw, hb.MTE2, dst, access.WRITE, call.node)
    lw.emit_isa("aipp", "load_image", ["_st", "_lm", "_gm", *(plain_int(c) for c in dst.code),
                                       str(int(t.dtype is dt.float16)), *(plain_int(f) for f in fields)], call.node)
