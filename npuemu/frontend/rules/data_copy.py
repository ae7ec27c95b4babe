"""Rules for ``data_copy``, ``data_copy_pad`` and ``set_pad_value``.

The rule picks the instruction from the operand kinds (GM or local, and which
memory) and the parameter struct, checks dtypes and positions at compile time,
and passes every struct field as a runtime integer: the instructions check the
field ranges, so a constant and a computed ``block_len`` fail the same way.
"""
from __future__ import annotations

from ...isa import datamove as isa
from ...isa import hb
from ...language import data_copy as lang
from ...language import dtype as dt
from ...language.atomic import atomic_dtype
from ...language.enums import POSITION_MEMORY, VECTOR_POSITIONS, Hardware, TPosition
from ...language.params import (DataCopyCO12DstParams, DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams,
                                DataCopyParams, Nd2NzParams, Nz2NdParamsFull)
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import GlobalTensorT, LocalTensorT, ScalarT, Value
from . import access
from .common import is_int_like, is_params, plain_int

# Pipes (Ascend C API pipe table): GM -> UB/L1 runs on MTE2, UB -> GM on MTE3, UB -> UB on V.

# memories a strided data_copy may move to / from GM (MTE2 into UB or L1, MTE3 out of UB)
_GM_IN = (Hardware.UB, Hardware.L1)
_GM_OUT = (Hardware.UB,)


@rule(lang.data_copy)
def _data_copy(lw: LoweringContext, call: Call) -> None:
    if len(call.args) + len(call.kwargs) < 3:
        lw.fail("data_copy(dst, src, count | params) needs three arguments", call.node)
    a = call.bind_to(lw, lang.data_copy)
    dst, src = a["dst"], a["src"]
    if "slice_list1" in a:
        from .data_copy_slice import slice_copy     # multi-dimensional slices, GM <-> UB
        slice_copy(lw, call, a)
        return
    third = a.get("count") or a.get("repeat_params") or a.get("intri_params")
    if "enhanced_params" in a:
        from .cube_copy import check_enhanced       # only the default modes: the plain strided copy
        if not is_params(third, DataCopyParams):
            lw.type_error(f"data_copy with DataCopyEnhancedParams takes a DataCopyParams, got {lw.describe(third)}",
                          call.node)
        check_enhanced(lw, call, a["enhanced_params"])
    if is_params(third, DataCopyParams):
        if isinstance(dst.type, LocalTensorT) and dst.type.pos == TPosition.C2:
            from .cube import l1_to_bias_table     # L1 -> BiasTable: a cube-side movement
            l1_to_bias_table(lw, call, dst, src, third)
            return
        _strided(lw, call, dst, src, third)
        return
    if is_params(third, Nd2NzParams) or (third.is_const and isinstance(third.const, Nd2NzParams)):
        from .cube import nd2nz     # GM -> L1 with ND -> NZ conversion: a cube-side movement
        nd2nz(lw, call, dst, src, third)
        return
    for cls, name in ((Nz2NdParamsFull, "nz2nd"), (DataCopyCO12DstParams, "co12")):
        if is_params(third, cls) or (third.is_const and isinstance(third.const, cls)):
            from . import cube_copy     # NZ -> ND out of UB, L0C out through the fixpipe: cube-side movements
            getattr(cube_copy, name)(lw, call, dst, src, third)
            return
    if not is_int_like(third):
        lw.fail(f"data_copy with {lw.describe(third)} is not supported yet", call.node)
    count = plain_int(lw.int_expr(third, call.node, "count"))
    if _gm_to_local(dst, src):
        _same(lw, call, dst, src)
        _copy_access(lw, call, hb.MTE2, dst, src, count)
        args = ["_st", "_lm", _region(src), *_ints(dst), *_ints(src), count, _esize(dst)]
        lw.emit_isa("datamove", "gm_to_local", args, call.node)
    elif _local_to_gm(dst, src):
        _same(lw, call, src, dst)
        _copy_access(lw, call, hb.MTE3, dst, src, count)
        args = ["_st", _region(dst), "_lm", *_ints(dst), *_ints(src), count, _esize(src), _akind(src)]
        lw.emit_isa("datamove", "local_to_gm", args, call.node)
    elif _local_to_local(dst, src):
        _ub_to_ub(lw, call, dst, src)
        _copy_access(lw, call, hb.V, dst, src, count)
        args = ["_st", "_lm", *_ints(dst), *_ints(src), count, _esize(dst)]
        lw.emit_isa("datamove", "local_to_local", args, call.node)
    else:
        _bad_path(lw, call, dst, src)


