"""Rules for the cube instructions: ND2NZ ``data_copy``, ``load_data``, ``mmad``, ``fixpipe`` and friends.

Compile-time checks: operand kinds and positions (``mmad`` needs CO1/A2/B2,
``fixpipe`` a CO1 source, ...), the supported dtype combinations, transposed
loads only for 16-bit types, cube instructions only in kernels that run AIC
cores.  Everything that depends on run-time values (field ranges, alignment,
extents) is checked by the instructions (``isa/cube_move.py``,
``isa/mmad.py``, ``isa/fixpipe.py``).

Pipes declared to the race checker: GM -> L1 (ND2NZ) and GM -> L0 loads on
MTE2; L1 -> L0A/L0B loads on MTE1; ``init_const_value`` on MTE1 (L0A/L0B) or
MTE2 (L1); ``mmad`` on M (reads L0A, L0B and the bias, reads and writes L0C);
``fixpipe`` on FIX (reads L0C and the scale tensor, writes GM or L1).  The
newer cube movements have modules of their own: ``cube_copy`` (NZ -> ND and
L0C ``data_copy`` forms), ``cube_load3d`` (img2col), ``cube_sparse`` (4:2
sparse matmul).  Cube
operand reads are declared as spans (race checks only): the padding rows of
fractals are moved and multiplied like data although no instruction wrote
them, as on hardware.
"""
from __future__ import annotations

from ...isa import fixpipe as fx, hb, mmad as mm
from ...language import cube as lang
from ...language.atomic import atomic_dtype
from ...language import dtype as dt
from ...language.enums import POSITION_MEMORY, Hardware, KernelType, QuantModes, TPosition
from ...language.params import Nd2NzParams
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import GlobalTensorT, LocalTensorT, RecordT, Value, const
from . import access
from .common import is_params, plain_int
from .params import register_param_struct

for _cls in (lang.LoadData2DParams, lang.LoadData2DParamsV2, lang.LoadData2dTransposeParams,
             lang.InitConstValueParams, lang.FixpipeParamsV220, lang.FixpipeConfig):
    register_param_struct(_cls)

L1_POSITIONS = (TPosition.A1, TPosition.B1, TPosition.C1)
AIV_TYPES = (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0, KernelType.MIX_AIV_HARD_SYNC)

# mmad: the input kind of each type the cube multiplies (the supported pairs are lang.MMAD_TYPES)
MMAD_INPUT = {dt.int8: mm.IN_S8, dt.float16: mm.IN_F16, dt.bfloat16: mm.IN_BF16, dt.float32: mm.IN_F32}
FIX_KINDS = {dt.float32: fx.K_F32, dt.int32: fx.K_I32, dt.float16: fx.K_F16, dt.bfloat16: fx.K_BF16,
             dt.int8: fx.K_S8, dt.uint8: fx.K_U8}
LOAD_TYPES = lang.DTYPES[lang.load_data]
INIT_TYPES = lang.DTYPES[lang.init_const_value]


# ---------------------------------------------------------------------------- helpers


def _aic(lw: LoweringContext, call: Call) -> None:
    kt = lw.facts.kernel_type
    if kt in AIV_TYPES:
        lw.type_error(f"{call.name} is a cube instruction and this kernel is {kt.name}, which runs only AIV "
                      f"(vector) cores; use @asc.jit(kernel_type=asc.KernelType.AIC_ONLY) or a MIX type",
                      call.node)


def _hw(t: Value) -> Hardware | None:
    return POSITION_MEMORY.get(t.type.pos)


def _local(lw: LoweringContext, call: Call, v: Value, what: str, positions: tuple[TPosition, ...]) -> Value:
    if not isinstance(v.type, LocalTensorT):
        lw.type_error(f"{call.name}: {what} must be a LocalTensor, got {lw.describe(v)}", call.node)
    if v.type.pos not in positions:
        names = "/".join(p.name for p in positions)
        lw.type_error(f"{call.name}: {what} is in position {v.type.pos.name}; it must be in {names}", call.node)
    return v


