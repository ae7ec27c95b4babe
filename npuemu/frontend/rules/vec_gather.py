"""Rules for ``gather`` and ``gatherb``."""
from __future__ import annotations

from ...language import dtype as dt
from ...language import params as P
from ...language import vec_gather as lang
from ..registry import Call, rule
from .common import check_dtype, local, mask_operand
from .vec_reduce import emit, has_any, operands, record_ints

GATHER_TYPES = (dt.float16, dt.bfloat16, dt.int16, dt.uint16, dt.float32, dt.int32, dt.uint32)
GATHERB_TYPES = (dt.uint16, dt.uint32)


def _offsets(lw, call: Call, name: str, v) -> None:
    local(lw, v, call.node, name)
    check_dtype(lw, f"{call.name} {name}", v.type.dtype, (dt.uint32,), call.node)


@rule(lang.gather)
def _gather(lw, call: Call) -> None:
    level0 = len(call.args) >= 7 or has_any(call, "mask", "repeat_times", "dst_rep_stride")
    if level0:
        a = call.bind(lw, "dst, src, src_offset, src_base, mask, repeat_times, dst_rep_stride")
    else:
        a = call.bind(lw, "dst, src, src_offset, src_base, count")
    d = operands(lw, call, a, ("dst", "src"), GATHER_TYPES)
    _offsets(lw, call, "src_offset", a["src_offset"])
    head = ["_lm", "_st", str(d.sizeof()), *a["dst"].code, *a["src"].code, *a["src_offset"].code,
            lw.int_expr(a["src_base"], call.node, "src_base")]
    if level0:
        emit(lw, "vec_gather", "gather", [
            *head, "0", "0", "1", *mask_operand(lw, a["mask"], call.node),
            lw.int_expr(a["repeat_times"], call.node, "repeat_times"),
            lw.int_expr(a["dst_rep_stride"], call.node, "dst_rep_stride")], call.node)
    else:
        emit(lw, "vec_gather", "gather", [
            *head, "1", lw.int_expr(a["count"], call.node, "count"), "1", "False", "0", "0", "0", "8"], call.node)


@rule(lang.gatherb)
def _gatherb(lw, call: Call) -> None:
    a = call.bind(lw, "dst, src0, offset, repeat_times, repeat_params")
    d = operands(lw, call, a, ("dst", "src0"), GATHERB_TYPES)
    _offsets(lw, call, "offset", a["offset"])
    emit(lw, "vec_gather", "gatherb", [
        "_lm", str(d.sizeof()), *a["dst"].code, *a["src0"].code, *a["offset"].code,
        lw.int_expr(a["repeat_times"], call.node, "repeat_times"),
        *record_ints(lw, a["repeat_params"], P.GatherRepeatParams, call.node, "repeat_params",
                     ("dst_blk_stride", "dst_rep_stride"))], call.node)