def _copy_access(lw: LoweringContext, call: Call, pipe: int, dst: Value, src: Value, count: str) -> None:
    """The bytes a count-form copy moves: ``count`` elements rounded down to whole 32-byte blocks."""
    if not lw.declares_access:
        return
    nbytes = f"max({count}, 0) * {_esize(dst)} // 32 * 32"
    for t, write in ((src, False), (dst, True)):
        if isinstance(t.type, GlobalTensorT):
            access.gm(lw, pipe, t, nbytes, write, call.node)
        else:
            access.local(lw, pipe, t, nbytes, access.WRITE if write else access.READ, call.node)


def _strided_access(lw: LoweringContext, call: Call, pipe: int, dst: Value, src: Value, geometry: list[str],
                    src_block: str, src_step: str, dst_block: str, dst_step: str) -> None:
    """The blocks a strided copy moves on each side (``geometry[0]`` blocks; sizes and steps in bytes)."""
    if not lw.declares_access:
        return
    count = f"min(max({geometry[0]}, 0), {isa.MAX_BLOCK_COUNT})"
    for t, block, step, write in ((src, src_block, src_step, False), (dst, dst_block, dst_step, True)):
        if isinstance(t.type, GlobalTensorT):
            access.gm_strided(lw, pipe, t, block, step, count, write, call.node)
        else:
            access.local_strided(lw, pipe, t, block, step, count, access.WRITE if write else access.READ,
                                 call.node)


