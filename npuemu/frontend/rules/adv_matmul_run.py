"""The computing methods of the Matmul object: ``iterate``, ``get_tensor_c``, ``iterate_all``,
``iterate_batch``, ``get_offset_c`` (state and set-up: ``adv_matmul.py``).

Tiles are numbered in the tiling's ``iterate_order``: 0 (ORDER_M) walks M
first (tile ``t`` is row ``t % tiles_m``, column ``t // tiles_m``), 1
(ORDER_N) walks N first.
"""
from __future__ import annotations

from ...errors import UnsupportedSyntaxError
from ...isa.adv_matmul_msg import KIND_TILES
from ...language import adv_matmul as lang
from ...language import dtype as dt
from ...language.enums import CubeFormat, QuantModes, TPosition
from .. import registry
from ..context import LoweringContext
from ..registry import Call, method
from ..types import GlobalTensorT, LocalTensorT, RecordT, Value, const, scalar
from .adv_matmul import MatmulT, _int, _lib, _obj, _v
from .common import plain_int


def _quant(mm: MatmulT) -> QuantModes:
    c, a = mm.c.dtype, mm.a.dtype
    if a is dt.int8:
        return QuantModes.DEQF16 if c is dt.float16 else QuantModes.NoQuant
    return {dt.float16: QuantModes.F322F16, dt.bfloat16: QuantModes.F322BF16}.get(c, QuantModes.NoQuant)


def _s(mm: MatmulT, name: str) -> Value:
    return scalar("int", _v(mm, name))


def _ready(lw: LoweringContext, call: Call, mm: MatmulT) -> tuple[Value, ...]:
    lw.emit_isa("adv_matmul", "check_ready", ["_st", _v(mm, "init"), _v(mm, "a_set"), _v(mm, "b_set"),
                                              _v(mm, "sm"), _v(mm, "sn"), _v(mm, "sk")], call.node)
    bufs = _obj(lw, mm).bufs
    if mm.mix:
        return ()
    if bufs is None:
        lw.fail(f"Matmul.{call.name} before init: call asc.adv.register_matmul(pipe, matmul, tiling) or "
                f"matmul.init(tiling) first", call.node, UnsupportedSyntaxError)
    return bufs


def _tensor(mm: MatmulT, which: str, dtype: dt.DataType) -> Value:
    return Value(GlobalTensorT(dtype), code=tuple(_v(mm, f"{which}_{k}") for k in ("rid", "off", "size")))


def _lds(mm: MatmulT) -> tuple[Value, Value]:
    lda = _s(mm, "om") if mm.a.is_trans else _s(mm, "oka")
    ldb = _s(mm, "okb") if mm.b.is_trans else _s(mm, "on")
    return lda, ldb


def _tile(lw: LoweringContext, call: Call, mm: MatmulT, bufs: tuple[Value, ...]) -> None:
    """Inline the tile at (``_r0``, ``_c0``), ``_tm x _tn``, over the whole single-core K."""
    with_bias = mm.bias is not None
    a1, b1, a2, b2, co1 = bufs[:5]
    bias1, bt = (bufs[5], bufs[6]) if with_bias else (co1, co1)
    ag, bg = _tensor(mm, "a", mm.a.dtype), _tensor(mm, "b", mm.b.dtype)
    biasg = _tensor(mm, "bias", mm.bias.dtype) if with_bias else ag
    lda, ldb = _lds(mm)
    o = _obj(lw, mm)
    o.computed = True
    lw.inline_values(_lib().tile, [a1, b1, a2, b2, co1, bias1, bt, ag, bg, biasg, _s(mm, "r0"), _s(mm, "c0"),
                                   _s(mm, "tm"), _s(mm, "tn"), _s(mm, "sk"), _s(mm, "bk"), lda, ldb,
                                   _s(mm, "use_bias"), const(bool(mm.a.is_trans)), const(bool(mm.b.is_trans)),
                                   const(with_bias), const(mm.a.format == CubeFormat.NZ),
                                   const(mm.b.format == CubeFormat.NZ), _aligned(mm, "om"), _aligned(mm, "okb"),
                                   const(o.scalar["a"]), const(o.scalar["b"]), scalar("float", _v(mm, "a_val")),
                                   scalar("float", _v(mm, "b_val"))], {}, call.node)


