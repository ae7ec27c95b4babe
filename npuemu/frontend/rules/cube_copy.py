"""Rules for the cube-side ``data_copy`` forms out of local memory: ``Nz2NdParamsFull`` (UB NZ -> GM ND,
MTE3) and ``DataCopyCO12DstParams`` (L0C -> GM / L1 through the fixpipe, FIX), and the
``DataCopyEnhancedParams`` checks.

``DataCopyCO12DstParams`` is the fixpipe instruction (``copy_matrix_cc_to_gm`` /
``copy_matrix_cc_to_cbuf``) with one matrix: its fields map onto
``FixpipeParamsV220`` (``nz2nd_en`` chooses ND or NZ output, ``relu_pre`` 1 is
ReLU) and the scalar quantisation word is the register
``set_fix_pipe_pre_quant_flag`` last wrote.  Modes whose semantics npuemu does
not know (``channel_split``, ``relu_pre`` > 1, ``clip_relu_pre``,
``eltwise_op``) are refused at compile time, naming the field.
"""
from __future__ import annotations

from ...isa import cube_move as cm, fixpipe as fx, hb
from ...isa import state as S
from ...language import dtype as dt
from ...language.atomic import atomic_dtype
from ...language.enums import QuantModes, TPosition, VECTOR_POSITIONS
from ...language.params import DataCopyCO12DstParams, DataCopyEnhancedParams, Nz2NdParamsFull
from ..context import LoweringContext
from ..registry import Call
from ..types import GlobalTensorT, LocalTensorT, Value
from . import access
from .cube import FIX_KINDS, L1_POSITIONS, _aic, _fields, _int, _ints, emit_fixpipe

NZ2ND_TYPES = (dt.int16, dt.uint16, dt.int32, dt.uint32, dt.float16, dt.float32)


