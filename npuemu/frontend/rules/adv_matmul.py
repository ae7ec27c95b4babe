"""Rules of the high-level Matmul object (``asc.adv.Matmul``; docs/matmul-api.md).

A Matmul is a static type (the MatmulTypes of A, B, C and the bias, the
configuration, an object number); its state lives in kernel variables
``_mm<k>_*`` declared at the top of the kernel: the tiling's shapes, the
tensors set, the tiles computed.  Its buffers are TBufs the object takes
from the registered TPipe at ``init``; the rules keep them (compile-time
values) per lowering.  Each method binds its arguments, emits the object's
own checks at the call's line (``isa/adv_matmul.py``) and inlines the
library helper doing the work (``adv_matmul_lib.py``).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Any

from ...errors import UnsupportedSyntaxError
from ...language import adv_matmul as lang
from ...language import dtype as dt
from ...language.enums import CubeFormat, KernelType, TPosition
from .. import registry
from ..context import LoweringContext
from ..registry import Call, method, rule
from ..types import (
    GlobalTensorT,
    KType,
    RecordT,
    ScalarT,
    TPipeT,
    Value,
    const,
    is_number,
    scalar,
)
from .common import plain_int
from .cross_core import matmul_flags

_INPUTS = {dt.float16: (dt.float16, dt.float32), dt.bfloat16: (dt.bfloat16, dt.float32),
           dt.float32: (dt.float32,), dt.int8: (dt.int32, dt.float16)}
_STATE = ("init", "om", "on", "oka", "okb", "okc", "sm", "sn", "sk", "bm", "bn", "bk", "order", "a_set",
          "a_rid", "a_off", "a_size", "b_set", "b_rid", "b_off", "b_size", "use_bias", "bias_rid", "bias_off",
          "bias_size", "count", "tm", "tn", "r0", "c0", "deq", "ws_rid", "ws_off", "live", "mbox", "kind", "t0", "t1", "seq",
          "dst_rid", "dst_off", "dst_size", "c_shift", "atomic", "qv_rid", "qv_off", "qv_size", "qvec", "nws_rid",
          "nws_off", "nws_size", "nb_loops", "nb_next", "nb_per", "nb_stride", "nws_set")


@dataclass(frozen=True)
class MatmulT(KType):
    """A Matmul object: its operand types and configuration; the state is in ``_mm<mid>_*`` variables."""

    mid: int
    a: Any
    b: Any
    c: Any
    bias: Any
    cfg: Any
    mix: bool = False

    def describe(self) -> str:
        return "Matmul"


@dataclass
class _Obj:
    pipe: Value | None = None
    bufs: tuple[Value, ...] | None = None
    scalar: dict[str, bool] = field(default_factory=lambda: {"a": False, "b": False})  # set_tensor_x(scalar) used
    computed: bool = False          # a tile's work was expanded (with the A/B form known then)
    qbuf: Value | None = None       # L1 buffer of the per-channel scales (int8 -> float16 objects)


_OBJECTS: weakref.WeakKeyDictionary[Any, dict[int, _Obj]] = weakref.WeakKeyDictionary()


def _obj(lw: LoweringContext, mm: MatmulT) -> _Obj:
    return _OBJECTS.setdefault(lw, {}).setdefault(mm.mid, _Obj())


def _v(mm: MatmulT, name: str) -> str:
    return f"_mm{mm.mid}_{name}"


def _lib() -> Any:
    from . import adv_matmul_lib
    return adv_matmul_lib


def _acc(mm: MatmulT) -> dt.DataType:
    return dt.int32 if mm.a.dtype is dt.int8 else dt.float32


def vec_quant(mm: MatmulT) -> bool:
    """Whether the object dequantises (int8 x int8 -> float16 C): set_quant_scalar / set_quant_vector apply."""
    return mm.a.dtype is dt.int8 and mm.c.dtype is dt.float16


def _check_types(lw: LoweringContext, call: Call, a: Any, b: Any, c: Any, bias: Any) -> None:
    for name, t in (("a", a), ("b", b), ("c", c)):
        if not isinstance(t, lang.MatmulType):
            lw.type_error(f"Matmul {name} must be an asc.adv.MatmulType, got {t!r}", call.node)
    if a.dtype is not b.dtype or a.dtype not in _INPUTS:
        lw.type_error(f"Matmul inputs: A {a.dtype.name} x B {b.dtype.name} is not a cube type combination "
                      f"(float16, bfloat16, float32 or int8, the same for A and B)", call.node)
    if c.dtype not in _INPUTS[a.dtype]:
        lw.type_error(f"Matmul C: {c.dtype.name} is not an output of {a.dtype.name} inputs (allowed: "
                      f"{', '.join(d.name for d in _INPUTS[a.dtype])})", call.node)
    acc = dt.int32 if a.dtype is dt.int8 else dt.float32
    if bias is not None and bias.dtype is not acc:
        lw.type_error(f"Matmul bias: {bias.dtype.name} with {a.dtype.name} inputs; the bias is {acc.name} "
                      f"(the L0C type)", call.node)
    for name, t in (("a", a), ("b", b), ("bias", bias)):
        if t is not None and t.position != TPosition.GM:
            lw.fail(f"Matmul {name} in {TPosition(t.position).name}: npuemu emulates A, B and the bias in GM "
                    f"(TPosition.GM); see docs/matmul-api.md", call.node, UnsupportedSyntaxError)
        if t is not None and t.format != CubeFormat.ND and (name == "bias" or t.format != CubeFormat.NZ or
                                                             t.is_trans or t.dtype.sizeof() != 2):
            lw.fail(f"Matmul {name} in format {CubeFormat(t.format).name}: npuemu emulates ND inputs, and NZ A and "
                    f"B of float16/bfloat16 not transposed; see docs/matmul-api.md", call.node,
                    UnsupportedSyntaxError)
    if a.is_trans and a.dtype.sizeof() != 2:
        lw.fail(f"Matmul with a transposed {a.dtype.name} A: npuemu emulates transposed A for float16 and "
                f"bfloat16", call.node, UnsupportedSyntaxError)
    if a.dtype is dt.int8 and not b.is_trans:
        lw.fail("Matmul with int8 B: npuemu emulates int8 B given transposed ([N, K], MatmulType is_trans=True)",
                call.node, UnsupportedSyntaxError)


@rule(lang.Matmul)
def _matmul(lw: LoweringContext, call: Call) -> Value:
    args = call.bind_to(lw, lang.Matmul)
    a, b, c = (lw.const_value(args[k], call.node, f"Matmul {k}") for k in ("a", "b", "c"))
    bias = lw.const_value(args["bias"], call.node, "Matmul bias")
    cfg = lw.const_value(args["matmul_config"], call.node, "matmul_config") or lang.get_normal_config()
    _check_types(lw, call, a, b, c, bias)
    kt = lw.facts.kernel_type
    if kt not in (KernelType.AIC_ONLY, KernelType.MIX_AIC_1_0, KernelType.MIX_AIC_1_1, KernelType.MIX_AIC_1_2):
        lw.fail(f"asc.adv.Matmul in a {KernelType(kt).name} kernel: the object needs the cube: a cube-only kernel "
                f"(@asc.jit(matmul_cube_only=True)) or a MIX one (kernel_type=KernelType.MIX_AIC_1_2, where the "
                f"vector cores drive the cube; docs/matmul-api.md)", call.node, UnsupportedSyntaxError)
    mix = kt in (KernelType.MIX_AIC_1_1, KernelType.MIX_AIC_1_2)
    mm = MatmulT(lw.count("adv_matmul"), a, b, c, bias, cfg, mix)
    for name in _STATE:
        lw.declare_runtime(_v(mm, name), "np.int64(0)")
    for name in ("a_val", "b_val"):
        lw.declare_runtime(_v(mm, name), "np.float32(0)")
    return Value(mm)


def _int(lw: LoweringContext, v: Value, call: Call, what: str) -> str:
    return plain_int(lw.int_expr(v, call.node, what))


def _tiling_fields(lw: LoweringContext, t: Value, call: Call) -> dict[str, str]:
    names = ("m", "n", "k_a", "k_b", "single_core_m", "single_core_n", "single_core_k", "base_m", "base_n",
             "base_k", "depth_a1", "depth_b1", "iterate_order", "db_l0a", "db_l0b", "db_l0c")
    if isinstance(t.type, RecordT):
        return {n: _int(lw, t.item(n), call, f"tiling.{n}") for n in names}
    if t.is_const and hasattr(t.const, "base_m"):
        return {n: str(int(getattr(t.const, n))) for n in names}
    lw.type_error(f"Matmul init needs a TCubeTiling (or MatmulApiStaticTiling), got {lw.describe(t)}", call.node)


def _take_tiling(lw: LoweringContext, call: Call, mm: MatmulT, tiling: Value) -> dict[str, str]:
    """The object's state from the tiling (every core)."""
    f = _tiling_fields(lw, tiling, call)
    sets = {"om": f["m"], "on": f["n"], "oka": f["k_a"], "okb": f["k_b"], "okc": f["n"], "sm": f["single_core_m"],
            "sn": f["single_core_n"], "sk": f["single_core_k"], "bm": f["base_m"], "bn": f["base_n"],
            "bk": f["base_k"], "order": f["iterate_order"], "init": "1", "count": "0", "a_set": "0", "b_set": "0",
            "use_bias": "0"}
    for k, e in sets.items():
        lw.emit(f"{_v(mm, k)} = np.int64({e})")
    return f