def _aligned(mm: MatmulT, name: str) -> Value:
    """A state variable rounded up to 16: the rows of each column block of an NZ matrix in GM."""
    return scalar("int", f"(({_v(mm, name)} + 15) // 16 * 16)")


def _place(lw: LoweringContext, mm: MatmulT, t: str) -> None:
    """Set ``_r0, _c0, _tm, _tn`` of tile number ``t``."""
    v = {k: _v(mm, k) for k in ("sm", "sn", "bm", "bn", "order", "r0", "c0", "tm", "tn")}
    ntm, ntn = f"(({v['sm']} + {v['bm']} - 1) // {v['bm']})", f"(({v['sn']} + {v['bn']} - 1) // {v['bn']})"
    lw.emit(f"if {v['order']} == 1:")
    lw.emit(f"    {v['r0']} = ({t}) // {ntn} * {v['bm']}")
    lw.emit(f"    {v['c0']} = ({t}) % {ntn} * {v['bn']}")
    lw.emit("else:")
    lw.emit(f"    {v['r0']} = ({t}) % {ntm} * {v['bm']}")
    lw.emit(f"    {v['c0']} = ({t}) // {ntm} * {v['bn']}")
    lw.emit(f"{v['tm']} = min({v['bm']}, {v['sm']} - {v['r0']})")
    lw.emit(f"{v['tn']} = min({v['bn']}, {v['sn']} - {v['c0']})")


def _tiles(mm: MatmulT) -> str:
    return (f"((({_v(mm, 'sm')} + {_v(mm, 'bm')} - 1) // {_v(mm, 'bm')}) * "
            f"(({_v(mm, 'sn')} + {_v(mm, 'bn')} - 1) // {_v(mm, 'bn')}))")


@method(MatmulT, "iterate")
def _iterate(lw: LoweringContext, call: Call) -> Value:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.iterate)
    if a["local_c_matrix"] is not None and not (a["local_c_matrix"].is_const and a["local_c_matrix"].const is None):
        lw.fail("Matmul.iterate(local_c_matrix=...) is not emulated", call.node, UnsupportedSyntaxError)
    bufs = _ready(lw, call, mm)
    more = lw.new_var("mmmore")
    count = _v(mm, "count")
    lw.emit(f"{more} = {count} < {_tiles(mm)}")
    with lw.emit_if(more):
        _place(lw, mm, count)
        if not mm.mix:          # MIX: the cube computes the tile when get_tensor_c asks for it
            _tile(lw, call, mm, bufs)
        lw.emit(f"{count} += 1")
    # after the last tile the next round starts again from the first (a new set_tensor_a/b, set_tail, ...)
    lw.emit(f"if not {more}: {count} = np.int64(0)")
    return scalar("bool", more)


@method(MatmulT, "_tile_index")
def _tile_index(lw: LoweringContext, call: Call) -> Value:
    return lw.fresh_value(scalar("int", f"({_v(call.recv.type, 'count')} - 1)"), "mmcount")


registry.LOOP_CONTEXTS[(MatmulT, "iterate")] = "_tile_index"


def _out(lw: LoweringContext, call: Call, mm: MatmulT, tensor: Value, need: str, tiles: str) -> tuple[str, ...]:
    if mm.mix and isinstance(tensor.type, LocalTensorT) and tensor.type.pos in _UB:
        pass
    elif not isinstance(tensor.type, GlobalTensorT) or tensor.type.dtype is None:
        lw.fail(f"Matmul output to {lw.describe(tensor)}: a cube-only kernel writes C to a GlobalTensor (L0C "
                f"has no path to UB on Atlas A2/A3); a MIX kernel's vector cores take it into UB", call.node,
                UnsupportedSyntaxError)
    if tensor.type.dtype is not mm.c.dtype:
        lw.type_error(f"Matmul output tensor is {tensor.type.dtype.name}, the C MatmulType says "
                      f"{mm.c.dtype.name}", call.node)
    codes = tuple(plain_int(c) for c in tensor.code)
    lw.emit_isa("adv_matmul", "check_out", ["_st", _v(mm, "init"), tiles, need, codes[-1]], call.node)
    return codes


