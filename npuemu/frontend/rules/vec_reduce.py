"""Rules for the reductions (``whole_reduce_*``, ``block_reduce_*``, ``pair_reduce_sum``, ``reduce_*``).

The helpers at the top turn call arguments (flags, enum constants, parameter
structs) into isa arguments; the compare/select and gather rules use them too.
The data types each reduction takes are :mod:`npuemu.language.vec_reduce`'s
``DTYPES``.
"""
from __future__ import annotations

import ast
from enum import IntEnum
from typing import Callable, Sequence

from ...isa import hb
from ...isa import vec_reduce as isa
from ...language import dtype as dt
from ...language import vec_reduce as lang
from ...language.enums import ReduceOrder
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import Value
from . import access
from .common import check_dtype, is_int_like, is_params, local, mask_operand, same_dtype

# --------------------------------------------------------------------------- shared argument helpers

def emit(lw: LoweringContext, module: str, fn: str, args: Sequence[str], node: ast.AST | None) -> None:
    """Emit an isa call with every scalar argument as a NumPy scalar.

    Numba compiles a callee once per distinct *literal* argument type, and a
    kernel variable assigned a constant (a static tensor's length) types as a
    literal; ``np.int64(...)`` around each scalar keeps one compilation per
    instruction.
    """
    def plain(a: str) -> str:
        if a in ("_lm", "_st") or a.startswith("np.") or a in ("True", "False"):
            return a
        return f"np.int64({a})"

    lw.emit_isa(module, fn, [plain(a) for a in args], node)


def flag(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> str:
    """A boolean argument as an isa int (0/1)."""
    if v.is_const:
        if not isinstance(v.const, (bool, int)):
            lw.type_error(f"{what} must be a bool, got {lw.describe(v)}", node)
        return "1" if v.const else "0"
    return f"int({lw.int_expr(v, node, what)} != 0)"


def enum_arg(lw: LoweringContext, v: Value, node: ast.AST | None, cls: type[IntEnum], what: str) -> int:
    """A compile-time member of ``cls`` (or its int value)."""
    c = lw.const_value(v, node, what)
    try:
        return int(cls(c))
    except (ValueError, TypeError):
        names = ", ".join(f"{cls.__name__}.{m.name}" for m in cls)
        lw.type_error(f"{what} must be one of {names}, got {c!r}", node)


def record_ints(lw: LoweringContext, v: Value, cls: type, node: ast.AST | None, what: str,
                names: Sequence[str]) -> list[str]:
    """Fields ``names`` of a parameter struct of class ``cls``, as isa ints."""
    if not is_params(v, cls):
        lw.type_error(f"{what} must be an asc.{cls.__name__}, got {lw.describe(v)}", node)
    return [lw.int_expr(v.item(n), node, f"{cls.__name__}.{n}") for n in names]


def nbytes(v: Value) -> str:
    """A LocalTensor's length in bytes."""
    return f"({v.code[1]}) * {v.type.dtype.sizeof()}"


def half_flag(d: dt.DataType) -> str:
    return "1" if d is dt.float16 else "0"


def operands(lw: LoweringContext, call: Call, a: dict[str, Value], names: Sequence[str], allowed: Sequence[dt.DataType]
             ) -> dt.DataType:
    """Check ``names`` are vector LocalTensors of one dtype in ``allowed``; return it."""
    for n in names:
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, call.name, call.node, *((n, a[n]) for n in names))
    check_dtype(lw, call.name, d, allowed, call.node)
    return d


# --------------------------------------------------------------------------- per-repeat reductions

def _level0(lw: LoweringContext, call: Call, a: dict[str, Value], repeat: str, strides: Sequence[str]) -> list[str]:
    """``is_set_mask``, the mask words, the repeat count and the strides, as isa arguments."""
    return [flag(lw, a["is_set_mask"], call.node, "is_set_mask"), *mask_operand(lw, a["mask"], call.node),
            *(lw.int_expr(a[n], call.node, n) for n in (repeat, *strides))]


_STRIDES = ("dst_rep_stride", "src_blk_stride", "src_rep_stride")


def _declare(lw: LoweringContext, call: Call, a: dict[str, Value], l0: list[str], d: dt.DataType, slot_bytes: int,
             slots_per_repeat: int) -> None:
    """Race-check a per-repeat reduction: its source lanes, and ``slots_per_repeat`` results of
    ``slot_bytes`` per repeat in the destination, ``dst_rep_stride`` apart (in result units)."""
    if not lw.declares_access:
        return
    head, (dst_rep, src_blk, src_rep) = l0[:5], l0[5:]
    access.level0(lw, hb.V, a["src"], head, src_blk, src_rep, access.READ, call.node)
    n = access.repeats_expr(lw, head, d.sizeof())
    unit = slots_per_repeat * slot_bytes
    access.local(lw, hb.V, a["dst"], f"((({n}) - 1) * max({dst_rep}, 0) * {unit} + {unit} if ({n}) > 0 else 0)",
                 access.WRITE, call.node)


def _whole(lw: LoweringContext, call: Call, stub: Callable, op: int) -> None:
    a = call.bind_to(lw, stub)
    d = operands(lw, call, a, ("dst", "src"), lang.DTYPES[stub])
    order = enum_arg(lw, a["order"], call.node, ReduceOrder, "order") if "order" in a else isa.ORDER_VALUE_INDEX
    l0 = _level0(lw, call, a, "repeat_time", _STRIDES)
    es = d.sizeof()
    slot = es if op == isa.OP_SUM or order == isa.ORDER_ONLY_VALUE else 4 if order == isa.ORDER_ONLY_INDEX \
        else 2 * es
    _declare(lw, call, a, l0, d, slot, 1)
    emit(lw, "vec_reduce", "whole_reduce", ["_lm", "_st", str(op), half_flag(d), str(order), *a["dst"].code,
                                            *a["src"].code, *l0], call.node)