def _cube_setup(lw: LoweringContext, call: Call, mm: MatmulT, f: dict[str, str]) -> None:
    """On the cube core: check the tiling against the buffers and take them from the pipe (first init)."""
    o = _obj(lw, mm)
    sz = mm.a.dtype.sizeof()
    lw.emit_isa("adv_matmul", "check_tiling", ["_st", f["base_m"], f["base_n"], f["base_k"], f["depth_a1"],
                                               f["depth_b1"], f["db_l0a"], f["db_l0b"], f["db_l0c"], str(sz),
                                               "1" if mm.bias is not None else "0"], call.node)
    if o.bufs is None:
        with_bias = mm.bias is not None
        out = lw.inline_values(_lib().alloc, [o.pipe, const(mm.a.dtype), const(_acc(mm)),
                                              scalar("int", _v(mm, "bm")), scalar("int", _v(mm, "bn")),
                                              scalar("int", _v(mm, "bk"))], {}, call.node).items
        if with_bias:
            out = out + lw.inline_values(_lib().alloc_bias, [o.pipe, const(_acc(mm)), scalar("int", _v(mm, "bn"))],
                                         {}, call.node).items
        o.bufs = tuple(lw.fresh_value(x, "mmbuf") for x in out)
        if vec_quant(mm):
            q = lw.inline_values(_lib().alloc_scales, [o.pipe, scalar("int", _v(mm, "bn"))], {}, call.node)
            o.qbuf = lw.fresh_value(q, "mmbuf")


