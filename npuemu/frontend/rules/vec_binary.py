"""Rules for the binary vector instructions (``add``, ``sub``, ...).

Every instruction takes the count form ``op(dst, src0, src1, count)`` and the
level-0 forms ``op(dst, src0, src1, mask, repeat_times, repeat_params,
is_set_mask=True)`` with an int (continuous) or list (bit) mask, as declared
by the stubs in :mod:`npuemu.language.vec_binary`; the data types each takes
are that module's ``DTYPES``.
"""
from __future__ import annotations

from typing import Callable

from ...isa import hb
from ...language import params as P
from ...language import vec_binary as lang
from ..context import LoweringContext
from ..registry import Call, rule
from . import access
from .common import check_dtype, const_bool, level0_args, local, plain_int, same_dtype, suffix


def _binary(lw: LoweringContext, call: Call, stub: Callable) -> None:
    name, a = stub.__name__, call.bind_to(lw, stub)
    dst, s0, s1 = a["dst"], a["src0"], a["src1"]
    for what in ("dst", "src0", "src1"):
        local(lw, a[what], call.node, what)
    d = same_dtype(lw, name, call.node, ("dst", dst), ("src0", s0), ("src1", s1))
    check_dtype(lw, name, d, lang.DTYPES[stub], call.node)
    const_bool(lw, a["is_set_mask"], call.node, "is_set_mask")
    operands = ["_st", "_lm", *(plain_int(c) for c in (*dst.code, *s0.code, *s1.code))]
    if "count" in a:
        # the count form sets the mask itself (counter mode); pyasc accepts is_set_mask here and ignores it
        count = plain_int(lw.int_expr(a["count"], call.node, "count"))
        access.local_count(lw, hb.V, s0, count, access.READ, call.node)
        access.local_count(lw, hb.V, s1, count, access.READ, call.node)
        access.local_count(lw, hb.V, dst, count, access.WRITE, call.node)
        lw.emit_isa("vec_binary", f"{name}_{suffix(d)}", [*operands, count], call.node)
        return
    l0 = level0_args(lw, a, P.BinaryRepeatParams, call.node)
    head, (dblk, s0blk, s1blk, drep, s0rep, s1rep) = l0[:5], l0[5:]
    access.level0(lw, hb.V, s0, head, s0blk, s0rep, access.READ, call.node)
    access.level0(lw, hb.V, s1, head, s1blk, s1rep, access.READ, call.node)
    access.level0(lw, hb.V, dst, head, dblk, drep, access.WRITE, call.node)
    lw.emit_isa("vec_binary", f"{name}_l0_{suffix(d)}", [*operands, *l0], call.node)


def _rule_for(stub: Callable) -> Callable:
    return lambda lw, call: _binary(lw, call, stub)


for _stub in lang.DTYPES:       # the isa instruction has the stub's name
    rule(_stub)(_rule_for(_stub))
