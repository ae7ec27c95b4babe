"""Rules for the element-wise math library of ``asc.adv`` (:mod:`npuemu.language.adv_math`).

Each call is checked at compile time (operands are vector-position
LocalTensors of one supported dtype, ``temp_buffer`` a LocalTensor or None)
and lowers to one instruction of :mod:`npuemu.isa.adv_math` /
:mod:`npuemu.isa.adv_math_binary`, which checks count, scratch size and
overlaps at run time.
"""
from __future__ import annotations

from typing import Callable

from ...isa import adv_math as isa
from ...isa import hb
from ...language import adv_math as lang
from ...language import dtype as dt
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import Value
from . import access
from .common import check_dtype, local, plain_int, same_dtype, suffix
from .vec_reduce import flag
from .vec_scalar import scalar_operand


def is_none(v: Value | None) -> bool:
    return v is None or (v.is_const and v.const is None)


def scratch_args(lw: LoweringContext, call: Call, a: dict[str, Value], name: str = "temp_buffer") -> list[str]:
    """``temp_buffer`` as isa arguments ``(addr, bytes, has_tmp)``; declared written whole (it is scratch)."""
    t = a.get(name)
    if is_none(t):
        return ["np.int64(0)", "np.int64(0)", "False"]
    local(lw, t, call.node, name)
    access.local_all(lw, hb.V, t, access.WRITE, call.node)
    return [plain_int(t.code[0]), plain_int(f"({t.code[1]}) * {t.type.dtype.sizeof()}"), "True"]


def count_arg(lw: LoweringContext, call: Call, a: dict[str, Value], src: Value) -> str:
    """``count``, or all of ``src`` when it is None (the Ascend C form without ``calCount``)."""
    c = a.get("count")
    if is_none(c):
        return plain_int(src.code[1])
    return plain_int(lw.int_expr(c, call.node, "count"))


def reuse_arg(lw: LoweringContext, call: Call, a: dict[str, Value]) -> str:
    return f"bool({flag(lw, a['is_reuse_source'], call.node, 'is_reuse_source')})"


def _need(stub: Callable, d: dt.DataType, reuse: str) -> str:
    """The minimum scratch in bytes, as an expression (``is_reuse_source`` may be a run-time value)."""
    if stub in (lang.power, lang.xor) or d is dt.float16:
        return plain_int(str(lang.min_tmp_bytes(stub, d, False)))
    plain, reused = lang.min_tmp_bytes(stub, d, False), lang.min_tmp_bytes(stub, d, True)
    return plain_int(str(plain)) if plain == reused else f"np.int64({reused} if {reuse} else {plain})"


def _operands(lw: LoweringContext, call: Call, a: dict[str, Value], names: tuple[str, ...], stub: Callable
              ) -> dt.DataType:
    for n in names:
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, call.name, call.node, *((n, a[n]) for n in names))
    same = [x for x in lang.DTYPES[stub] if not isinstance(x, tuple)]     # (src, dst) pairs are axpy's
    check_dtype(lw, f"asc.adv.{stub.__name__}", d, same, call.node)
    return d


def _unary(lw: LoweringContext, call: Call, stub: Callable) -> None:
    a = call.bind_to(lw, stub)
    d = _operands(lw, call, a, ("dst", "src"), stub)
    dst, src = a["dst"], a["src"]
    count = count_arg(lw, call, a, src)
    reuse = reuse_arg(lw, call, a)
    level = plain_int(lw.int_expr(a["taylor_expand_level"], call.node, "taylor_expand_level")) \
        if "taylor_expand_level" in a else "np.int64(0)"
    access.local_count(lw, hb.V, src, count, access.READ, call.node)
    tmp = scratch_args(lw, call, a)
    if d is dt.float32 and reuse != "bool(0)":       # the routine may use src as scratch
        access.local_count(lw, hb.V, src, count, access.WRITE, call.node)
    access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
    op = isa.NAMES.index(stub.__name__)
    lw.emit_isa("adv_math", f"unary_{suffix(d)}",
                ["_st", "_lm", f"np.int64({op})", *(plain_int(c) for c in (*dst.code, *src.code)), *tmp, count, reuse, level,
                 _need(stub, d, reuse)], call.node)


def _binary(lw: LoweringContext, call: Call, stub: Callable) -> None:
    a = call.bind_to(lw, stub)
    d = _operands(lw, call, a, ("dst", "src0", "src1"), stub)
    dst, s0, s1 = a["dst"], a["src0"], a["src1"]
    count = count_arg(lw, call, a, s0)
    reuse = reuse_arg(lw, call, a)
    access.local_count(lw, hb.V, s0, count, access.READ, call.node)
    access.local_count(lw, hb.V, s1, count, access.READ, call.node)
    tmp = scratch_args(lw, call, a)
    access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
    lw.emit_isa("adv_math_binary", f"{stub.__name__}_{suffix(d)}",
                ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *s0.code, *s1.code)), *tmp, count, reuse,
                 _need(stub, d, reuse)], call.node)


@rule(lang.axpy)
def _axpy(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.axpy)
    dst, src = a["dst"], a["src"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    d, sd = dst.type.dtype, src.type.dtype
    if (sd, d) != (dt.float16, dt.float32):
        d = _operands(lw, call, a, ("dst", "src"), lang.axpy)
        sd = d
    count = count_arg(lw, call, a, src)
    reuse = reuse_arg(lw, call, a)
    scalar = scalar_operand(lw, a["scalar"], sd, call.node)
    access.local_count(lw, hb.V, src, count, access.READ, call.node)
    access.local_count(lw, hb.V, dst, count, access.READ, call.node)
    tmp = scratch_args(lw, call, a)
    access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
    name = f"axpy_{suffix(sd)}" + ("_f32" if sd is not d else "")
    lw.emit_isa("adv_math_binary", name,
                ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)), f"np.float64({scalar})", *tmp,
                 count, reuse, _need(lang.axpy, sd, reuse)], call.node)


def _unary_rule(stub: Callable) -> Callable:
    return lambda lw, call: _unary(lw, call, stub)


def _binary_rule(stub: Callable) -> Callable:
    return lambda lw, call: _binary(lw, call, stub)


for _stub in lang.DTYPES:
    if _stub in (lang.power, lang.xor):
        rule(_stub)(_binary_rule(_stub))
    elif _stub is not lang.axpy:
        rule(_stub)(_unary_rule(_stub))