def _init(lw: LoweringContext, call: Call, mm: MatmulT, tiling: Value) -> None:
    o = _obj(lw, mm)
    if o.pipe is None:
        lw.fail("Matmul init before register_matmul: call asc.adv.register_matmul(pipe, matmul, tiling) so the "
                "object can take its buffers from the pipe", call.node, UnsupportedSyntaxError)
    if mm.mix:
        lw.fail("Matmul.init in a MIX kernel: give the tiling to register_matmul(pipe, matmul, tiling), where the "
                "cube core starts serving the object", call.node, UnsupportedSyntaxError)
    _cube_setup(lw, call, mm, _take_tiling(lw, call, mm, tiling))


@rule(lang.register_matmul)
def _register(lw: LoweringContext, call: Call) -> None:
    args = call.bind_to(lw, lang.register_matmul)
    pipe, ws, mmv, tiling = args["pipe"], args["workspace"], args["matmul"], args["tiling"]
    if isinstance(ws.type, MatmulT):          # pyasc's register_matmul(pipe, matmul, tiling)
        ws, mmv, tiling = const(None), ws, mmv
    if not isinstance(pipe.type, TPipeT):
        lw.type_error(f"register_matmul needs the TPipe first, got {lw.describe(pipe)}", call.node)
    if not isinstance(mmv.type, MatmulT):
        lw.type_error(f"register_matmul needs an asc.adv.Matmul, got {lw.describe(mmv)}", call.node)
    mm: MatmulT = mmv.type
    _obj(lw, mm).pipe = pipe
    if mm.mix:
        if tiling.is_const and tiling.const is None:
            lw.fail("register_matmul in a MIX kernel needs the tiling: the cube core initialises the object and "
                    "serves it from here", call.node, UnsupportedSyntaxError)
        from . import adv_matmul_mix as mix
        lw.facts.mix_matmuls += 1
        matmul_flags(lw)
        f = _take_tiling(lw, call, mm, tiling)
        mix.register(lw, call, mm, _v, ws, lambda: _cube_setup(lw, call, mm, f))
    elif not (tiling.is_const and tiling.const is None):
        _init(lw, call, mm, tiling)


