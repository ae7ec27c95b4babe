"""Rule for ``cast``: the conversion table of Atlas A2, checked at compile time.

A (source, destination) pair the hardware has no instruction for, or a
rounding mode the pair's instruction does not take (the table ``MODES`` of
:mod:`npuemu.language.vec_cast`), is a ``KernelTypeError`` naming both;
Ascend C's CPU debug library reports the same calls as errors ("illegal
input cast mode", "Failed to check dtype in Cast").
"""
from __future__ import annotations

from ...isa import hb
from ...isa.vec_cast import PAIRS
from ...language import dtype as dt
from ...language import params as P
from ...language import vec_cast as lang
from ...language.enums import RoundMode
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .common import const_bool, local, mask_operand, plain_int, repeat_params, suffix

MODES = lang.MODES      # (src, dst) -> the RoundModes the instruction accepts

# conversions the hardware has but npuemu does not emulate, and why
NOT_EMULATED = {
    (dt.int32, dt.float16): "it is a dequantisation scaled by set_deq_scale, which cast does not emulate yet "
                            "(add_deq_relu and cast_deq do)",
}


def _names(modes) -> str:
    return ", ".join(m.name for m in sorted(modes))


def _round_mode(lw: LoweringContext, v, node) -> RoundMode:
    m = lw.const_value(v, node, "round_mode")
    try:
        return RoundMode(m)
    except ValueError:
        lw.type_error(f"round_mode must be an asc.RoundMode, got {lw.describe(v)}", node)


def _check_pair(lw: LoweringContext, src: dt.DataType, dst: dt.DataType, mode: RoundMode, node) -> None:
    pair = f"{src.name} -> {dst.name}"
    if (src, dst) in NOT_EMULATED:
        lw.type_error(f"cast {pair} ({mode.name}) is not emulated: {NOT_EMULATED[(src, dst)]}", node)
    allowed = MODES.get((src, dst))
    if allowed is None:
        targets = [d.name for (s, d) in MODES if s is src]
        hint = f"from {src.name} it converts to {', '.join(targets)}" if targets else \
            f"it has no conversion from {src.name}"
        lw.type_error(f"cast {pair} ({mode.name}): this platform has no such conversion; {hint}", node)
    if mode not in allowed:
        lw.type_error(f"cast {pair} does not support {mode.name} (supported: {_names(allowed)})", node)


@rule(lang.cast)
def _cast(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.cast)
    dst, src = a["dst"], a["src"]
    d = local(lw, dst, call.node, "dst").dtype
    s = local(lw, src, call.node, "src").dtype
    mode = _round_mode(lw, a["round_mode"], call.node)
    _check_pair(lw, s, d, mode, call.node)
    code = PAIRS[(suffix(s), suffix(d))]
    operands = ["_st", "_lm", *map(plain_int, dst.code), *map(plain_int, src.code), str(code), str(int(mode))]
    if "count" in a:
        count = lw.int_expr(a["count"], call.node, "count")
        access.local_count(lw, hb.V, src, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_cast", "cast", [*operands, count], call.node)
        return
    is_set_mask = const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    head = [str(is_set_mask), *mask_operand(lw, a["mask"], call.node),
            lw.int_expr(a["repeat_times"], call.node, "repeat_times")]
    dblk, sblk, drep, srep = repeat_params(lw, a["repeat_params"], P.UnaryRepeatParams, call.node)
    wide = max(s.sizeof(), d.sizeof())        # lanes and mask follow the wider type
    access.level0(lw, hb.V, src, head, sblk, srep, access.READ, call.node, wide)
    access.level0(lw, hb.V, dst, head, dblk, drep, access.WRITE, call.node, wide)
    lw.emit_isa("vec_cast", "cast_l0", [*operands, *head, dblk, sblk, drep, srep], call.node)