def _fields(lw: LoweringContext, call: Call, v: Value, cls: type, what: str) -> dict[str, Value]:
    """The fields of a parameter struct argument (built in the kernel or a host-side constant)."""
    if v.is_const and isinstance(v.const, cls):
        return {n: const(getattr(v.const, n)) for n in cls.field_names()}
    if not is_params(v, cls):
        lw.type_error(f"{call.name}: {what} must be an asc.{cls.__name__}, got {lw.describe(v)}", call.node)
    return {n: v.item(n) for n in cls.field_names()}


def _int(lw: LoweringContext, call: Call, v: Value, what: str) -> str:
    return plain_int(lw.int_expr(v, call.node, what))


def _const_or_none(v: Value):
    return v.const if v.is_const else None


def _ints(t: Value) -> list[str]:
    return [plain_int(c) for c in t.code]


def _esize(t: Value) -> int:
    return t.type.dtype.sizeof()


# ---------------------------------------------------------------------------- data_copy GM -> L1 (ND2NZ)


def nd2nz(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``data_copy(l1, gm, Nd2NzParams(...))``; called by the data_copy rule."""
    _aic(lw, call)
    if not (isinstance(dst.type, LocalTensorT) and isinstance(src.type, GlobalTensorT)):
        lw.type_error(f"data_copy with Nd2NzParams moves GM -> L1 (A1/B1/C1); got {lw.describe(src)} -> "
                      f"{lw.describe(dst)}", call.node)
    _local(lw, call, dst, "the destination", L1_POSITIONS)
    if src.type.dtype is None:
        lw.fail("GlobalTensor used before set_global_buffer", call.node)
    if src.type.dtype is not dst.type.dtype:
        lw.type_error(f"data_copy between {src.type.dtype.name} and {dst.type.dtype.name}: the element types "
                      f"must match", call.node)
    if dst.type.dtype not in LOAD_TYPES:
        lw.type_error(f"data_copy with Nd2NzParams does not support {dst.type.dtype.name}", call.node)
    f = _fields(lw, call, p, Nd2NzParams, "the parameters")
    names = Nd2NzParams.field_names()
    v = [_int(lw, call, f[n], f"Nd2NzParams.{n}") for n in names]
    es = _esize(dst)
    if lw.declares_access:
        nd, n, d, sms, sd, c0s, ns, dms = (f"({x})" for x in v)
        live = f"({nd} > 0 and {n} > 0 and {d} > 0)"
        dst_end = (f"(({nd} - 1) * {dms} * {es} + ({n} - 1) * {ns} * 32 + (({d} * {es} + 31) // 32 - 1) * {c0s} * 32"
                   f" + 32 if {live} else 0)")
        src_end = f"(({nd} - 1) * {sms} * {es} + ({n} - 1) * {sd} * {es} + {d} * {es} if {live} else 0)"
        access.gm(lw, hb.MTE2, src, src_end, False, call.node)
        access.local(lw, hb.MTE2, dst, dst_end, access.WRITE, call.node)
    args = ["_st", "_lm", f"_gm[{src.code[0]}]", *_ints(dst), *_ints(src), *v, str(es)]
    lw.emit_isa("cube_move", "nd2nz", args, call.node)


def l1_to_bias_table(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    """``data_copy(c2, l1, DataCopyParams(count, block_len, src_gap, dst_gap))``: L1 -> BiasTable (MTE1).

    ``block_len`` counts 64-byte units, the source gap 32-byte and the destination gap 64-byte units
    (``copy_cbuf_to_bt``).
    """
    from ...language.params import DataCopyParams
    _aic(lw, call)
    _local(lw, call, dst, "the destination", (TPosition.C2,))
    _local(lw, call, src, "the source", L1_POSITIONS)
    if dst.type.dtype is not src.type.dtype:
        lw.type_error(f"data_copy between {src.type.dtype.name} and {dst.type.dtype.name}: the element types "
                      f"must match", call.node)
    f = _fields(lw, call, p, DataCopyParams, "the parameters")
    v = [_int(lw, call, f[n], f"DataCopyParams.{n}") for n in ("block_count", "block_len", "src_stride",
                                                               "dst_stride")]
    if lw.declares_access:
        cnt, bl, sg, dg = (f"({x})" for x in v)
        live = f"({cnt} > 0 and {bl} > 0)"
        access.local(lw, hb.MTE1, src, f"(({cnt} - 1) * ({bl} * 64 + {sg} * 32) + {bl} * 64 if {live} else 0)",
                     access.READ, call.node)
        access.local(lw, hb.MTE1, dst, f"(({cnt} - 1) * ({bl} + {dg}) * 64 + {bl} * 64 if {live} else 0)",
                     access.WRITE, call.node)
    lw.emit_isa("cube_move", "l1_to_bt", ["_st", "_lm", *_ints(dst), *_ints(src), *v,
                                                 str(_esize(dst))], call.node)


# ---------------------------------------------------------------------------- load_data


@rule(lang.load_data)
def _load_data(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.load_data)
    dst, src, p = a["dst"], a["src"], a["params"]
    from . import cube_load3d       # img2col: its own module
    if cube_load3d.is_load3d(p):
        cube_load3d.load3d(lw, call, dst, src, p)
        return
    _local(lw, call, dst, "dst", (TPosition.A1, TPosition.B1, TPosition.A2, TPosition.B2))
    d = dst.type.dtype
    if d not in LOAD_TYPES:
        lw.type_error(f"load_data does not support {d.name} (supported: "
                      f"{', '.join(t.name for t in LOAD_TYPES)})", call.node)
    if isinstance(src.type, GlobalTensorT):
        _load_from_gm(lw, call, dst, src, p)
        return
    _local(lw, call, src, "src", (TPosition.A1, TPosition.B1))
    if dst.type.pos not in (TPosition.A2, TPosition.B2):
        lw.type_error(f"load_data from L1 moves to L0A (A2) or L0B (B2); dst is in {dst.type.pos.name}",
                      call.node)
    if src.type.dtype is not d:
        lw.type_error(f"load_data between {src.type.dtype.name} and {d.name}: the element types must match",
                      call.node)
    es = d.sizeof()
    common = ["_st", "_lm", *_ints(dst), str(int(_hw(dst))), *_ints(src), str(int(_hw(src)))]
    if is_params(p, lang.LoadData2DParamsV2) or (p.is_const and isinstance(p.const, lang.LoadData2DParamsV2)):
        f = _fields(lw, call, p, lang.LoadData2DParamsV2, "params")
        _check_transpose(lw, call, f["if_transpose"], dst, src)
        v = [_int(lw, call, f[n], f"LoadData2DParamsV2.{n}") for n in
             ("m_start_position", "k_start_position", "m_step", "k_step", "src_stride", "dst_stride",
              "if_transpose")]
        if lw.declares_access:
            ms, ks, mstep, kstep, ss, ds = (f"({x})" for x in v[:6])
            live = f"({mstep} > 0 and {kstep} > 0)"
            access.local(lw, hb.MTE1, src, f"((({ks} + {kstep} - 1) * {ss} + {ms} + {mstep}) * 512 if {live} else 0)",
                         access.READ_SPAN, call.node)
            access.local(lw, hb.MTE1, dst, f"((({kstep} - 1) * {ds} + {mstep}) * 512 if {live} else 0)",
                         access.WRITE, call.node)
        lw.emit_isa("cube_move", "load2d_v2", [*common, *v, str(es)], call.node)
        return
    f = _fields(lw, call, p, lang.LoadData2DParams, "params")
    _check_transpose(lw, call, f["if_transpose"], dst, src)
    v = [_int(lw, call, f[n], f"LoadData2DParams.{n}") for n in
         ("start_index", "repeat_times", "src_stride", "dst_gap", "if_transpose", "addr_mode")]
    if lw.declares_access:
        start, rep, ss, gap = (f"({x})" for x in v[:4])
        access.local(lw, hb.MTE1, src, f"(({start} + ({rep} - 1) * {ss} + 1) * 512 if {rep} > 0 else 0)",
                     access.READ_SPAN, call.node)
        access.local(lw, hb.MTE1, dst, f"((({rep} - 1) * (1 + {gap}) + 1) * 512 if {rep} > 0 else 0)",
                     access.WRITE, call.node)
    lw.emit_isa("cube_move", "load2d", [*common, *v, str(es)], call.node)


def _check_transpose(lw: LoweringContext, call: Call, flag: Value, dst: Value, src: Value) -> None:
    t = _const_or_none(flag)
    if t is None or not t:
        return
    if dst.type.dtype.sizeof() != 2:
        lw.type_error(f"load_data with if_transpose=True needs a 16-bit element type (the hardware transposes "
                      f"16 x 16 fractals only); {dst.type.dtype.name} is not (use load_data_with_transpose)",
                      call.node)
    if (src.type.pos, dst.type.pos) not in ((TPosition.A1, TPosition.A2), (TPosition.B1, TPosition.B2)):
        lw.type_error("load_data transposes only on the A1 -> A2 and B1 -> B2 paths", call.node)


def _load_from_gm(lw: LoweringContext, call: Call, dst: Value, src: Value, p: Value) -> None:
    if src.type.dtype is not dst.type.dtype:
        lw.type_error(f"load_data between {src.type.dtype.name} and {dst.type.dtype.name}: the element types "
                      f"must match", call.node)
    f = _fields(lw, call, p, lang.LoadData2DParams, "params (GM source)")
    if _const_or_none(f["if_transpose"]):
        lw.type_error("load_data from GM cannot transpose", call.node)
    v = [_int(lw, call, f[n], f"LoadData2DParams.{n}") for n in ("start_index", "repeat_times", "src_stride",
                                                                  "dst_gap")]
    if lw.declares_access:
        start, rep, ss, gap = (f"({x})" for x in v)
        access.gm(lw, hb.MTE2, src, f"(({start} + ({rep} - 1) * {ss} + 1) * 512 if {rep} > 0 else 0)", False,
                  call.node)
        access.local(lw, hb.MTE2, dst, f"((({rep} - 1) * (1 + {gap}) + 1) * 512 if {rep} > 0 else 0)",
                     access.WRITE, call.node)
    args = ["_st", "_lm", f"_gm[{src.code[0]}]", *_ints(dst), str(int(_hw(dst))), *_ints(src), *v,
            str(_esize(dst))]
    lw.emit_isa("cube_move", "load2d_gm", args, call.node)


@rule(lang.load_data_with_transpose)
def _load_data_with_transpose(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.load_data_with_transpose)
    dst, src, p = a["dst"], a["src"], a["params"]
    if is_params(p, lang.LoadData2dTransposeParamsV2) or (p.is_const and
                                                           isinstance(p.const, lang.LoadData2dTransposeParamsV2)):
        lw.type_error(f"load_data_with_transpose with LoadData2dTransposeParamsV2 is not available on "
                      f"{lw.platform.name} (Atlas A2/A3): Ascend C documents that form for the Ascend 950 series "
                      f"only; use LoadData2dTransposeParams", call.node)
    _local(lw, call, dst, "dst", (TPosition.A2, TPosition.B2))
    _local(lw, call, src, "src", (TPosition.A1, TPosition.B1))
    d = dst.type.dtype
    if src.type.dtype is not d:
        lw.type_error(f"load_data_with_transpose between {src.type.dtype.name} and {d.name}: the element types "
                      f"must match", call.node)
    if d not in lang.DTYPES[lang.load_data_with_transpose]:
        lw.type_error(f"load_data_with_transpose does not support {d.name}", call.node)
    f = _fields(lw, call, p, lang.LoadData2dTransposeParams, "params")
    v = [_int(lw, call, f[n], f"LoadData2dTransposeParams.{n}") for n in
         ("start_index", "repeat_times", "src_stride", "dst_gap", "dst_frac_gap", "addr_mode")]
    es = d.sizeof()
    if lw.declares_access:
        start, rep, ss, gap, fgap = (f"({x})" for x in v[:5])
        sq = 512 if es == 2 else 1024
        nf = 1 if es == 2 else 2
        access.local(lw, hb.MTE1, src, f"(({start} + ({rep} - 1) * {ss} + 1) * {sq} if {rep} > 0 else 0)",
                     access.READ_SPAN, call.node)
        access.local(lw, hb.MTE1, dst, f"((({rep} - 1) * (1 + {gap}) + {nf - 1} * (1 + {fgap}) + 1) * 512 "
                                       f"if {rep} > 0 else 0)", access.WRITE, call.node)
    args = ["_st", "_lm", *_ints(dst), str(int(_hw(dst))), *_ints(src), str(int(_hw(src))), *v, str(es)]
    lw.emit_isa("cube_move", "load2d_transpose", args, call.node)


# ---------------------------------------------------------------------------- init_const_value


@rule(lang.init_const_value)
def _init_const_value(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.init_const_value)
    dst = _local(lw, call, a["dst"], "dst", (TPosition.A1, TPosition.B1, TPosition.A2, TPosition.B2))
    d = dst.type.dtype
    if d not in INIT_TYPES:
        lw.type_error(f"init_const_value does not support {d.name} (supported: "
                      f"{', '.join(t.name for t in INIT_TYPES)})", call.node)
    f = _fields(lw, call, a["init_const_value_params"], lang.InitConstValueParams, "init_const_value_params")
    v = [_int(lw, call, f[n], f"InitConstValueParams.{n}") for n in ("repeat_times", "block_num", "dst_gap")]
    bits = _value_bits(lw, call, f["init_value"], d)
    hw = _hw(dst)
    pipe = hb.MTE1 if hw in (Hardware.L0A, Hardware.L0B) else hb.MTE2
    if lw.declares_access:
        rep, blk, gap = (f"({x})" for x in v)
        unit = 512 if hw in (Hardware.L0A, Hardware.L0B) else 32
        access.local(lw, pipe, dst, f"((({rep} - 1) * ({blk} + {gap}) + {blk}) * {unit} if {rep} > 0 else 0)",
                     access.WRITE, call.node)
    lw.emit_isa("cube_move", "init_const", ["_st", "_lm", *_ints(dst), str(int(hw)), *v, bits,
                                                   str(d.sizeof())], call.node)


def _value_bits(lw: LoweringContext, call: Call, value: Value, d: dt.DataType) -> str:
    """The raw bits of ``value`` as an element of ``d``, as an int64 expression."""
    if d is dt.float16:
        return f"np.int64({lw.isa('scalar', 'f32_to_f16')}({lw.materialize(value, call.node, 'float')}))"
    if d is dt.bfloat16:
        return f"np.int64({lw.isa('scalar', 'f32_to_bf16')}({lw.materialize(value, call.node, 'float')}))"
    if d is dt.float32:
        return f"np.int64(np.float32({lw.materialize(value, call.node, 'float')}).view(np.int32))"
    return f"np.int64({lw.materialize(value, call.node)})"


# ---------------------------------------------------------------------------- mmad


@rule(lang.MmadParams)
def _mmad_params(lw: LoweringContext, call: Call) -> Value:
    """``MmadParams(m, n, k, unit_flag, cmatrix_source, cmatrix_init_val)`` or the legacy 8-field form."""
    a = call.bind_to(lw, lang.MmadParams)
    if "is_bias" in a:
        vals = {"m": a["m"], "n": a["n"], "k": a["k"], "unit_flag": const(0), "cmatrix_source": const(False)}
        is_bias = a["is_bias"]
        if is_bias.is_const:
            vals["cmatrix_init_val"] = const(not is_bias.const)
        else:
            vals["cmatrix_init_val"] = lw.fresh_value(
                Value(is_bias.type, code=(f"(not {lw.truth(is_bias, call.node)})",)), "p")
    else:
        vals = dict(a)
    names = ("m", "n", "k", "unit_flag", "cmatrix_source", "cmatrix_init_val")
    items = []
    for n in names:
        v = vals[n]
        items.append(v if v.is_const else lw.fresh_value(v, "p"))
    for _name, default, _ctype in lang.MmadParams._fields_[len(names):]:
        items.append(const(default))
    return Value(RecordT(lang.MmadParams, lang.MmadParams.field_names()), items=tuple(items))


@rule(lang.mmad)
def _mmad(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    lw.facts.blas = True          # the launch keeps BLAS to one thread per core thread
    a = call.bind_to(lw, lang.mmad)
    dst, fm, flt, bias, params = a["dst"], a["fm"], a["filter"], a.get("bias"), a["params"]
    _local(lw, call, dst, "dst", (TPosition.CO1,))
    _local(lw, call, fm, "fm (the left matrix)", (TPosition.A2,))
    _local(lw, call, flt, "filter (the right matrix)", (TPosition.B2,))
    pair = (fm.type.dtype, flt.type.dtype)
    if pair not in lang.MMAD_TYPES:
        ok = ", ".join(f"{x.name} x {y.name} -> {z.name}" for (x, y), z in lang.MMAD_TYPES.items())
        lw.type_error(f"mmad does not support {fm.type.dtype.name} x {flt.type.dtype.name} (supported: {ok})",
                      call.node)
    out, kind = lang.MMAD_TYPES[pair], MMAD_INPUT[fm.type.dtype]
    if dst.type.dtype is not out:
        lw.type_error(f"mmad of {fm.type.dtype.name} x {flt.type.dtype.name} produces {out.name}; dst is "
                      f"{dst.type.dtype.name}", call.node)
    bias_kind = mm.BIAS_NONE
    bias_parts = ["np.int64(0)", "np.int64(0)"]
    if bias is not None:
        _local(lw, call, bias, "bias", (TPosition.C2, TPosition.CO1))
        if bias.type.dtype is not out:
            lw.type_error(f"mmad bias must be {out.name} for {fm.type.dtype.name} inputs; it is "
                          f"{bias.type.dtype.name}", call.node)
        bias_kind = mm.BIAS_TABLE if bias.type.pos == TPosition.C2 else mm.BIAS_MATRIX
        bias_parts = _ints(bias)
    f = _fields(lw, call, params, lang.MmadParams, "params")
    m, n, k, uf, src_flag, init = (_int(lw, call, f[x], f"MmadParams.{x}") for x in
                                   ("m", "n", "k", "unit_flag", "cmatrix_source", "cmatrix_init_val"))
    if lw.declares_access:
        es = fm.type.dtype.sizeof()
        k0 = 32 // es
        m1, k1, n1 = f"((({m}) + 15) // 16)", f"((({k}) + {k0 - 1}) // {k0})", f"((({n}) + 15) // 16)"
        live = f"(({m}) > 0 and ({n}) > 0 and ({k}) > 0)"
        a_bytes = f"((({k}) * {es} if ({m}) == 1 else {m1} * {k1} * 512) if {live} else 0)"
        c_bytes = f"((1 if ({m}) == 1 else {m1}) * {n1} * 1024 if {live} else 0)"
        access.local(lw, hb.M, fm, a_bytes, access.READ_SPAN, call.node)
        access.local(lw, hb.M, flt, f"({k1} * {n1} * 512 if {live} else 0)", access.READ_SPAN, call.node)
        if bias is not None:
            nb = f"({n1} * 64 if {live} else 0)" if bias_kind == mm.BIAS_TABLE else c_bytes
            access.local(lw, hb.M, bias, nb, access.READ_SPAN, call.node)
        access.local(lw, hb.M, dst, c_bytes, access.READ_SPAN, call.node)
        access.local(lw, hb.M, dst, c_bytes, access.WRITE, call.node)
        lw.cube_steps(f"({m1} * {k1} * {n1} if {live} else 0)")
    args = ["_st", "_lm", *_ints(dst), *_ints(fm), *_ints(flt), *bias_parts, str(bias_kind), m, n, k, uf,
            src_flag, init, str(kind)]
    lw.emit_isa("mmad", "mmad", args, call.node)


def register_setter(stub, module: str, param: str, fn: str | None = None) -> None:
    """The rule of a cube-core register setter: its one integer argument ``param`` goes to ``isa.<module>.<fn>``
    (by default the function of the stub's name)."""
    def r(lw: LoweringContext, call: Call) -> None:
        _aic(lw, call)
        value = _int(lw, call, call.bind_to(lw, stub)[param], param)
        lw.emit_isa(module, fn or stub.__name__, ["_st", value], call.node)
    rule(stub)(r)


register_setter(lang.set_hf32_mode, "mmad", "hf32_mode")
register_setter(lang.set_hf32_trans_mode, "mmad", "trans_mode")


@rule(lang.set_mm_layout_transform)
def _set_mm_layout_transform(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.set_mm_layout_transform)
    _int(lw, call, a["mm_layout_mode"], "mm_layout_mode")     # checked; the walk order leaves results alone


# ---------------------------------------------------------------------------- fixpipe


@rule(lang.FixpipeConfig.cfg_nz)
def _cfg_nz(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.FixpipeConfig.cfg_nz)
    return const(lang.CFG_NZ)


@rule(lang.FixpipeConfig.cfg_row_major)
def _cfg_row_major(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.FixpipeConfig.cfg_row_major)
    return const(lang.CFG_ROW_MAJOR)


def _layout(lw: LoweringContext, call: Call, v: Value | None) -> lang.CO2Layout:
    if v is None:
        return lang.CO2Layout.ROW_MAJOR
    c = v.const if v.is_const else None
    if c is lang.FixpipeConfig.cfg_nz:
        return lang.CO2Layout.NZ
    if c is lang.FixpipeConfig.cfg_row_major:
        return lang.CO2Layout.ROW_MAJOR
    if isinstance(c, lang.FixpipeConfig):
        return lang.CO2Layout(c.layout)
    if isinstance(c, lang.CO2Layout):
        return c
    if is_params(v, lang.FixpipeConfig):
        return lang.CO2Layout(lw.const_value(v.item("layout"), call.node, "FixpipeConfig.layout"))
    lw.type_error(f"fixpipe config must be an asc.FixpipeConfig (e.g. asc.FixpipeConfig.cfg_row_major), got "
                  f"{lw.describe(v)}", call.node)


@rule(lang.fixpipe)
def _fixpipe(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.fixpipe)
    dst, src, params, config, workspace = a["dst"], a["src"], a["params"], a["config"], a.get("cbuf_workspace")
    if not isinstance(src.type, LocalTensorT) or src.type.pos != TPosition.CO1:
        lw.type_error(f"fixpipe moves data out of L0C: src must be a LocalTensor in CO1, got {lw.describe(src)}",
                      call.node)
    sk = {dt.float32: fx.K_F32, dt.int32: fx.K_I32}.get(src.type.dtype)
    if sk is None:
        lw.type_error(f"fixpipe: an L0C source holds float32 or int32, not {src.type.dtype.name}", call.node)
    to_l1 = isinstance(dst.type, LocalTensorT)
    if to_l1:
        _local(lw, call, dst, "dst", L1_POSITIONS)
    elif not isinstance(dst.type, GlobalTensorT) or dst.type.dtype is None:
        lw.type_error(f"fixpipe: dst must be a GlobalTensor or an L1 LocalTensor (A1/B1/C1), got "
                      f"{lw.describe(dst)}", call.node)
    ok = FIX_KINDS.get(dst.type.dtype)
    if ok is None:
        lw.type_error(f"fixpipe cannot write {dst.type.dtype.name}", call.node)
    layout = _layout(lw, call, config)
    if layout == lang.CO2Layout.COLUMN_MAJOR:
        lw.type_error("fixpipe CO2Layout.COLUMN_MAJOR (NZ -> DN) exists only on the 950 series", call.node)
    nz_out = to_l1 or layout == lang.CO2Layout.NZ       # ROW_MAJOR has no effect on the L0C -> L1 path
    f = _fields(lw, call, params, lang.FixpipeParamsV220, "params")
    mode_v = f["quant_pre"]
    mode_c = _const_or_none(mode_v)
    if mode_c is not None:
        mode = int(mode_c)
        if not fx.valid_combo.py_func(mode, sk, ok, to_l1):
            lw.type_error(f"fixpipe quant_pre {fx._mode_name(mode)} cannot convert {src.type.dtype.name} in L0C "
                          f"to {dst.type.dtype.name} ({'L1' if to_l1 else 'GM'} destination)", call.node)
        vector = mode in (fx.VDEQF16, fx.VQF322B8, fx.VREQ8)
        if vector and workspace is None:
            lw.type_error(f"fixpipe quant_pre {QuantModes(mode).name} takes per-channel scales: pass a uint64 "
                          f"cbuf_workspace tensor in L1 (fixpipe(dst, src, cbuf_workspace, params))", call.node)
    if workspace is not None:
        _local(lw, call, workspace, "cbuf_workspace", L1_POSITIONS)
        if workspace.type.dtype not in (dt.uint64, dt.int64):
            lw.type_error(f"fixpipe cbuf_workspace must be uint64, not {workspace.type.dtype.name}", call.node)
    v = {n: _int(lw, call, f[n], f"FixpipeParamsV220.{n}") for n in
         ("n_size", "m_size", "src_stride", "dst_stride", "quant_pre", "nd_num", "src_nd_stride", "dst_nd_stride",
          "relu_en", "unit_flag")}
    deq = plain_int(lw.u64_expr(f["deq_scalar"], call.node, "FixpipeParamsV220.deq_scalar"))
    emit_fixpipe(lw, call, dst, src, workspace, v, deq, sk, ok, to_l1, nz_out)


def emit_fixpipe(lw: LoweringContext, call: Call, dst: Value, src: Value, workspace: Value | None,
                 v: dict[str, str], deq: str, sk: int, ok: int, to_l1: bool, nz_out: bool) -> None:
    """Declare a fixpipe's accesses and emit it; ``v`` holds the FixpipeParamsV220 fields as int expressions
    (also used by ``data_copy`` with ``DataCopyCO12DstParams``)."""
    oes = dst.type.dtype.sizeof()
    if lw.declares_access:
        ns, ms, ss, ds, nd, snd, dnd = (f"({v[x]})" for x in ("n_size", "m_size", "src_stride", "dst_stride",
                                                              "nd_num", "src_nd_stride", "dst_nd_stride"))
        live = f"({ns} > 0 and {ms} > 0 and {nd} > 0)"
        n1 = f"(({ns} + 15) // 16)"
        src_b = f"((({nd} - 1) * {snd} * 256 + ({n1} - 1) * {ss} * 16 + ({ms} - 1) * 16 + 16) * 4 if {live} else 0)"
        if nz_out:
            dst_b = f"(({nd} - 1) * {dnd} * {oes} + ({n1} - 1) * {ds} * 32 + {ms} * 16 * {oes} if {live} else 0)"
        else:
            dst_b = f"((({nd} - 1) * {dnd} + ({ms} - 1) * {ds} + {ns}) * {oes} if {live} else 0)"
        access.local(lw, hb.FIX, src, src_b, access.READ_SPAN, call.node)
        if workspace is not None:
            access.local(lw, hb.FIX, workspace, f"({ns} * 8)", access.READ, call.node)
        if to_l1:
            access.local(lw, hb.FIX, dst, dst_b, access.WRITE, call.node)
        elif nz_out:
            access.gm(lw, hb.FIX, dst, dst_b, True, call.node)
        else:   # ND rows: m_size runs of n_size elements, dst_stride apart (one matrix; several: bounding range)
            access.gm_strided(lw, hb.FIX, dst, f"({ns} * {oes} if {nd} == 1 else {dst_b})", f"({ds} * {oes})",
                              f"(({ms} if {nd} == 1 else 1) if {live} else 0)", True, call.node)
    if to_l1:
        dst_parts = ["_lm", plain_int(dst.code[0]), plain_int(dst.code[1]), "np.bool_(True)", "np.int64(0)",
                     "np.int64(-1)"]
    else:
        dst_parts = [f"_gm[{dst.code[0]}]", plain_int(dst.code[1]), "np.int64(-1)", "np.bool_(False)",
                     plain_int(dst.code[0]), plain_int(dst.code[2])]
    ws = _ints(workspace) if workspace is not None else ["np.int64(-1)", "np.int64(0)"]
    args = ["_st", "_lm", *dst_parts, *_ints(src), *ws, str(sk), str(ok), v["n_size"], v["m_size"],
            v["src_stride"], v["dst_stride"], v["quant_pre"], deq, v["nd_num"], v["src_nd_stride"],
            v["dst_nd_stride"], v["relu_en"], v["unit_flag"], f"np.bool_({nz_out})",
            str(-1 if to_l1 else atomic_dtype(dst.type.dtype))]
    lw.emit_isa("fixpipe", "fixpipe", args, call.node)


@rule(lang.set_fix_pipe_pre_quant_flag)
def _set_pre_quant(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.set_fix_pipe_pre_quant_flag)
    lw.emit_isa("fixpipe", "set_pre_quant",
                ["_st", plain_int(lw.u64_expr(a["config"], call.node, "config"))], call.node)