@method(MatmulT, "init")
def _m_init(lw: LoweringContext, call: Call) -> None:
    _init(lw, call, call.recv.type, call.bind_to(lw, lang.Matmul.init)["tiling"])


def _gm(lw: LoweringContext, call: Call, v: Value, what: str, dtype: dt.DataType) -> tuple[str, str, str]:
    if not isinstance(v.type, GlobalTensorT) or v.type.dtype is None:
        lw.fail(f"Matmul {what}: npuemu takes a bound GlobalTensor here, got {lw.describe(v)}", call.node,
                UnsupportedSyntaxError)
    if v.type.dtype is not dtype:
        lw.type_error(f"Matmul {what}: the tensor is {v.type.dtype.name}, the MatmulType says {dtype.name}",
                      call.node)
    return tuple(plain_int(c) for c in v.code)  # type: ignore[return-value]


def _set_input(lw: LoweringContext, call: Call, which: str) -> None:
    mm: MatmulT = call.recv.type
    t = mm.a if which == "a" else mm.b
    if call.args and is_number(call.args[0]):
        _set_scalar(lw, call, mm, which, call.args[0])
        return
    if not call.args or (call.args[0].type.__class__ is not GlobalTensorT):
        lw.fail(f"set_tensor_{which} with {lw.describe(call.args[0]) if call.args else 'nothing'}: npuemu takes "
                f"a GlobalTensor or a scalar", call.node, UnsupportedSyntaxError)
    o = _obj(lw, mm)
    if o.scalar[which]:
        lw.fail(f"set_tensor_{which} with a tensor on an object given a scalar {which.upper()} before: npuemu "
                f"expands each object's {which.upper()} in one form; use two Matmul objects", call.node,
                UnsupportedSyntaxError)
    a = call.bind_to(lw, getattr(lang.Matmul, f"set_tensor_{which}"))
    trans = a.get("transpose", const(False))
    if not trans.is_const or bool(trans.const) != bool(t.is_trans):
        lw.fail(f"set_tensor_{which}(transpose=...) must be the constant of the MatmulType's is_trans "
                f"({bool(t.is_trans)})", call.node, UnsupportedSyntaxError)
    rid, off, size = _gm(lw, call, a["tensor"], which.upper(), t.dtype)
    for k, e in (("rid", rid), ("off", off), ("size", size), ("set", "1")):
        lw.emit(f"{_v(mm, f'{which}_{k}')} = np.int64({e})")


