"""Rules for the LocalTensor methods that change or describe the tensor rather than its data:
``set_size``, ``set_buffer_len``, ``set_addr_with_offset``, ``set_user_tag``/``get_user_tag`` and ``print``.

The mutating ones rebind the receiver variable (a LocalTensor is an address
and an element count, see :mod:`.tensors`); the size setters trust the kernel,
as Ascend C does: later instructions check their accesses against the new
size, so a size past the buffer shows up as the access that overruns it.
"""
from __future__ import annotations

from ...language import core as lang
from ...language.enums import POSITION_MEMORY
from ..context import LoweringContext
from ..registry import Call, method
from ..types import LocalTensorT, Value, const, scalar
from .common import local
from .debug import emit_dump
from .tensors import update_receiver


def _count(lw: LoweringContext, v: Value, call: Call, what: str) -> str:
    n = lw.int_expr(v, call.node, what)
    if v.is_const and int(v.const) < 0:
        lw.type_error(f"{call.name}: {what} must be non-negative, got {v.const}", call.node)
    return n


@method(LocalTensorT, "set_size")
def _set_size(lw: LoweringContext, call: Call) -> None:
    """``t.set_size(n)``: the tensor now holds ``n`` elements."""
    t = call.recv
    n = _count(lw, call.bind_to(lw, lang.LocalTensor.set_size)["size"], call, "size")
    update_receiver(lw, call, Value(t.type, code=(t.code[0], n)))


@method(LocalTensorT, "set_buffer_len")
def _set_buffer_len(lw: LoweringContext, call: Call) -> None:
    """``t.set_buffer_len(n)``: the tensor's buffer is ``n`` bytes long (whole elements of its dtype)."""
    t = call.recv
    n = _count(lw, call.bind_to(lw, lang.LocalTensor.set_buffer_len)["data_len"], call, "data_len")
    update_receiver(lw, call, Value(t.type, code=(t.code[0], f"(({n}) // {t.type.dtype.sizeof()})")))


@method(LocalTensorT, "set_addr_with_offset")
def _set_addr_with_offset(lw: LoweringContext, call: Call) -> None:
    """``t.set_addr_with_offset(src, k)``: ``t`` starts ``k`` elements (of ``src``'s dtype) into ``src``
    and spans the rest of it, in ``t``'s own dtype and position."""
    t = call.recv
    a = call.bind_to(lw, lang.LocalTensor.set_addr_with_offset)
    src = a["src"]
    st = local(lw, src, call.node, "src", positions=None)
    if POSITION_MEMORY.get(st.pos) != POSITION_MEMORY.get(t.type.pos):
        lw.type_error(f"set_addr_with_offset: src is in {st.pos.name}, a different memory from this tensor's "
                      f"{t.type.pos.name}", call.node)
    k = lw.int_expr(a["offset"], call.node, "offset")
    addr, n = lw.new_var("laddr"), lw.new_var("llen")
    lw.emit(f"{addr}, {n} = " + lw.call_isa("tensor", "sub_tensor",
                                            [src.code[0], src.code[1], str(st.dtype.sizeof()), k], call.node))
    update_receiver(lw, call, Value(t.type, code=(addr, f"({n} * {st.dtype.sizeof()} // {t.type.dtype.sizeof()})")))


@method(LocalTensorT, "set_user_tag")
def _set_user_tag(lw: LoweringContext, call: Call) -> None:
    tag = lw.int_expr(call.bind_to(lw, lang.LocalTensor.set_user_tag)["tag"], call.node, "tag")
    lw.emit_isa("user_tag", "set_user_tag", ["_st", call.recv.code[0], tag], call.node)


@method(LocalTensorT, "get_user_tag")
def _get_user_tag(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.LocalTensor.get_user_tag)
    expr = lw.call_isa("user_tag", "get_user_tag", ["_st", call.recv.code[0]], call.node)
    return lw.fresh_value(scalar("int", expr), "tag")


@method(LocalTensorT, "print")
def _print(lw: LoweringContext, call: Call) -> None:
    """``t.print(n)`` (``LocalTensor::Print``): the first ``n`` elements, printed as ``dump_tensor`` does."""
    n = call.bind_to(lw, lang.LocalTensor.print)["data_len"]
    emit_dump(lw, call, call.recv, const(0), n, None)