def _store(lw: LoweringContext, call: Call, mm: MatmulT, dst: Value, ld: Value, atomic: Value) -> None:
    o = _obj(lw, mm)
    co1 = o.bufs[4]
    vec = o.qbuf is not None
    qbuf, qg = (o.qbuf, _tensor(mm, "qv", dt.uint64)) if vec else (co1, dst)
    lw.inline_values(_lib().store, [dst, co1, _s(mm, "tm"), _s(mm, "tn"), ld, const(_quant(mm)), _s(mm, "deq"),
                                    atomic, qbuf, qg, _s(mm, "c0"), _s(mm, "qvec"), const(vec)], {}, call.node)


def _atomic(lw: LoweringContext, call: Call, v: Value) -> Value:
    """``en_atomic``: 0 none, 1 add, 2 max, 3 min (a constant is checked here, a run-time value by the
    atomic instructions' own rules: another value writes plainly)."""
    if v.is_const:
        if v.const not in (0, 1, 2, 3, False, True):
            lw.type_error(f"en_atomic must be 0 (none), 1 (add), 2 (max) or 3 (min), got {v.const!r}", call.node)
        return const(int(v.const))
    return scalar("int", _int(lw, v, call, "en_atomic"))


@method(MatmulT, "get_tensor_c")
def _get_tensor_c(lw: LoweringContext, call: Call) -> Value | None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.get_tensor_c)
    atomic = _atomic(lw, call, a.get("en_atomic", const(0)))
    seq = a.get("en_sequential_write", const(False))
    if not seq.is_const:
        lw.fail("en_sequential_write must be a constant", call.node, UnsupportedSyntaxError)
    if "tensor" not in a:
        # get_tensor_c(): the tile at the start of the workspace, rows of base_n, returned as a GlobalTensor
        from .adv_matmul_batch import workspace_tensor
        ws = workspace_tensor(lw, call, mm, 1)
        _tile_out(lw, call, mm, ws, True, atomic)
        size = f"({_v(mm, 'bm')} * {_v(mm, 'bn')})"
        return lw.fresh_value(Value(ws.type, code=(ws.code[0], ws.code[1],
                                                   f"({size} if {ws.code[2]} < 0 else min({size}, {ws.code[2]}))")),
                              "mmtile")
    _tile_out(lw, call, mm, a["tensor"], bool(seq.const), atomic)
    return None


def _tile_out(lw: LoweringContext, call: Call, mm: MatmulT, tensor: Value, seq: bool, atomic: Value) -> None:
    """The last tile into ``tensor``: at its place in C, or (``seq``) at its start with rows of base_n."""
    tm, tn, r0, c0 = (_v(mm, k) for k in ("tm", "tn", "r0", "c0"))
    if mm.mix:
        _mix_get_tensor_c(lw, call, mm, tensor, seq, atomic)
        return
    if seq:
        ld = _s(mm, "bn")
        need = f"(({tm} - 1) * {_v(mm, 'bn')} + {tn})"
        rid, off, size = _out(lw, call, mm, tensor, need, _v(mm, "count"))
        _store(lw, call, mm, Value(tensor.type, code=(rid, off, size)), ld, atomic)
        return
    ldc = _v(mm, "okc")
    need = f"(({r0} + {tm} - 1) * {ldc} + {c0} + {tn})"
    rid, off, size = _out(lw, call, mm, tensor, need, _v(mm, "count"))
    sz = mm.c.dtype.sizeof()
    dst = lw.fresh_value(Value(tensor.type, code=(rid, f"({off} + ({r0} * {ldc} + {c0}) * {sz})",
                                                       f"-1 if {size} < 0 else {size} - ({r0} * {ldc} + {c0})")),
                         "mmc")
    _store(lw, call, mm, dst, scalar("int", ldc), atomic)


@method(MatmulT, "iterate_all")
def _iterate_all(lw: LoweringContext, call: Call) -> None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.iterate_all)
    atomic = _atomic(lw, call, a.get("en_atomic", const(0)))
    _all(lw, call, mm, a["tensor"], "0", "0", "0", atomic)