def _set_scalar(lw: LoweringContext, call: Call, mm: MatmulT, which: str, v: Value) -> None:
    """``set_tensor_a/b(scalar)``: every element of the matrix equals the scalar (filled in L1)."""
    t = mm.a if which == "a" else mm.b
    if mm.mix:
        lw.fail(f"set_tensor_{which}(scalar) in a MIX kernel: npuemu emulates the scalar form in cube-only "
                f"kernels", call.node, UnsupportedSyntaxError)
    o = _obj(lw, mm)
    if o.computed and not o.scalar[which]:
        lw.fail(f"set_tensor_{which}(scalar) after the object computed with a tensor {which.upper()}: npuemu "
                f"expands each object's {which.upper()} in one form; use two Matmul objects", call.node,
                UnsupportedSyntaxError)
    o.scalar[which] = True
    e = lw.materialize(v, call.node, "float")
    if t.dtype is dt.int8:    # L1 is filled through an int16 view: the byte twice
        e = f"(((np.int64({e}) & 255) * 257) ^ 32768) - 32768"
    lw.emit(f"{_v(mm, which + '_val')} = np.float32({e})")
    lw.emit(f"{_v(mm, which + '_set')} = np.int64(1)")


@method(MatmulT, "set_tensor_a")
def _set_a(lw: LoweringContext, call: Call) -> None:
    _set_input(lw, call, "a")


@method(MatmulT, "set_tensor_b")
def _set_b(lw: LoweringContext, call: Call) -> None:
    _set_input(lw, call, "b")


@method(MatmulT, "set_bias")
def _set_bias(lw: LoweringContext, call: Call) -> None:
    mm: MatmulT = call.recv.type
    if mm.bias is None:
        lw.type_error("set_bias on a Matmul created without a bias MatmulType", call.node)
    rid, off, size = _gm(lw, call, call.bind_to(lw, lang.Matmul.set_bias)["tensor"], "bias", mm.bias.dtype)
    for k, e in (("bias_rid", rid), ("bias_off", off), ("bias_size", size), ("use_bias", "1")):
        lw.emit(f"{_v(mm, k)} = np.int64({e})")


@method(MatmulT, "disable_bias")
def _disable_bias(lw: LoweringContext, call: Call) -> None:
    lw.emit(f"{_v(call.recv.type, 'use_bias')} = np.int64(0)")


def _assign_args(lw: LoweringContext, call: Call, stub: Any, pairs: list[tuple[str, str]],
                 keep_negative: bool = False) -> None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, stub)
    lw.emit_isa("adv_matmul", "check_init", ["_st", _v(mm, "init")], call.node)
    for param, var in pairs:
        v = a.get(param)
        if v is None or (v.is_const and v.const is None):
            continue
        e = _int(lw, v, call, param)
        if keep_negative:
            lw.emit(f"if {e} >= 0: {_v(mm, var)} = np.int64({e})")
        else:
            lw.emit(f"{_v(mm, var)} = np.int64({e})")


@method(MatmulT, "set_org_shape")
def _set_org_shape(lw: LoweringContext, call: Call) -> None:
    mm: MatmulT = call.recv.type
    _assign_args(lw, call, lang.Matmul.set_org_shape, [("org_m", "om"), ("org_n", "on"), ("org_ka", "oka")])
    a = call.bind_to(lw, lang.Matmul.set_org_shape)
    kb = a.get("org_kb")
    lw.emit(f"{_v(mm, 'okb')} = {_v(mm, 'oka')}" if kb is None or (kb.is_const and kb.const is None)
            else f"{_v(mm, 'okb')} = np.int64({_int(lw, kb, call, 'org_kb')})")
    kc = a.get("org_kc")
    lw.emit(f"{_v(mm, 'okc')} = {_v(mm, 'on')}" if kc is None or (kc.is_const and kc.const is None)
            else f"{_v(mm, 'okc')} = np.int64({_int(lw, kc, call, 'org_kc')})")


