"""Rules for ``copy``, ``gather_mask``, ``get_gather_mask_remain_count`` and ``scatter``.

The data types each takes are :mod:`npuemu.language.vec_rearrange`'s
``DTYPES``; semantics in :mod:`npuemu.isa.vec_rearrange`.  ``scatter`` is
refused: Atlas A2/A3 does not have it.
"""
from __future__ import annotations

import ast

from ...isa import hb
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_rearrange as lang
from ...language.enums import GatherMaskMode
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import LocalTensorT, Value, scalar
from . import access
from .common import const_bool, is_params, mask_operand, plain_int, repeat_params
from .vec_reduce import enum_arg, flag, operands


def _width(d: dt.DataType) -> str:
    return f"b{8 * d.sizeof()}"


@rule(lang.copy)
def _copy(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.copy)
    d = operands(lw, call, a, ("dst", "src"), lang.DTYPES[lang.copy])
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    is_bits, lo, hi = mask_operand(lw, a["mask"], call.node)
    repeat = lw.int_expr(a["repeat_time"], call.node, "repeat_time")
    dblk, sblk, drep, srep = repeat_params(lw, a["repeat_params"], P.CopyRepeatParams, call.node)
    l0 = [str(is_set_mask), is_bits, *(plain_int(c) for c in (lo, hi, repeat))]
    access.level0(lw, hb.V, a["src"], l0, sblk, srep, access.READ, call.node)
    access.level0(lw, hb.V, a["dst"], l0, dblk, drep, access.WRITE, call.node)
    tensors = [plain_int(c) for c in (*a["dst"].code, *a["src"].code)]
    lw.emit_isa("vec_rearrange", f"copy_{_width(d)}",
                ["_st", "_lm", *tensors, *l0, *(plain_int(c) for c in (dblk, sblk, drep, srep))], call.node)


def _params(lw: LoweringContext, v: Value, node: ast.AST | None) -> list[str]:
    """GatherMaskParams' fields (built in the kernel or a host-side constant) as isa ints."""
    cls = P.GatherMaskParams
    if v.is_const and isinstance(v.const, cls):
        return [str(int(getattr(v.const, n))) for n in cls.field_names()]
    if not is_params(v, cls):
        lw.type_error(f"params must be an asc.GatherMaskParams, got {lw.describe(v)}", node)
    return [lw.int_expr(v.item(n), node, f"GatherMaskParams.{n}") for n in cls.field_names()]


@rule(lang.gather_mask)
def _gather_mask(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.gather_mask)
    d = operands(lw, call, a, ("dst", "src0"), lang.DTYPES[lang.gather_mask])
    enum_arg(lw, a["gather_mask_mode"], call.node, GatherMaskMode, "gather_mask_mode")
    pattern = a["src1_pattern"]
    word = dt.uint16 if d.sizeof() == 2 else dt.uint32
    if isinstance(pattern.type, LocalTensorT):
        operands(lw, call, a, ("src1_pattern",), (word,))
        pat = [*pattern.code, str(word.sizeof()), "1", "0"]
    else:
        if pattern.is_const and (not isinstance(pattern.const, int) or pattern.const not in lang.BUILTIN_PATTERNS):
            lw.type_error(f"gather_mask src1_pattern must be a built-in pattern 1..7 or a {word.name} LocalTensor "
                          f"(the pattern type of {d.name} data), got {lw.describe(pattern)}", call.node)
        pat = ["0", "0", "0", "0", lw.int_expr(pattern, call.node, "src1_pattern")]
    reduce = flag(lw, a["reduce_mode"], call.node, "reduce_mode")
    mask = lw.int_expr(a["mask"], call.node, "mask")
    blk, repeat, rep0, rep1 = _params(lw, a["params"], call.node)
    if lw.full_check:
        access.local_all(lw, hb.V, a["src0"], access.READ_SPAN, call.node)
        if isinstance(pattern.type, LocalTensorT):
            access.local_all(lw, hb.V, pattern, access.READ_SPAN, call.node)
    args = [plain_int(c) for c in (*a["dst"].code, *a["src0"].code, *pat, reduce, mask, blk, repeat, rep0, rep1)]
    kept = lw.fresh_value(scalar("int", lw.call_isa("vec_rearrange", f"gather_mask_{_width(d)}",
                                                    ["_st", "_lm", *args], call.node)), "rsvd")
    # what the instruction wrote is known once it ran: the kept elements from dst[0]
    access.local_count(lw, hb.V, a["dst"], kept.code[0], access.WRITE, call.node)
    return kept


@rule(lang.get_gather_mask_remain_count)
def _get_gather_mask_remain_count(lw: LoweringContext, call: Call) -> Value:
    call.bind(lw, "")
    return lw.fresh_value(scalar("int", f"{lw.isa('vec_rearrange', 'remain')}(_st)"), "remain")


@rule(lang.scatter)
def _scatter(lw: LoweringContext, call: Call) -> None:
    lw.type_error(f"scatter is not available on {lw.platform.name} (Atlas A2/A3): the Ascend C Scatter page "
                  f"lists it for the Atlas 200I/500 A2 and inference (AI Core) series only; to place elements by "
                  f"index on A2/A3 write them with set_value, or compute the gathering offsets and use gather",
                  call.node)