def _all(lw: LoweringContext, call: Call, mm: MatmulT, tensor: Value, a_shift: str, b_shift: str,
         c_shift: str, atomic: Value) -> None:
    """Every tile of the block into ``tensor`` (+ ``c_shift`` elements), A/B shifted by elements."""
    if mm.mix:
        saved = _shift(lw, mm, a_shift, b_shift)
        _mix_all(lw, call, mm, tensor, c_shift, atomic)
        for w, var in saved.items():
            lw.emit(f"{_v(mm, w + '_off')} = {var}")
        return
    bufs = _ready(lw, call, mm)
    ldc = _v(mm, "okc")
    need = f"({c_shift} + ({_v(mm, 'sm')} - 1) * {ldc} + {_v(mm, 'sn')})"
    rid, off, _ = _out(lw, call, mm, tensor, need, "1")
    t = lw.new_var("mmt")
    sz = mm.c.dtype.sizeof()
    saved = _shift(lw, mm, a_shift, b_shift)
    with lw.emit_block(f"for {t} in range({_tiles(mm)}):"):
        _place(lw, mm, t)
        _tile(lw, call, mm, bufs)
        r0, c0 = _v(mm, "r0"), _v(mm, "c0")
        dst = lw.fresh_value(Value(tensor.type, code=(rid, f"({off} + ({c_shift} + {r0} * {ldc} + {c0}) * {sz})",
                                                      "-1")), "mmc")
        _store(lw, call, mm, dst, scalar("int", ldc), atomic)
    for w, var in saved.items():
        lw.emit(f"{_v(mm, w + '_off')} = {var}")


@method(MatmulT, "iterate_batch")
def _iterate_batch(lw: LoweringContext, call: Call) -> None:
    """``max(batch_a, batch_b)`` matmuls; matrix strides 0 mean whole matrices of the single-core shape."""
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.iterate_batch)
    atomic = _atomic(lw, call, a.get("en_atomic", const(0)))
    ba, bb = _int(lw, a["batch_a"], call, "batch_a"), _int(lw, a["batch_b"], call, "batch_b")
    strides = [_int(lw, a.get(k, const(0)), call, k) for k in ("matrix_stride_a", "matrix_stride_b",
                                                                "matrix_stride_c")]
    sa, sb, sc = (lw.new_var(f"mms{k}") for k in "abc")
    sm, sn, sk = _v(mm, "sm"), _v(mm, "sn"), _v(mm, "sk")
    lw.emit(f"{sa} = {strides[0]} if {strides[0]} > 0 else {sm} * {sk}")
    lw.emit(f"{sb} = {strides[1]} if {strides[1]} > 0 else {sk} * {sn}")
    lw.emit(f"{sc} = {strides[2]} if {strides[2]} > 0 else {sm} * {_v(mm, 'okc')}")
    i = lw.new_var("mmbatch")
    with lw.emit_block(f"for {i} in range(max({ba}, {bb})):"):
        # a batch of one A (or B) broadcasts it to every matmul of the other
        _all(lw, call, mm, a["tensor"], f"(0 if {ba} == 1 else {i} * {sa})", f"(0 if {bb} == 1 else {i} * {sb})",
             f"{i} * {sc}", atomic)


@method(MatmulT, "get_offset_c")
def _get_offset_c(lw: LoweringContext, call: Call) -> Value:
    mm: MatmulT = call.recv.type
    lw.emit_isa("adv_matmul", "check_out", ["_st", _v(mm, "init"), _v(mm, "count"), "0", "-1"], call.node)
    r0, c0, tm, tn = (_v(mm, k) for k in ("r0", "c0", "tm", "tn"))
    items = [lw.fresh_value(scalar("int", e), "mmoff") for e in
             (f"({r0} * {_v(mm, 'okc')} + {c0})", r0, c0, tm, tn)]
    return Value(RecordT(lang.MatrixOffset, ("offset", "row", "col", "height", "width")), items=tuple(items))


def _shift(lw: LoweringContext, mm: MatmulT, a_shift: str, b_shift: str) -> dict[str, str]:
    """Move A and B by elements for one matmul of a batch; returns the variables holding the old offsets."""
    saved = {}
    for w, shift in (("a", a_shift), ("b", b_shift)):
        if shift != "0":
            saved[w] = lw.new_var(f"mm{w}off")
            lw.emit(f"{saved[w]} = {_v(mm, w + '_off')}")
            lw.emit(f"{_v(mm, w + '_off')} += ({shift}) * {getattr(mm, w).dtype.sizeof()}")
    return saved


