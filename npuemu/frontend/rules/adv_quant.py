"""Rules for ``asc.adv.quant`` (with ``QuantConfig``) and the sort helpers ``asc.adv.concat`` / ``extract``."""
from __future__ import annotations

from ...isa import hb
from ...language import adv_quant, adv_sort
from ...language import dtype as dt
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .adv_math import count_arg, is_none, scratch_args
from .common import check_dtype, const_bool, is_params, local, plain_int, same_dtype, suffix
from .params import register_param_struct
from .vec_scalar import scalar_operand

register_param_struct(adv_quant.QuantConfig)


@rule(adv_quant.quant)
def _quant(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, adv_quant.quant)
    dst, src = a["dst"], a["src"]
    local(lw, dst, call.node, "dst")
    local(lw, src, call.node, "src")
    if dst.type.dtype is not dt.int8:
        lw.type_error(f"asc.adv.quant: dst must be int8, got {dst.type.dtype.name}", call.node)
    check_dtype(lw, "asc.adv.quant", src.type.dtype, adv_quant.DTYPES[adv_quant.quant], call.node)
    const_bool(lw, a["reuse_source"], call.node, "reuse_source")
    cfg = a.get("config")
    if not is_none(cfg) and not (cfg.is_const and isinstance(cfg.const, adv_quant.QuantConfig)) \
            and not is_params(cfg, adv_quant.QuantConfig):
        lw.type_error(f"asc.adv.quant: config must be an asc.adv.QuantConfig, got {lw.describe(cfg)}", call.node)
    count = count_arg(lw, call, a, src)
    scale = scalar_operand(lw, a["scale"], dt.float32, call.node)
    offset = scalar_operand(lw, a["offset"], dt.float32, call.node)
    access.local_count(lw, hb.V, src, count, access.READ, call.node)
    tmp = scratch_args(lw, call, a)
    access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
    lw.emit_isa("adv_quant", f"quant_{suffix(src.type.dtype)}",
                ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *src.code)), f"np.float64({scale})",
                 f"np.float64({offset})", *tmp, count, plain_int(str(adv_quant.QUANT_MIN_TMP))], call.node)


@rule(adv_sort.concat)
def _concat(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, adv_sort.concat)
    for n in ("dst", "src", "tmp"):
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, "asc.adv.concat", call.node, ("dst", a["dst"]), ("src", a["src"]), ("tmp", a["tmp"]))
    check_dtype(lw, "asc.adv.concat", d, adv_sort.DTYPES[adv_sort.concat], call.node)
    repeat = plain_int(lw.int_expr(a["repeat_time"], call.node, "repeat_time"))
    access.local_count(lw, hb.V, a["src"], f"16 * max({repeat}, 0)", access.READ, call.node)
    access.local_count(lw, hb.V, a["dst"], f"16 * max({repeat}, 0)", access.WRITE, call.node)
    lw.emit_isa("adv_sort", "concat", ["_lm", *(plain_int(c) for n in ("dst", "src") for c in a[n].code),
                                       plain_int(str(d.sizeof())), repeat], call.node)


@rule(adv_sort.extract)
def _extract(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, adv_sort.extract)
    for n in ("dst_value", "dst_index", "src"):
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, "asc.adv.extract", call.node, ("dst_value", a["dst_value"]), ("src", a["src"]))
    check_dtype(lw, "asc.adv.extract", d, adv_sort.DTYPES[adv_sort.extract], call.node)
    if a["dst_index"].type.dtype is not dt.uint32:
        lw.type_error(f"asc.adv.extract: dst_index must be uint32, got {a['dst_index'].type.dtype.name}", call.node)
    repeat = plain_int(lw.int_expr(a["repeat_time"], call.node, "repeat_time"))
    access.local(lw, hb.V, a["src"], f"256 * max({repeat}, 0)", access.READ, call.node)
    access.local_count(lw, hb.V, a["dst_value"], f"32 * max({repeat}, 0)", access.WRITE, call.node)
    access.local_count(lw, hb.V, a["dst_index"], f"32 * max({repeat}, 0)", access.WRITE, call.node)
    lw.emit_isa("adv_sort", "extract", ["_lm", *(plain_int(c) for n in ("dst_value", "dst_index", "src")
                                                 for c in a[n].code), plain_int(str(d.sizeof())), repeat], call.node)
