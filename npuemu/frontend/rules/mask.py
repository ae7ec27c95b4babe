"""Rules for the mask register instructions (``set_mask_count``, ``set_vector_mask``, ...)."""
from __future__ import annotations

from ...language import dtype as dt
from ...language import mask as lang
from ...language.enums import MaskMode
from ..context import LoweringContext
from ..registry import Call, rule
from .common import plain_int


def _no_args(fn: str):
    def r(lw: LoweringContext, call: Call) -> None:
        call.bind_to(lw, getattr(lang, fn))
        lw.emit_isa("vmask", fn, ["_st"], call.node)
    return r


rule(lang.set_mask_count)(_no_args("set_mask_count"))
rule(lang.set_mask_norm)(_no_args("set_mask_norm"))
rule(lang.reset_mask)(_no_args("reset_mask"))


@rule(lang.set_vector_mask)
def _set_vector_mask(lw: LoweringContext, call: Call) -> None:
    """``set_vector_mask(length | mask_high, mask_low, *, dtype, mode)``, keyword-only as in pyasc."""
    extra = set(call.kwargs) - {"dtype", "mode"}
    if extra or not 1 <= len(call.args) <= 2:
        lw.fail("set_vector_mask takes (length) or (mask_high, mask_low) positionally, then dtype= and "
                "mode= by keyword", call.node)
    for key in ("dtype", "mode"):
        if key not in call.kwargs:
            lw.fail(f"set_vector_mask() missing required keyword argument '{key}'", call.node)
    d = lw.const_value(call.kwargs["dtype"], call.node, "dtype")
    if not isinstance(d, dt.DataType) or d is dt.void:
        lw.type_error(f"dtype must be an asc data type, got {lw.describe(call.kwargs['dtype'])}", call.node)
    mode = lw.const_value(call.kwargs["mode"], call.node, "mode")
    if mode not in (MaskMode.NORMAL, MaskMode.COUNTER):
        lw.type_error(f"mode must be an asc.MaskMode, got {mode!r}", call.node)
    if len(call.args) == 1:
        n = plain_int(lw.int_expr(call.args[0], call.node, "length"))
        lw.emit_isa("vmask", "set_vector_mask_len", ["_st", n, str(mode == MaskMode.COUNTER)], call.node)
        return
    high = plain_int(lw.u64_expr(call.args[0], call.node, "mask_high"))
    low = plain_int(lw.u64_expr(call.args[1], call.node, "mask_low"))
    lw.emit_isa("vmask", "set_vector_mask", ["_st", low, high], call.node)