# --------------------------------------------------------------------------- MIX: the AIV's requests, the AIC's work

_UB = (TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC)


def _mix_get_tensor_c(lw: LoweringContext, call: Call, mm: MatmulT, tensor: Value, seq: bool,
                      atomic: Value) -> None:
    from . import adv_matmul_mix as mix
    tm, tn, r0, c0 = (_v(mm, k) for k in ("tm", "tn", "r0", "c0"))
    count = _v(mm, "count")
    tile = {"t0": f"({count} - 1)", "t1": count, "c_shift": "0", "atomic": _code(lw, atomic)}
    if mix.is_ub(tensor):
        if not (atomic.is_const and atomic.const == 0):
            lw.fail("get_tensor_c into UB with en_atomic: the vector core's tile has nothing to add to", call.node,
                    UnsupportedSyntaxError)
        tile["atomic"] = "0"
        bn = _v(mm, "bn")
        _out(lw, call, mm, tensor, f"({tm} * {bn})", count)
        st = mix.stage(lw, mm, _v)
        mix.request(lw, call, mm, _v, KIND_TILES, {**tile, "seq": "1", "dst_rid": st.code[0], "dst_off": st.code[1],
                                                   "dst_size": "-1"})
        lw.inline_values(_lib().to_ub, [tensor, st, scalar("int", f"({tm} * {bn})")], {}, call.node)
        return
    ldc = _v(mm, "bn") if seq else _v(mm, "okc")
    need = f"(({tm} - 1) * {ldc} + {tn})" if seq else f"(({r0} + {tm} - 1) * {ldc} + {c0} + {tn})"
    rid, off, size = _out(lw, call, mm, tensor, need, count)
    mix.request(lw, call, mm, _v, KIND_TILES, {**tile, "seq": "1" if seq else "0", "dst_rid": rid, "dst_off": off,
                                               "dst_size": size})


def _code(lw: LoweringContext, v: Value) -> str:
    return str(v.const) if v.is_const else v.code[0]


def _mix_all(lw: LoweringContext, call: Call, mm: MatmulT, tensor: Value, c_shift: str, atomic: Value) -> None:
    from . import adv_matmul_mix as mix
    _ready(lw, call, mm)
    ldc = _v(mm, "okc")
    need = f"({c_shift} + ({_v(mm, 'sm')} - 1) * {ldc} + {_v(mm, 'sn')})"
    rid, off, size = _out(lw, call, mm, tensor, need, "1")
    mix.request(lw, call, mm, _v, KIND_TILES, {"t0": "0", "t1": _tiles(mm), "c_shift": c_shift, "seq": "0",
                                               "dst_rid": rid, "dst_off": off, "dst_size": size,
                                               "atomic": _code(lw, atomic)})


def serve_tiles(lw: LoweringContext, call: Call, mm: MatmulT) -> None:
    """On the AIC: tiles ``t0 .. t1 - 1`` of the request (state variables set from it) into its destination."""
    bufs = _obj(lw, mm).bufs
    t = lw.new_var("mmt")
    sz = mm.c.dtype.sizeof()
    v = {k: _v(mm, k) for k in ("t0", "t1", "seq", "r0", "c0", "okc", "bn", "dst_rid", "dst_off", "c_shift")}
    with lw.emit_block(f"for {t} in range({v['t0']}, {v['t1']}):"):
        _place(lw, mm, t)
        _tile(lw, call, mm, bufs)
        at = f"(0 if {v['seq']} != 0 else {v['c_shift']} + {v['r0']} * {v['okc']} + {v['c0']})"
        dst = lw.fresh_value(Value(GlobalTensorT(mm.c.dtype), code=(v["dst_rid"], f"({v['dst_off']} + {at} * {sz})",
                                                                    "-1")), "mmc")
        _store(lw, call, mm, dst, scalar("int", f"({v['bn']} if {v['seq']} != 0 else {v['okc']})"),
               _s(mm, "atomic"))
