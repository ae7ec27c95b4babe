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

from ...isa import fixpipe as fx, hb
from ...isa import state as S
from ...language import dtype as dt
from ...language.enums import BlockMode, DeqScale, QuantModes, TPosition, VECTOR_POSITIONS, pad_t
from ...language.params import DataCopyCO12DstParams, DataCopyEnhancedParams, Nz2NdParamsFull
from ..context import LoweringContext
from ..registry import Call
from ..types import GlobalTensorT, LocalTensorT, Value
from . import access
from .common import plain_int
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
    args = ["_st", "_lm", f"_gm[{dst.code[0]}]", *_ints(dst), *_ints(src), *v, str(es)]
    lw.emit_isa("cube_move", "nz2nd", args, call.node)


def _refuse_nonzero(lw: LoweringContext, call: Call, v: Value, what: str, why: str) -> None:
    c = lw.const_value(v, call.node, what)
    if c:
        lw.type_error(f"{what} = {c!r} is not emulated: {why}", call.node)


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
    _refuse_nonzero(lw, call, f["channel_split"], "DataCopyCO12DstParams.channel_split",
                    "the channel-split layout (C0 = 8) is not emulated; use channel_split=False")
    _refuse_nonzero(lw, call, f["clip_relu_pre"], "DataCopyCO12DstParams.clip_relu_pre",
                    "clipped ReLU needs a clip value register npuemu does not model")
    _refuse_nonzero(lw, call, f["eltwise_op"], "DataCopyCO12DstParams.eltwise_op",
                    "element-wise fusion needs a second operand npuemu does not model")
    relu = lw.const_value(f["relu_pre"], call.node, "DataCopyCO12DstParams.relu_pre")
    if relu not in (0, 1, False, True):
        lw.type_error(f"DataCopyCO12DstParams.relu_pre = {relu!r} is not emulated: only 0 (none) and 1 (ReLU) "
                      f"are; the other modes (leaky/PReLU) need parameters npuemu does not model", call.node)
    nz2nd_en = lw.const_value(f["nz2nd_en"], call.node, "DataCopyCO12DstParams.nz2nd_en")
    mode = lw.const_value(f["quant_pre"], call.node, "DataCopyCO12DstParams.quant_pre")
    mode = int(mode)
    if not fx.valid_combo.py_func(mode, sk, ok, to_l1):
        lw.type_error(f"DataCopyCO12DstParams quant_pre {fx._mode_name(mode)} cannot convert "
                      f"{src.type.dtype.name} in L0C to {dst.type.dtype.name} ({'L1' if to_l1 else 'GM'} "
                      f"destination)", call.node)
    if mode in (fx.VDEQF16, fx.VQF322B8, fx.VREQ8):
        lw.type_error(f"DataCopyCO12DstParams quant_pre {QuantModes(mode).name} takes per-channel scales, which "
                      f"this form cannot pass; use fixpipe(dst, src, cbuf_workspace, FixpipeParamsV220(...))",
                      call.node)
    v = {n: _int(lw, call, f[n], f"DataCopyCO12DstParams.{n}") for n in
         ("n_size", "m_size", "src_stride", "dst_stride", "unit_flag")}
    v.update(quant_pre=str(mode), nd_num="np.int64(1)", src_nd_stride="np.int64(0)", dst_nd_stride="np.int64(0)",
             relu_en=str(int(bool(relu))))
    nz_out = to_l1 or not nz2nd_en
    emit_fixpipe(lw, call, dst, src, None, v, f"_st[{S.FIX_PRE_QUANT}]", sk, ok, to_l1, nz_out)


# the enhanced-copy fields npuemu emulates, with the value each must have
_ENHANCED_DEFAULTS = (("block_mode", BlockMode.BLOCK_MODE_NORMAL), ("deq_scale", DeqScale.DEQ_NONE),
                      ("is_relu_in", False), ("pad_mode_in", pad_t.PAD_NONE))


def check_enhanced(lw: LoweringContext, call: Call, e: Value) -> None:
    """A ``DataCopyEnhancedParams`` must keep the default modes, under which the copy is the plain one."""
    f = _fields(lw, call, e, DataCopyEnhancedParams, "enhanced_params")
    for name, want in _ENHANCED_DEFAULTS:
        got = lw.const_value(f[name], call.node, f"DataCopyEnhancedParams.{name}")
        if got != want:
            shown = want.name if hasattr(want, "name") else repr(want)
            lw.type_error(f"DataCopyEnhancedParams.{name} = {got!r} is not emulated: on {lw.platform.name} "
                          f"(Atlas A2/A3) npuemu supports only the default {shown}, under which the copy is the "
                          f"plain DataCopyParams copy", call.node)
    plain_int(lw.int_expr(f["sid_store_mode_in"], call.node, "DataCopyEnhancedParams.sid_store_mode_in"))
