"""Rules for the compound vector instructions and the DEQSCALE register (:mod:`npuemu.language.vec_fused`).

The binary ones take the count form and the level-0 forms of ``add``; the
(source, destination) data types each takes are the language module's
``DTYPES``; :mod:`npuemu.isa.vec_fused` gives every combination a code.
"""
from __future__ import annotations

import ast
from typing import Callable

from ...isa import hb
from ...isa.vec_fused import CODES
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_fused as lang
from ...language.builtin import dtype_text
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import RecordT, ScalarT, TupleT, Value, const, is_number
from . import access
from .common import const_bool, level0_args, local, mask_operand, plain_int, repeat_params, suffix

READS_DST = (lang.fused_mul_add, lang.fused_mul_add_relu, lang.mul_add_dst)


def _pair(lw: LoweringContext, stub: Callable, src: dt.DataType, dst: dt.DataType, node: ast.AST | None) -> None:
    pairs = lang.DTYPES[stub]
    if (src, dst) not in pairs:
        lw.type_error(f"{stub.__name__} does not take {src.name} -> {dst.name} on this platform (it takes "
                      f"{', '.join(dtype_text(p) for p in pairs)})", node)


def _fused(lw: LoweringContext, call: Call, stub: Callable) -> None:
    name, a = stub.__name__, call.bind_to(lw, stub)
    dst, s0, s1 = a["dst"], a["src0"], a["src1"]
    d = local(lw, dst, call.node, "dst").dtype
    s = local(lw, s0, call.node, "src0").dtype
    if local(lw, s1, call.node, "src1").dtype is not s:
        lw.type_error(f"{name}: src0 is {s.name} but src1 is {s1.type.dtype.name}; both sources have one type",
                      call.node)
    _pair(lw, stub, s, d, call.node)
    code = CODES[(name, suffix(s), suffix(d))]
    reads_dst = stub in READS_DST
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *s0.code, *s1.code)), str(code)]
    if "count" in a:
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        for t in (s0, s1, *((dst,) if reads_dst else ())):
            access.local_count(lw, hb.V, t, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_fused", "fused", [*operands, count], call.node)
        return
    if "is_set_mask" not in a:          # mul_cast has no is_set_mask: it always sets the mask
        a = {**a, "is_set_mask": const(True)}
    l0 = level0_args(lw, a, P.BinaryRepeatParams, call.node)
    head, (dblk, s0blk, s1blk, drep, s0rep, s1rep) = l0[:5], l0[5:]
    wide = max(s.sizeof(), d.sizeof())           # lanes and mask follow the wider type
    access.level0(lw, hb.V, s0, head, s0blk, s0rep, access.READ, call.node, wide)
    access.level0(lw, hb.V, s1, head, s1blk, s1rep, access.READ, call.node, wide)
    if reads_dst:
        access.level0(lw, hb.V, dst, head, dblk, drep, access.READ, call.node, wide)
    access.level0(lw, hb.V, dst, head, dblk, drep, access.WRITE, call.node, wide)
    lw.emit_isa("vec_fused", "fused_l0", [*operands, *l0], call.node)


def _rule_for(stub: Callable) -> Callable:
    return lambda lw, call: _fused(lw, call, stub)


for _stub in (lang.fused_mul_add, lang.fused_mul_add_relu, lang.mul_add_dst, lang.add_relu_cast,
              lang.sub_relu_cast, lang.mul_cast, lang.add_deq_relu):
    rule(_stub)(_rule_for(_stub))


@rule(lang.cast_deq)
def _cast_deq(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.cast_deq)
    dst, src = a["dst"], a["src"]
    d = local(lw, dst, call.node, "dst").dtype
    s = local(lw, src, call.node, "src").dtype
    _pair(lw, lang.cast_deq, s, d, call.node)
    vec = const_bool(lw, a["is_vec_deq"], call.node, "is_vec_deq")
    half = const_bool(lw, a["half_block"], call.node, "half_block")
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)), str(vec), str(int(half))]
    if "count" in a:
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, src, count, access.READ, call.node)
        # 16 results per 32-byte DataBlock of dst (half of it is written)
        access.local(lw, hb.V, dst, f"(({count}) + 15) // 16 * 32", access.WRITE, call.node)
        lw.emit_isa("vec_fused", "cast_deq", [*operands, count], call.node)
        return
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    head = [str(is_set_mask), *mask_operand(lw, a["mask"], call.node),
            lw.int_expr(a["repeat_times"], call.node, "repeat_times")]
    dblk, sblk, drep, srep = repeat_params(lw, a["repeat_params"], P.UnaryRepeatParams, call.node)
    access.level0(lw, hb.V, src, head, sblk, srep, access.READ, call.node)
    access.level0(lw, hb.V, dst, head, dblk, drep, access.WRITE, call.node, 2, 2)
    lw.emit_isa("vec_fused", "cast_deq_l0", [*operands, head[0], head[1], *(plain_int(h) for h in head[2:]),
                                             *(plain_int(x) for x in (dblk, sblk, drep, srep))], call.node)


