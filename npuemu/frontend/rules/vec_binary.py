"""Rules for the binary vector instructions (``add``, ``sub``, ...)."""
from __future__ import annotations

from ...language import dtype as dt
from ...language import vec_binary as lang
from ..registry import Call, rule
from .common import check_dtype, is_int_like, local, same_dtype, suffix

_F = (dt.float16, dt.float32)
_ARITH = (dt.float16, dt.float32, dt.int16, dt.int32)

OPS = {
    lang.add: ("add", _ARITH),
}


def _binary(lw, call: Call) -> None:
    name, allowed = OPS[call.extra["op"]]
    a = call.bind(lw, "dst, src0, src1, count=?, mask=?, repeat_times=?, repeat_params=?, is_set_mask=True")
    dst, s0, s1 = a["dst"], a["src0"], a["src1"]
    for what in ("dst", "src0", "src1"):
        local(lw, a[what], call.node, what)
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src0", s0), ("src1", s1))
    check_dtype(lw, name, d, allowed, call.node)
    if "count" in a and is_int_like(a["count"]):
        count = lw.int_expr(a["count"], call.node, "count")
        lw.emit_isa("vec_binary", f"{name}_{suffix(d)}", [
            "_lm", *dst.code, *s0.code, *s1.code, count], call.node)
        return
    lw.fail(f"{name}: this call form is not supported yet", call.node)


for _op in OPS:
    rule(_op)(lambda lw, call, _op=_op: _binary(lw, _with_op(call, _op)))


def _with_op(call: Call, op) -> Call:
    call.extra["op"] = op
    return call