def nz2nd(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``data_copy(gm, ub, Nz2NdParamsFull(...))``: the documented Atlas A2/A3 path is VECOUT (UB) -> GM."""
    if not (isinstance(dst.type, GlobalTensorT) and isinstance(src.type, LocalTensorT)):
        lw.type_error(f"data_copy with Nz2NdParamsFull moves a local NZ matrix to GM; got {lw.describe(src)} -> "
                      f"{lw.describe(dst)}", call.node)
    if src.type.pos not in VECTOR_POSITIONS:
        lw.type_error(f"data_copy with Nz2NdParamsFull: the source is in {src.type.pos.name}; on "
                      f"{lw.platform.name} (Atlas A2/A3) the NZ -> ND copy reads UB (VECIN/VECOUT/VECCALC) only "
                      f"(L0C results go out through DataCopyCO12DstParams or fixpipe)", call.node)
    if dst.type.dtype is None:
        lw.fail("GlobalTensor used before set_global_buffer", call.node)
    d = src.type.dtype
    if dst.type.dtype is not d:
        lw.type_error(f"data_copy between {d.name} and {dst.type.dtype.name}: the element types must match",
                      call.node)
    if d not in NZ2ND_TYPES:
        lw.type_error(f"data_copy with Nz2NdParamsFull does not support {d.name} (supported: "
                      f"{', '.join(t.name for t in NZ2ND_TYPES)})", call.node)
    f = _fields(lw, call, p, Nz2NdParamsFull, "the parameters")
    v = [_int(lw, call, f[n], f"Nz2NdParamsFull.{n}") for n in Nz2NdParamsFull.field_names()]
    es = d.sizeof()
    if lw.full_check:
        nd, n, dv, sms, sns, dds, dms = (f"({x})" for x in v)
        live = f"({nd} > 0 and {n} > 0 and {dv} > 0)"
        src_end = f"((({nd} - 1) * {sms} * 256 + ({dv} // 16 - 1) * {sns} * 16 + {n} * 16) * {es} if {live} else 0)"
        dst_end = f"((({nd} - 1) * {dms} + ({n} - 1) * {dds} + {dv}) * {es} if {live} else 0)"
        access.local(lw, hb.MTE3, src, src_end, access.READ_SPAN, call.node)
        access.gm(lw, hb.MTE3, dst, dst_end, True, call.node)
    args = ["_st", "_lm", f"_gm[{dst.code[0]}]", *_ints(dst), *_ints(src), *v, str(es), str(atomic_dtype(d))]
    lw.emit_isa("cube_move", "nz2nd", args, call.node)


def mode_field(lw: LoweringContext, call: Call, v: Value, field: int, limit: int, why: str) -> str:
    """A mode field whose values above ``limit`` npuemu does not emulate: a compile-time error for a constant,
    a run-time check (``cube_move.refuse_above``) for a value held in a variable; returns it as an expression."""
    what = cm.REFUSED[field]
    if v.is_const:
        if not isinstance(v.const, (int, bool)) or not 0 <= int(v.const) <= limit:
            lw.type_error(f"{what} = {v.const!r} is not emulated: {why}", call.node)
        return f"np.int64({int(v.const)})"
    expr = _int(lw, call, v, what)
    lw.emit_isa("cube_move", "refuse_above", [expr, str(limit), str(field)], call.node)
    return expr


def co12(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``data_copy(gm_or_l1, co1, DataCopyCO12DstParams(...))``: one fixpipe transfer."""
    _aic(lw, call)
    if not isinstance(src.type, LocalTensorT) or src.type.pos != TPosition.CO1:
        lw.type_error(f"data_copy with DataCopyCO12DstParams moves data out of L0C: src must be a LocalTensor "
                      f"in CO1, got {lw.describe(src)}", call.node)
    sk = {dt.float32: fx.K_F32, dt.int32: fx.K_I32}.get(src.type.dtype)
    if sk is None:
        lw.type_error(f"data_copy with DataCopyCO12DstParams: an L0C source holds float32 or int32, not "
                      f"{src.type.dtype.name}", call.node)
    to_l1 = isinstance(dst.type, LocalTensorT)
    if to_l1 and dst.type.pos not in L1_POSITIONS:
        lw.type_error(f"data_copy with DataCopyCO12DstParams: dst is in {dst.type.pos.name}; on "
                      f"{lw.platform.name} (Atlas A2/A3) L0C data goes to GM or L1 (A1/B1/C1) only — there is no "
                      f"L0C -> UB path", call.node)
    if not to_l1 and (not isinstance(dst.type, GlobalTensorT) or dst.type.dtype is None):
        lw.type_error(f"data_copy with DataCopyCO12DstParams: dst must be a GlobalTensor or an L1 LocalTensor, "
                      f"got {lw.describe(dst)}", call.node)
    ok = FIX_KINDS.get(dst.type.dtype)
    if ok is None:
        lw.type_error(f"data_copy with DataCopyCO12DstParams cannot write {dst.type.dtype.name}", call.node)
    f = _fields(lw, call, p, DataCopyCO12DstParams, "the parameters")
    mode_field(lw, call, f["channel_split"], 0, 0, "the channel-split layout (C0 = 8) is not emulated; use "
                                                   "channel_split=False")
    mode_field(lw, call, f["clip_relu_pre"], 1, 0, "clipped ReLU needs a clip value register npuemu does not model")
    mode_field(lw, call, f["eltwise_op"], 2, 0, "element-wise fusion needs a second operand npuemu does not model")
    relu = mode_field(lw, call, f["relu_pre"], 3, 1, "only 0 (none) and 1 (ReLU) are; the other modes (leaky/PReLU) "
                                                     "need parameters npuemu does not model")
    mode_v = f["quant_pre"]
    if mode_v.is_const:
        mode = int(mode_v.const)
        if not fx.valid_combo.py_func(mode, sk, ok, to_l1):
            lw.type_error(f"DataCopyCO12DstParams quant_pre {fx._mode_name(mode)} cannot convert "
                          f"{src.type.dtype.name} in L0C to {dst.type.dtype.name} ({'L1' if to_l1 else 'GM'} "
                          f"destination)", call.node)
        if mode in (fx.VDEQF16, fx.VQF322B8, fx.VREQ8):
            lw.type_error(f"DataCopyCO12DstParams quant_pre {QuantModes(mode).name} takes per-channel scales, "
                          f"which this form cannot pass; use fixpipe(dst, src, cbuf_workspace, "
                          f"FixpipeParamsV220(...))", call.node)
        mode_expr = str(mode)
    else:       # held in a variable: the fixpipe checks the conversion, the vector modes are refused here
        mode_expr = _int(lw, call, mode_v, "DataCopyCO12DstParams.quant_pre")
        vec = f"({mode_expr} if {mode_expr} in ({fx.VDEQF16}, {fx.VQF322B8}, {fx.VREQ8}) else 0)"
        lw.emit_isa("cube_move", "refuse_above", [vec, "0", "7"], call.node)
    v = {n: _int(lw, call, f[n], f"DataCopyCO12DstParams.{n}") for n in
         ("n_size", "m_size", "src_stride", "dst_stride", "unit_flag")}
    v.update(quant_pre=mode_expr, nd_num="np.int64(1)", src_nd_stride="np.int64(0)", dst_nd_stride="np.int64(0)",
             relu_en=f"np.int64(({relu}) != 0)")
    deq = f"_st[{S.FIX_PRE_QUANT}]"
    nz2nd = f["nz2nd_en"]
    if to_l1 or nz2nd.is_const:     # into L1 the output is always NZ
        emit_fixpipe(lw, call, dst, src, None, v, deq, sk, ok, to_l1, to_l1 or not nz2nd.const)
        return
    cond = lw.truth(nz2nd, call.node)       # held in a variable: both layouts, chosen at run time
    with lw.emit_if(cond):
        emit_fixpipe(lw, call, dst, src, None, v, deq, sk, ok, to_l1, False)
    with lw.emit_if(f"not ({cond})"):
        emit_fixpipe(lw, call, dst, src, None, v, deq, sk, ok, to_l1, True)


# the enhanced-copy fields npuemu emulates only at their defaults (all 0), with their index in cm.REFUSED
_ENHANCED_DEFAULTS = (("block_mode", 8), ("deq_scale", 9), ("is_relu_in", 4), ("pad_mode_in", 10))


def check_enhanced(lw: LoweringContext, call: Call, e: Value) -> None:
    """A ``DataCopyEnhancedParams`` must keep the default modes, under which the copy is the plain one."""
    f = _fields(lw, call, e, DataCopyEnhancedParams, "enhanced_params")
    for name, field in _ENHANCED_DEFAULTS:
        mode_field(lw, call, f[name], field, 0, f"on {lw.platform.name} (Atlas A2/A3) npuemu supports only the "
                                               f"default (BLOCK_MODE_NORMAL, DEQ_NONE, is_relu_in=False, "
                                               f"PAD_NONE), under which the copy is the plain DataCopyParams copy")
    _int(lw, call, f["sid_store_mode_in"], "DataCopyEnhancedParams.sid_store_mode_in")