# --------------------------------------------------------------------------- DEQSCALE


def _sixteen(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> list[Value]:
    """A VdeqInfo field: 16 numbers, given as a list or tuple."""
    if v.is_const and isinstance(v.const, (list, tuple)):
        items = [const(c) for c in v.const]
    elif isinstance(v.type, TupleT):
        items = list(v.items)
    else:
        lw.type_error(f"VdeqInfo.{what} must be a list of {lang.VDEQ_TENSOR_SIZE} numbers, got {lw.describe(v)}",
                      node)
    if len(items) != lang.VDEQ_TENSOR_SIZE or not all(is_number(i) for i in items):
        lw.type_error(f"VdeqInfo.{what} must hold {lang.VDEQ_TENSOR_SIZE} numbers, got "
                      f"{len(items)} values", node)
    return items


@rule(lang.VdeqInfo)
def _vdeq_info(lw: LoweringContext, call: Call) -> Value:
    names = lang.VdeqInfo.field_names()
    a = call.bind(lw, ", ".join(f"{n}=?" for n in names))
    items = []
    for name, default, _ in lang.VdeqInfo._fields_:
        v = a.get(name, const(default))
        items.append(Value(TupleT(lang.VDEQ_TENSOR_SIZE), items=tuple(_sixteen(lw, v, call.node, name))))
    return Value(RecordT(lang.VdeqInfo, names), items=tuple(items))


def _tuple(exprs: list[str]) -> str:
    return f"({', '.join(exprs)},)"


@rule(lang.set_deq_scale)
def _set_deq_scale(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.set_deq_scale)
    if "vdeq" in a:
        vdeq, info = a["vdeq"], a["vdeq_info"]
        t = local(lw, vdeq, call.node, "vdeq")
        if t.dtype is not dt.uint64:
            lw.type_error(f"set_deq_scale's vdeq must be a uint64 LocalTensor, got {t.dtype.name}", call.node)
        if not (isinstance(info.type, RecordT) and info.type.cls is lang.VdeqInfo):
            lw.type_error(f"set_deq_scale's vdeq_info must be an asc.VdeqInfo, got {lw.describe(info)}", call.node)
        scales, offsets, signs = (info.item(n).items for n in lang.VdeqInfo.field_names())
        args = [_tuple([lw.materialize(v, call.node, "float") for v in scales]),
                _tuple([f"np.int64({lw.int_expr(v, call.node, 'vdeq_offset')})" for v in offsets]),
                _tuple([f"np.int64({lw.materialize(v, call.node)})" for v in signs])]
        access.local(lw, hb.S, vdeq, "128", access.WRITE, call.node)
        lw.emit_isa("vec_fused", "set_vdeq", ["_st", "_lm", *(plain_int(c) for c in vdeq.code), *args], call.node)
        return
    scale = a["scale"]
    if not is_number(scale) or (isinstance(scale.type, ScalarT) and scale.type.kind == "bool"):
        lw.type_error(f"set_deq_scale's scale must be a number, got {lw.describe(scale)}", call.node)
    f = lw.materialize(scale, call.node, "float")
    if "offset" not in a:
        lw.emit(f"{lw.isa('vec_fused', 'set_deq_scale')}(_st, {f})")
        return
    offset = lw.int_expr(a["offset"], call.node, "offset")
    sign = a["sign_mode"]
    if not is_number(sign):
        lw.type_error(f"set_deq_scale's sign_mode must be a bool, got {lw.describe(sign)}", call.node)
    lw.emit(f"{lw.isa('vec_fused', 'set_deq_scale_cfg')}(_st, {f}, np.int64({offset}), "
            f"np.int64({lw.materialize(sign, call.node)}))")