rule(lang.whole_reduce_sum)(lambda lw, call: _whole(lw, call, lang.whole_reduce_sum, isa.OP_SUM))
rule(lang.whole_reduce_max)(lambda lw, call: _whole(lw, call, lang.whole_reduce_max, isa.OP_MAX))
rule(lang.whole_reduce_min)(lambda lw, call: _whole(lw, call, lang.whole_reduce_min, isa.OP_MIN))


@rule(lang.repeat_reduce_sum)
def _repeat_reduce_sum(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.repeat_reduce_sum)
    d = operands(lw, call, a, ("dst", "src"), lang.DTYPES[lang.repeat_reduce_sum])
    if not is_int_like(a["mask"]):
        lw.type_error("repeat_reduce_sum takes a continuous mask (an int); use whole_reduce_sum for bit masks",
                      call.node)
    lw.int_expr(a["dst_blk_stride"], call.node, "dst_blk_stride")   # accepted and unused, as on the hardware
    l0 = _level0(lw, call, a, "repeat_time", _STRIDES)
    _declare(lw, call, a, l0, d, d.sizeof(), 1)
    emit(lw, "vec_reduce", "whole_reduce", ["_lm", "_st", str(isa.OP_SUM), half_flag(d), str(isa.ORDER_VALUE_INDEX),
                                            *a["dst"].code, *a["src"].code, *l0], call.node)


def _block(lw: LoweringContext, call: Call, stub: Callable, op: int) -> None:
    a = call.bind_to(lw, stub)
    d = operands(lw, call, a, ("dst", "src"), lang.DTYPES[stub])
    l0 = _level0(lw, call, a, "repeat", _STRIDES)
    _declare(lw, call, a, l0, d, d.sizeof(), 8)
    emit(lw, "vec_reduce", "block_reduce", ["_lm", "_st", str(op), half_flag(d), *a["dst"].code, *a["src"].code,
                                            *l0], call.node)


rule(lang.block_reduce_sum)(lambda lw, call: _block(lw, call, lang.block_reduce_sum, isa.OP_SUM))
rule(lang.block_reduce_max)(lambda lw, call: _block(lw, call, lang.block_reduce_max, isa.OP_MAX))
rule(lang.block_reduce_min)(lambda lw, call: _block(lw, call, lang.block_reduce_min, isa.OP_MIN))


@rule(lang.pair_reduce_sum)
def _pair_reduce_sum(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.pair_reduce_sum)
    d = operands(lw, call, a, ("dst", "src"), lang.DTYPES[lang.pair_reduce_sum])
    l0 = _level0(lw, call, a, "repeat_time", _STRIDES)
    _declare(lw, call, a, l0, d, d.sizeof(), 128 // d.sizeof())
    emit(lw, "vec_reduce", "pair_reduce_sum", ["_lm", "_st", half_flag(d), *a["dst"].code, *a["src"].code, *l0],
         call.node)


# --------------------------------------------------------------------------- reduce_sum / reduce_max / reduce_min

def _reduce(lw: LoweringContext, call: Call, stub: Callable, op: int) -> None:
    a = call.bind_to(lw, stub)
    d = operands(lw, call, a, ("dst", "src", "shared_tmp_buffer"), lang.DTYPES[stub])
    cal = flag(lw, a["cal_index"], call.node, "cal_index") if "cal_index" in a else "0"
    args = [str(op), half_flag(d), cal, *a["dst"].code, *a["src"].code, *a["shared_tmp_buffer"].code]
    if "count" not in a:
        repeat = lw.int_expr(a["repeat_time"], call.node, "repeat_time")
        src_rep = lw.int_expr(a["src_rep_stride"], call.node, "src_rep_stride")
        # the routine programs its own normal-mode mask: the farthest lane is at most a repeat's end
        access.local(lw, hb.V, a["src"], f"((({repeat}) - 1) * max({src_rep}, 0) * 32 + 256 if ({repeat}) > 0 else 0)",
                     access.READ_SPAN, call.node)
        _reduce_results(lw, call, a, d, op, cal)
        emit(lw, "vec_reduce", "reduce_mask", [
            "_lm", *args, *mask_operand(lw, a["mask"], call.node), repeat, src_rep], call.node)
    else:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, a["src"], count, access.READ, call.node)
        _reduce_results(lw, call, a, d, op, cal)
        emit(lw, "vec_reduce", "reduce_count", ["_lm", "_st", *args, count], call.node)


def _reduce_results(lw: LoweringContext, call: Call, a: dict[str, Value], d: dt.DataType, op: int, cal: str) -> None:
    """reduce_*: the value (and index) in dst; max/min also work in shared_tmp_buffer (A2 sums do not)."""
    access.local(lw, hb.V, a["dst"], f"({d.sizeof()} * (2 if {cal} else 1))" if op != isa.OP_SUM else str(d.sizeof()),
                 access.WRITE, call.node)
    if op != isa.OP_SUM:
        access.local_all(lw, hb.V, a["shared_tmp_buffer"], access.WRITE, call.node)


rule(lang.reduce_sum)(lambda lw, call: _reduce(lw, call, lang.reduce_sum, isa.OP_SUM))
rule(lang.reduce_max)(lambda lw, call: _reduce(lw, call, lang.reduce_max, isa.OP_MAX))
rule(lang.reduce_min)(lambda lw, call: _reduce(lw, call, lang.reduce_min, isa.OP_MIN))

