"""Rules for ``gather`` and ``gatherb``; the data types they take are :mod:`npuemu.language.vec_gather`'s ``DTYPES``."""
from __future__ import annotations

from ...isa import hb
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_gather as lang
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .common import check_dtype, local, mask_operand
from .vec_reduce import emit, operands, record_ints



def _offsets(lw: LoweringContext, call: Call, name: str, v) -> None:
    local(lw, v, call.node, name)
    check_dtype(lw, f"{call.name} {name}", v.type.dtype, (dt.uint32,), call.node)


@rule(lang.gather)
def _gather(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.gather)
    d = operands(lw, call, a, ("dst", "src"), lang.DTYPES[lang.gather])
    _offsets(lw, call, "src_offset", a["src_offset"])
    head = ["_lm", "_st", str(d.sizeof()), *a["dst"].code, *a["src"].code, *a["src_offset"].code,
            lw.int_expr(a["src_base"], call.node, "src_base")]
    # which source elements are read depends on the offsets: the whole source is declared
    access.local_all(lw, hb.V, a["src"], access.READ_SPAN, call.node)
    if "count" not in a:
        mask = mask_operand(lw, a["mask"], call.node)
        repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
        dst_rep = lw.int_expr(a["dst_rep_stride"], call.node, "dst_rep_stride")
        l0 = ["True", *mask, repeat]
        lanes = 256 // d.sizeof()
        access.local(lw, hb.V, a["src_offset"], f"{access.repeats_expr(lw, l0, d.sizeof())} * {lanes * 4}",
                     access.READ_SPAN, call.node)
        access.level0(lw, hb.V, a["dst"], l0, "1", dst_rep, access.WRITE, call.node)
        emit(lw, "vec_gather", "gather", [*head, "0", "0", "1", *mask, repeat, dst_rep], call.node)
    else:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, a["src_offset"], count, access.READ, call.node)
        access.local_count(lw, hb.V, a["dst"], count, access.WRITE, call.node)
        emit(lw, "vec_gather", "gather", [*head, "1", count, "1", "False", "0", "0", "0", "8"], call.node)


@rule(lang.gatherb)
def _gatherb(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.gatherb)
    d = operands(lw, call, a, ("dst", "src0"), lang.DTYPES[lang.gatherb])
    _offsets(lw, call, "offset", a["offset"])
    repeat = lw.int_expr(a["repeat_times"], call.node, "repeat_times")
    blk, rep = record_ints(lw, a["repeat_params"], P.GatherRepeatParams, call.node, "repeat_params",
                           ("dst_blk_stride", "dst_rep_stride"))
    reps = f"max(0, min({repeat}, 255))"
    access.local_count(lw, hb.V, a["offset"], f"8 * {reps}", access.READ, call.node)
    access.local_all(lw, hb.V, a["src0"], access.READ_SPAN, call.node)
    access.local(lw, hb.V, a["dst"], f"(({reps} - 1) * max({rep}, 0) + 7 * max({blk}, 0) + 1) * 32 if {reps} > 0 "
                                     f"else 0", access.WRITE, call.node)
    emit(lw, "vec_gather", "gatherb", [
        "_lm", str(d.sizeof()), *a["dst"].code, *a["src0"].code, *a["offset"].code, repeat, blk, rep], call.node)