def _strided(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``data_copy(dst, src, DataCopyParams(block_count, block_len, src_stride, dst_stride))``."""
    geometry = _fields(lw, call, p)
    # block_len and both gaps are in 32-byte units on both sides
    _, blen, sgap, dgap = geometry
    block, sstep, dstep = f"({blen}) * 32", f"(({blen}) + ({sgap})) * 32", f"(({blen}) + ({dgap})) * 32"
    if _gm_to_local(dst, src):
        _same(lw, call, dst, src)
        _memory(lw, call, dst, _GM_IN, "the destination of a GM -> local data_copy")
        _strided_access(lw, call, hb.MTE2, dst, src, geometry, block, sstep, block, dstep)
        args = ["_lm", _region(src), *_ints(dst), *_ints(src), *geometry, _esize(dst)]
        lw.emit_isa("datamove", "gm_to_local_strided", args, call.node)
    elif _local_to_gm(dst, src):
        _same(lw, call, src, dst)
        _memory(lw, call, src, _GM_OUT, "the source of a local -> GM data_copy")
        _strided_access(lw, call, hb.MTE3, dst, src, geometry, block, sstep, block, dstep)
        args = ["_st", _region(dst), "_lm", *_ints(dst), *_ints(src), *geometry, _esize(src), _akind(src)]
        lw.emit_isa("datamove", "local_to_gm_strided", args, call.node)
    elif _local_to_local(dst, src):
        _ub_to_ub(lw, call, dst, src)
        _strided_access(lw, call, hb.V, dst, src, geometry, block, sstep, block, dstep)
        args = ["_lm", *_ints(dst), *_ints(src), *geometry, _esize(dst)]
        lw.emit_isa("datamove", "local_to_local_strided", args, call.node)
    else:
        _bad_path(lw, call, dst, src)


@rule(lang.data_copy_pad)
def _data_copy_pad(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.data_copy_pad)
    dst, src, p = a["dst"], a["src"], a["data_copy_params"]
    pad = a.get("pad_params")
    legacy = is_params(p, DataCopyParams)
    if not (legacy or is_params(p, DataCopyExtParams)):
        lw.type_error(f"data_copy_pad needs a DataCopyExtParams or DataCopyParams, got {lw.describe(p)}",
                      call.node)
    geometry = _fields(lw, call, p)
    if _gm_to_local(dst, src):
        _same(lw, call, dst, src)
        _vector(lw, call, dst, "the destination of data_copy_pad")
        _pad_in(lw, call, dst, src, geometry, legacy, pad)
    elif _local_to_gm(dst, src):
        _same(lw, call, src, dst)
        _vector(lw, call, src, "the source of data_copy_pad")
        if pad is not None:
            lw.type_error("data_copy_pad from UB to GM takes no padding parameters", call.node)
        # block_len is in bytes; UB blocks occupy whole 32-byte blocks and are sgap blocks apart,
        # GM blocks dgap bytes apart
        _, blen, sgap, dgap = geometry
        footprint = f"(({blen}) + 31) // 32 * 32"
        _strided_access(lw, call, hb.MTE3, dst, src, geometry, footprint, f"{footprint} + ({sgap}) * 32", blen,
                        f"({blen}) + ({dgap})")
        args = ["_st", _region(dst), "_lm", *_ints(dst), *_ints(src), *geometry, str(int(legacy)), _esize(src),
                _akind(src)]
        lw.emit_isa("datamove", "ub_to_gm_pad", args, call.node)
    else:
        lw.type_error(f"data_copy_pad from {lw.describe(src)} to {lw.describe(dst)} is not supported "
                      f"(GM -> UB or UB -> GM)", call.node)


def _pad_in(lw: LoweringContext, call: Call, dst: Value, src: Value, geometry: list[str], legacy: bool,
            pad: Value | None) -> None:
    """GM -> UB: load the pad-value register if ``is_pad``, then copy."""
    d = dst.type.dtype
    if pad is None:
        lw.type_error("data_copy_pad from GM to UB needs pad parameters (DataCopyPadExtParams, or "
                      "DataCopyPadParams with a DataCopyParams)", call.node)
    want = DataCopyPadParams if legacy else DataCopyPadExtParams
    if not is_params(pad, want):
        lw.type_error(f"data_copy_pad with {_params_name(legacy)} takes a {want.__name__}, "
                      f"got {lw.describe(pad)}", call.node)
    if not legacy and pad.item("dtype").const is not d:
        lw.type_error(f"DataCopyPadExtParams is for {pad.item('dtype').const.name} but the tensors are "
                      f"{d.name}", call.node)
    padding = [plain_int(lw.int_expr(pad.item(f), call.node, f)) for f in ("left_padding", "right_padding")]
    _load_pad_register(lw, call, pad, legacy, d)
    # GM blocks of block_len bytes, src_stride bytes apart; each lands in whole 32-byte UB blocks
    # (padding, data, dummy bytes), dst_stride blocks apart
    _, blen, sgap, dgap = geometry
    es = d.sizeof()
    footprint = f"((max({padding[0]}, 0) * {es} + ({blen}) + max({padding[1]}, 0) * {es} + 31) // 32 * 32)"
    _strided_access(lw, call, hb.MTE2, dst, src, geometry, blen, f"({blen}) + ({sgap})", footprint,
                    f"{footprint} + ({dgap}) * 32")
    args = ["_lm", "_st", _region(src), *_ints(dst), *_ints(src), *geometry, *padding, str(int(legacy)),
            _esize(dst), str(_pad_kind(d))]
    lw.emit_isa("datamove", "gm_to_ub_pad", args, call.node)


def _params_name(legacy: bool) -> str:
    return "DataCopyParams" if legacy else "DataCopyExtParams"


def _load_pad_register(lw: LoweringContext, call: Call, pad: Value, legacy: bool, d: dt.DataType) -> None:
    """``is_pad=True`` writes ``padding_value`` into the pad-value register before the copy."""
    is_pad = pad.item("is_pad")
    if is_pad.is_const and not is_pad.const:
        return
    value = pad.item("padding_value")
    if legacy:
        fn, expr = "set_pad_raw", plain_int(lw.u64_expr(value, call.node, "padding_value"))
    else:
        fn, expr = _pad_setter(lw, call, value)
    line = lw.call_isa("datamove", fn, ["_st", expr, str(d.sizeof())], call.node)
    if is_pad.is_const:
        lw.emit(line)
        return
    with lw.emit_if(lw.truth(is_pad, call.node)):
        lw.emit(line)


def _pad_setter(lw: LoweringContext, call: Call, value: Value) -> tuple[str, str]:
    if (isinstance(value.type, ScalarT) and value.type.kind == "float") or \
            (value.is_const and isinstance(value.const, float)):
        return "set_pad_float", lw.materialize(value, call.node, "float")
    return "set_pad_int", plain_int(lw.u64_expr(value, call.node, "padding_value"))


def _pad_kind(d: dt.DataType) -> int:
    """How the pad-value register converts to ``d`` (``K_*`` in isa/datamove.py)."""
    if d.is_int:
        return isa.K_INT
    return {dt.float32: isa.K_F32, dt.float64: isa.K_F64, dt.float16: isa.K_F16, dt.bfloat16: isa.K_BF16}[d]


@rule(lang.set_pad_value)
def _set_pad_value(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_pad_value)
    pos = a["pos"]
    p = lw.const_value(pos, call.node, "pos")
    if p is not None and p not in (TPosition.MAX, TPosition.VECIN, TPosition.VECOUT):
        lw.type_error(f"set_pad_value pos must be TPosition.MAX, VECIN or VECOUT, got {p!r}", call.node)
    value = a["padding_value"]
    if not (isinstance(value.type, ScalarT) or (value.is_const and isinstance(value.const, (int, float)))):
        lw.type_error(f"set_pad_value needs a number, got {lw.describe(value)}", call.node)
    fn, expr = _pad_setter(lw, call, value)
    # the copied type is unknown here (each copy converts the value); element size 0 skips the rule
    # that a 64-bit padding value must be 0, which only DataCopyPad*Params state
    lw.emit_isa("datamove", fn, ["_st", expr, "0"], call.node)


# ---------------------------------------------------------------------------- operand checks


def _ints(t: Value) -> list[str]:
    """A tensor's run-time parts as int64 instruction arguments."""
    return [plain_int(c) for c in t.code]


def _region(g: Value) -> str:
    """The byte array of a GlobalTensor's GM region: instructions take one array, not the tuple,
    so they compile once for every kernel whatever its number of arguments."""
    return f"_gm[{g.code[0]}]"


def _fields(lw: LoweringContext, call: Call, p: Value) -> list[str]:
    """block_count, block_len, src_stride, dst_stride of a DataCopyParams/DataCopyExtParams."""
    return [plain_int(lw.int_expr(p.item(n), call.node, f"{p.type.cls.__name__}.{n}"))
            for n in ("block_count", "block_len", "src_stride", "dst_stride")]


def _gm_to_local(dst: Value, src: Value) -> bool:
    return isinstance(dst.type, LocalTensorT) and isinstance(src.type, GlobalTensorT)


def _local_to_gm(dst: Value, src: Value) -> bool:
    return isinstance(dst.type, GlobalTensorT) and isinstance(src.type, LocalTensorT)


def _local_to_local(dst: Value, src: Value) -> bool:
    return isinstance(dst.type, LocalTensorT) and isinstance(src.type, LocalTensorT)


def _esize(t: Value) -> str:
    return str(t.type.dtype.sizeof())


def _akind(t: Value) -> str:
    """The AtomicDtype of a tensor's elements (-1: atomics do not take them): the GM writes check it
    against the core's atomic mode (isa/atomic.py)."""
    return str(atomic_dtype(t.type.dtype))


def _same(lw: LoweringContext, call: Call, local: Value, glob: Value) -> None:
    if glob.type.dtype is None:
        lw.fail("GlobalTensor used before set_global_buffer", call.node)
    if local.type.dtype is not glob.type.dtype:
        lw.type_error(f"{call.name} between {glob.type.dtype.name} and {local.type.dtype.name}: the element "
                      f"types must match (use cast for conversions)", call.node)


def _memory(lw: LoweringContext, call: Call, t: Value, allowed: tuple[Hardware, ...], what: str) -> None:
    hw = POSITION_MEMORY.get(t.type.pos)
    if hw not in allowed:
        names = " or ".join(h.name for h in allowed)
        lw.type_error(f"{what} is in position {t.type.pos.name}; this path moves data to/from {names}",
                      call.node)


def _vector(lw: LoweringContext, call: Call, t: Value, what: str) -> None:
    if t.type.pos not in VECTOR_POSITIONS:
        lw.type_error(f"{what} is in position {t.type.pos.name}; data_copy_pad moves between GM and UB "
                      f"(VECIN/VECOUT/VECCALC)", call.node)


def _ub_to_ub(lw: LoweringContext, call: Call, dst: Value, src: Value) -> None:
    if dst.type.pos not in VECTOR_POSITIONS or src.type.pos not in VECTOR_POSITIONS:
        lw.fail("local-to-local data_copy is a UB to UB copy (VECIN/VECOUT/VECCALC)", call.node)
    if dst.type.dtype is not src.type.dtype:
        lw.type_error(f"data_copy between {src.type.dtype.name} and {dst.type.dtype.name}: the element types "
                      f"must match", call.node)


def _bad_path(lw: LoweringContext, call: Call, dst: Value, src: Value) -> None:
    lw.type_error(f"data_copy from {lw.describe(src)} to {lw.describe(dst)} is not a supported path", call.node)
