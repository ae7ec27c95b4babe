"""Rules for Load3D (img2col) and its registers: ``load_data`` with ``LoadData3DParamsV2`` (A1 -> A2, MTE1),
``set_load_data_padding_value``, ``set_load_data_boundary``, ``set_load_data_repeat``.

Compile-time checks: positions (A1 -> A2; the B1 -> B2 form's L0B layout is
not documented, so it is refused), data types, ``en_transpose`` (refused: its
layout is not documented for A2), ``pad_list`` a constant of four values.
``LoadData3DParamsV1`` does not exist on Atlas A2/A3 and
``LoadData3DParamsV2Pro`` packs its fields into words whose bit layout npuemu
does not know: both are compile-time errors.  Ranges, alignment and extents
are checked by ``isa/img2col.py``.
"""
from __future__ import annotations

from ...isa import hb
from ...isa import img2col as ic
from ...language import cube as lang
from ...language import dtype as dt
from ...language.enums import TPosition
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import ScalarT, Value
from . import access
from .common import is_params, plain_int
from .cube import _aic, _fields, _int, _ints, _local, register_setter
from .cube_copy import mode_field
from .params import register_param_struct

for _cls in (lang.LoadData3DParamsV1, lang.LoadData3DParamsV2, lang.LoadData3DParamsV2Pro, lang.LoadDataRepeatParam,
             lang.LoadData2dTransposeParamsV2):
    register_param_struct(_cls)

LOAD3D_STRUCTS = (lang.LoadData3DParamsV1, lang.LoadData3DParamsV2, lang.LoadData3DParamsV2Pro)
_PAD_KIND = {dt.float16: ic.K_F16, dt.bfloat16: ic.K_BF16, dt.float32: ic.K_F32}


def is_load3d(p: Value) -> bool:
    return any(is_params(p, c) or (p.is_const and isinstance(p.const, c)) for c in LOAD3D_STRUCTS)


def _is_float(v: Value) -> bool:
    return (isinstance(v.type, ScalarT) and v.type.kind == "float") or (v.is_const and isinstance(v.const, float))


def _padding_call(lw: LoweringContext, call: Call, value: Value) -> None:
    if _is_float(value):
        expr = f"np.int64(np.float32({lw.materialize(value, call.node, 'float')}).view(np.uint32))"
        lw.emit_isa("img2col", "set_padding", ["_st", expr, "True"], call.node)
    else:
        lw.emit_isa("img2col", "set_padding", ["_st", plain_int(lw.int_expr(value, call.node, "pad_value")),
                                               "False"], call.node)


def load3d(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``load_data(dst, src, LoadData3DParamsV1 | V2 | V2Pro)``; called by the load_data rule."""
    if is_params(p, lang.LoadData3DParamsV1) or (p.is_const and isinstance(p.const, lang.LoadData3DParamsV1)):
        lw.type_error(f"load_data with LoadData3DParamsV1 (Load3Dv1) is not available on {lw.platform.name} "
                      f"(Atlas A2/A3): the Ascend C library documents it for the Atlas training and inference "
                      f"(AI Core) series only; use LoadData3DParamsV2", call.node)
    if is_params(p, lang.LoadData3DParamsV2Pro) or (p.is_const and isinstance(p.const, lang.LoadData3DParamsV2Pro)):
        lw.type_error("load_data with LoadData3DParamsV2Pro is not emulated: the bit layout of its ext_config and "
                      "filter_config words is not documented; use LoadData3DParamsV2 with the same values",
                      call.node)
    _local(lw, call, src, "src", (TPosition.A1, TPosition.B1))
    _local(lw, call, dst, "dst", (TPosition.A2, TPosition.B2))
    if dst.type.pos != TPosition.A2 or src.type.pos != TPosition.A1:
        lw.type_error(f"load_data with LoadData3DParamsV2 is emulated on the A1 -> A2 path only (got "
                      f"{src.type.pos.name} -> {dst.type.pos.name}): the layout Load3Dv2 writes into L0B is not "
                      f"documented", call.node)
    d = dst.type.dtype
    if src.type.dtype is not d:
        lw.type_error(f"load_data between {src.type.dtype.name} and {d.name}: the element types must match",
                      call.node)
    if d not in lang.LOAD3D_TYPES:
        lw.type_error(f"load_data with LoadData3DParamsV2 does not support {d.name} (supported: "
                      f"{', '.join(t.name for t in lang.LOAD3D_TYPES)})", call.node)
    f = _fields(lw, call, p, lang.LoadData3DParamsV2, "params")
    mode_field(lw, call, f["en_transpose"], 5, 0, "the transposed layout Load3Dv2 writes is not documented for "
                                                  "Atlas A2/A3")
    pads = lw.const_value(f["pad_list"], call.node, "LoadData3DParamsV2.pad_list")
    if not (isinstance(pads, (tuple, list)) and len(pads) == 4 and all(isinstance(x, int) for x in pads)):
        lw.type_error(f"LoadData3DParamsV2.pad_list must be four ints (left, right, top, bottom), got {pads!r}",
                      call.node)
    names = ("l1_h", "l1_w", "channel_size", "k_extension", "m_extension", "k_start_pt", "m_start_pt", "stride_w",
             "stride_h", "filter_w", "filter_h", "dilation_filter_w", "dilation_filter_h")
    v = {n: _int(lw, call, f[n], f"LoadData3DParamsV2.{n}") for n in names}
    for axis in ("w", "h"):         # filter_size_w/h extend the filter size by 256
        ext = _int(lw, call, f[f"filter_size_{axis}"], f"LoadData3DParamsV2.filter_size_{axis}")
        v[f"filter_{axis}"] = f"(({v[f'filter_{axis}']}) + 256 * ({ext}))"
    _padding_call(lw, call, f["pad_value"])     # the default IsResetLoad3dConfig loads the padding register
    es = d.sizeof()
    if lw.full_check:
        access.local(lw, hb.MTE1, src, f"(({v['channel_size']}) * ({v['l1_h']}) * ({v['l1_w']}) * {es})",
                     access.READ_SPAN, call.node)
        access.local(lw, hb.MTE1, dst, f"(({v['m_extension']}) * ({v['k_extension']}) * {es})", access.WRITE,
                     call.node)
    kind = _PAD_KIND.get(d, ic.K_INT)
    args = ["_st", "_lm", *_ints(dst), *_ints(src), *(str(int(x)) for x in pads), *(v[n] for n in names),
            str(kind), str(es)]
    lw.emit_isa("img2col", "load3d_v2", args, call.node)


@rule(lang.set_load_data_padding_value)
def _set_padding(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.set_load_data_padding_value)
    _padding_call(lw, call, a["pad_value"])


register_setter(lang.set_load_data_boundary, "img2col", "boundary", "set_boundary")


@rule(lang.set_load_data_repeat)
def _set_repeat(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.set_load_data_repeat)
    f = _fields(lw, call, a["repeat_params"], lang.LoadDataRepeatParam, "repeat_params")
    v = [_int(lw, call, f[n], f"LoadDataRepeatParam.{n}") for n in ("repeat_time", "repeat_stride", "repeat_mode")]
    lw.emit_isa("img2col", "set_repeat", ["_st", *v], call.node)
