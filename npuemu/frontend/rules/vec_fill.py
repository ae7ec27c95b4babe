"""Rules for ``duplicate`` and ``brcb``; the data types they take are ``DTYPES`` of :mod:`npuemu.language.vec_fill`."""
from __future__ import annotations

from ...isa import hb
from ...isa import vec_fill as isa
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_fill as lang
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import is_number
from . import access
from .common import (check_dtype, const_bool, is_int_like, is_params, local, mask_operand, plain_int,
                     same_dtype)

_KIND = {dt.float32: isa.KIND_F32, dt.float16: isa.KIND_F16, dt.bfloat16: isa.KIND_BF16}


def _scalar(lw: LoweringContext, d: dt.DataType, v, node) -> list[str]:
    """The scalar as the isa's ``kind, fvalue, ivalue`` arguments."""
    if d.is_float:
        if not is_number(v):
            lw.type_error(f"duplicate: the scalar must be a number, got {lw.describe(v)}", node)
        return [str(_KIND[d]), f"np.float32({lw.materialize(v, node, 'float')})", "0"]
    if not is_int_like(v):
        lw.type_error(f"duplicate: the scalar for a {d.name} tensor must be an integer, got {lw.describe(v)}",
                      node)
    return [str(isa.KIND_INT), "np.float32(0.0)", plain_int(lw.int_expr(v, node, "scalar"))]


@rule(lang.duplicate)
def _duplicate(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.duplicate)    # pyasc's count form also takes (and ignores) is_set_mask
    dst = a["dst"]
    d = local(lw, dst, call.node, "dst").dtype
    check_dtype(lw, "duplicate", d, lang.DTYPES[lang.duplicate], call.node)
    operands = ["_st", "_lm", *map(plain_int, dst.code), str(d.sizeof()), *_scalar(lw, d, a["scalar"], call.node)]
    if "count" in a:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_fill", "duplicate", [*operands, count], call.node)
        return
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    head = [str(is_set_mask), *mask_operand(lw, a["mask"], call.node),
            lw.int_expr(a["repeat_times"], call.node, "repeat_times")]
    blk = lw.int_expr(a["dst_block_stride"], call.node, "dst_block_stride")
    rep = lw.int_expr(a["dst_repeat_stride"], call.node, "dst_repeat_stride")
    access.level0(lw, hb.V, dst, head, blk, rep, access.WRITE, call.node)
    lw.emit_isa("vec_fill", "duplicate_l0", [*operands, *head, blk, rep], call.node)


@rule(lang.brcb)
def _brcb(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.brcb)
    dst, src, rp = a["dst"], a["src0"], a["repeat_params"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    d = same_dtype(lw, "brcb", call.node, ("dst", dst), ("src", src))
    check_dtype(lw, "brcb", d, lang.DTYPES[lang.brcb], call.node)
    if not is_params(rp, P.BrcbRepeatParams):
        lw.type_error(f"brcb: repeat_params must be an asc.BrcbRepeatParams, got {lw.describe(rp)}", call.node)
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    blk = lw.int_expr(rp.item("dst_blk_stride"), call.node, "repeat_params.dst_blk_stride")
    rep = lw.int_expr(rp.item("dst_rep_stride"), call.node, "repeat_params.dst_rep_stride")
    # repeat i reads src[8i : 8i + 8] and writes 8 blocks; the farthest is block (i * rep + 7 * blk)
    reps = f"max(0, min({repeat}, 255))"
    access.local_count(lw, hb.V, src, f"8 * {reps}", access.READ, call.node)
    access.local(lw, hb.V, dst, f"(({reps} - 1) * max({rep}, 0) + 7 * max({blk}, 0) + 1) * 32 if {reps} > 0 else 0",
                 access.WRITE, call.node)
    lw.emit_isa("vec_fill", "brcb", [
        "_st", "_lm", *map(plain_int, dst.code), *map(plain_int, src.code), str(d.sizeof()), repeat, blk, rep],
        call.node)