@method(MatmulT, "set_single_shape")
def _set_single_shape(lw: LoweringContext, call: Call) -> None:
    _assign_args(lw, call, lang.Matmul.set_single_shape, [("single_m", "sm"), ("single_n", "sn"),
                                                           ("single_k", "sk")])


@method(MatmulT, "set_tail")
def _set_tail(lw: LoweringContext, call: Call) -> None:
    _assign_args(lw, call, lang.Matmul.set_tail, [("tail_m", "sm"), ("tail_n", "sn"), ("tail_k", "sk")],
                 keep_negative=True)


@method(MatmulT, "set_quant_scalar")
def _set_quant_scalar(lw: LoweringContext, call: Call) -> None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.set_quant_scalar)
    lw.emit(f"{_v(mm, 'deq')} = np.int64({plain_int(lw.u64_expr(a['quant_scalar'], call.node, 'quant_scalar'))})")
    lw.emit(f"{_v(mm, 'qvec')} = np.int64(0)")


@method(MatmulT, "set_quant_vector")
def _set_quant_vector(lw: LoweringContext, call: Call) -> None:
    """Per-channel dequantisation: one uint64 quantisation word per column of C (fixpipe VDEQF16)."""
    mm: MatmulT = call.recv.type
    if not vec_quant(mm):
        lw.type_error(f"set_quant_vector on a Matmul of {mm.a.dtype.name} inputs and {mm.c.dtype.name} C: "
                      f"dequantisation applies to int8 x int8 -> float16 C", call.node)
    rid, off, size = _gm(lw, call, call.bind_to(lw, lang.Matmul.set_quant_vector)["quant_vector"],
                         "quant vector", dt.uint64)
    for k, e in (("qv_rid", rid), ("qv_off", off), ("qv_size", size), ("qvec", "1")):
        lw.emit(f"{_v(mm, k)} = np.int64({e})")


@method(MatmulT, "set_hf32")
def _set_hf32(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.Matmul.set_hf32)
    from ...language import cube as cube_lang
    registry.func_rule(cube_lang.set_hf32_mode)(lw, Call("set_hf32_mode", call.node, [a["enable_hf32"]], {}))
    mode = a["trans_mode"]
    away = Value(ScalarT("bool"), code=(f"({_int(lw, mode, call, 'trans_mode')} != 0)",)) if not mode.is_const \
        else const(bool(mode.const))
    registry.func_rule(cube_lang.set_hf32_trans_mode)(lw, Call("set_hf32_trans_mode", call.node, [away], {}))


@method(MatmulT, "set_batch_num", "wait_iterate_all", "wait_iterate_batch")
def _accepted(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, getattr(lang.Matmul, call.name))


@method(MatmulT, "end")
def _end(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, lang.Matmul.end)
    mm: MatmulT = call.recv.type
    if mm.mix:
        from ...isa.adv_matmul_msg import KIND_END
        from . import adv_matmul_mix as mix
        with lw.emit_if(f"{_v(mm, 'live')} != 0"):
            mix.request(lw, call, mm, _v, KIND_END, {})
    lw.emit(f"{_v(mm, 'init')} = np.int64(0)")


@method(MatmulT, "set_self_define_data", "set_sparse_index", "set_user_def_info", "async_get_tensor_c",
        "wait_get_tensor_c")
def _unsupported(lw: LoweringContext, call: Call) -> None:
    lw.fail(f"Matmul.{call.name} is not emulated by npuemu (docs/matmul-api.md lists what is)", call.node,
            UnsupportedSyntaxError)

