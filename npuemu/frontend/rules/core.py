"""Rules for tensors, addresses, TPipe/TQue/TBuf, parameter structs and Python builtins."""
from __future__ import annotations

import builtins
from typing import Any

from ... import errors
from ...errors import UnsupportedSyntaxError
from ...isa import state as S
from ...language import core as lang
from ...language import dtype as dt
from ...language import params as P
from ...language import sys_var as sv
from ...isa import hb
from ...isa.queue import queue_pipes
from ...language.enums import POSITION_MEMORY, HardEvent, Hardware, TPosition
from ...language.struct import Struct
from ..registry import Call, attribute, method, rule
from ..context import LoweringContext
from ..types import (AllocatorT, GlobalAddressT, GlobalTensorT, LocalTensorT, RecordT, ScalarT, TBufT,
                     TPipeT, TQueT, Value, const, is_number, scalar)
from .cache import scalar_gm_load, scalar_gm_store
from . import access
from .common import STORAGE_SUFFIX, memory_of, settle_l0c

# ---------------------------------------------------------------------------- dtype and addresses


@attribute(GlobalAddressT, "dtype")
@attribute(GlobalTensorT, "dtype")
@attribute(LocalTensorT, "dtype")
def _dtype(lw: LoweringContext, obj: Value, node) -> Value:
    if obj.type.dtype is None:
        lw.type_error("this GlobalTensor has no dtype until set_global_buffer binds it", node)
    return const(obj.type.dtype)


def _offset_address(lw: LoweringContext, call: Call) -> Value:
    addr, n = call.recv, call.args[0]
    if not (is_number(n) and lw.int_expr(n, call.node)):
        lw.type_error("a GlobalAddress can only be offset by an integer number of elements", call.node)
    step = addr.type.dtype.sizeof()
    sign = "-" if call.name == "-" else "+"
    return Value(addr.type, code=(addr.code[0], f"({addr.code[1]} {sign} ({lw.int_expr(n, call.node)}) * {step})"))


method(GlobalAddressT, "__add__", "__radd__", "__sub__")(_offset_address)

# ---------------------------------------------------------------------------- GlobalTensor


@rule(lang.GlobalTensor)
def _global_tensor(lw: LoweringContext, call: Call) -> Value:
    if call.args or call.kwargs:
        lw.type_error("GlobalTensor() takes no arguments; bind it with set_global_buffer", call.node)
    return Value(GlobalTensorT(None), code=("0", "0", "-1"))


@method(GlobalTensorT, "set_global_buffer")
def _set_global_buffer(lw: LoweringContext, call: Call) -> None:
    a = call.bind(lw, "buffer, buffer_size=None")
    buf, size = a["buffer"], a["buffer_size"]
    if not isinstance(buf.type, GlobalAddressT):
        lw.type_error(f"set_global_buffer needs a GlobalAddress (a kernel array argument, possibly offset), "
                      f"got {lw.describe(buf)}", call.node)
    size_code = "-1" if size.is_const and size.const is None else lw.int_expr(size, call.node, "buffer_size")
    new = Value(GlobalTensorT(buf.type.dtype), code=(buf.code[0], buf.code[1], size_code))
    _update_receiver(lw, call, new)


def _update_receiver(lw: LoweringContext, call: Call, new: Value) -> None:
    """Store ``new`` into the variable the method was called on (mutating methods)."""
    import ast
    node = call.recv_node
    if not isinstance(node, ast.Name):
        lw.fail(f"{call.name} must be called on a variable", call.node, UnsupportedSyntaxError)
    if not lw.update_variable(node.id, new):
        lw.fail(f"{call.name} must be called on a variable", call.node, UnsupportedSyntaxError)


def _bound(lw: LoweringContext, call: Call) -> Value:
    """The receiver of a GlobalTensor method, which must have been bound to memory."""
    if call.recv.type.dtype is None:
        lw.type_error("GlobalTensor used before set_global_buffer", call.node)
    return call.recv


@method(GlobalTensorT, "__getitem__")
def _gm_getitem(lw: LoweringContext, call: Call) -> Value:
    g = _bound(lw, call)
    start = lw.int_expr(call.args[0], call.node, "a GlobalTensor index")
    if start == "0":
        return g
    out = lw.new_var("goff"), lw.new_var("gsize")
    fn = lw.call_isa("tensor", "gm_sub_tensor", [g.code[1], g.code[2], str(g.type.dtype.sizeof()), start],
                     call.node)
    lw.emit(f"{out[0]}, {out[1]} = {fn}")
    return Value(g.type, code=(g.code[0], out[0], out[1]))


@method(GlobalTensorT, "get_size")
def _gm_get_size(lw: LoweringContext, call: Call) -> Value:
    call.bind(lw, "")
    g = _bound(lw, call)
    return scalar("int", f"({g.code[2]} if {g.code[2]} >= 0 else "
                         f"(_gm[{g.code[0]}].size - {g.code[1]}) // {g.type.dtype.sizeof()})")


@method(GlobalTensorT, "get_phy_addr")
def _gm_phy_addr(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "offset=0")
    g = _bound(lw, call)
    off = lw.int_expr(a["offset"], call.node)
    return Value(GlobalAddressT(g.type.dtype),
                 code=(g.code[0], f"({g.code[1]} + ({off}) * {g.type.dtype.sizeof()})"))


def _scalar_kind(d: dt.DataType) -> str:
    return "float" if d.is_float else "int"


def _from_storage(d: dt.DataType, expr: str, lw) -> str:
    if d is dt.float16:
        return f"{lw.isa('scalar', 'f16_to_f32')}({expr})"
    if d is dt.bfloat16:
        return f"{lw.isa('scalar', 'bf16_to_f32')}({expr})"
    if d.is_float:
        return f"_f32({expr})"
    return f"np.int64({expr})"      # scalar ints are int64; uint64 keeps its bits


def _to_storage(d: dt.DataType, value: Value, lw, node) -> str:
    if d is dt.float16:
        return f"{lw.isa('scalar', 'f32_to_f16')}({lw.materialize(value, node, 'float')})"
    if d is dt.bfloat16:
        return f"{lw.isa('scalar', 'f32_to_bf16')}({lw.materialize(value, node, 'float')})"
    np_name = {"f32": "float32", "f64": "float64"}.get(STORAGE_SUFFIX[d])
    if np_name:
        return f"np.{np_name}({lw.materialize(value, node, 'float')})"
    # through int64, so that out-of-range values wrap (as a C++ assignment does) in both modes
    if value.is_const and isinstance(value.const, int) and not isinstance(value.const, bool):
        return f"np.{d.storage.name}(np.int64({lw.u64_expr(value, node)}))"
    return f"np.{d.storage.name}(np.int64({lw.materialize(value, node)}))"


@method(GlobalTensorT, "get_value", "__call__")
def _gm_get_value(lw: LoweringContext, call: Call) -> Value:
    g = _bound(lw, call)
    a = call.bind(lw, "index")
    idx = lw.int_expr(a["index"], call.node, "an element index")
    raw = scalar_gm_load(lw, g, idx, STORAGE_SUFFIX[g.type.dtype], call.node)     # through the DCache
    return lw.fresh_value(scalar(_scalar_kind(g.type.dtype), _from_storage(g.type.dtype, raw, lw)), "gv")


@method(GlobalTensorT, "set_value")
def _gm_set_value(lw: LoweringContext, call: Call) -> None:
    g = _bound(lw, call)
    a = call.bind(lw, "index, value")
    idx = lw.int_expr(a["index"], call.node, "an element index")
    val = _to_storage(g.type.dtype, a["value"], lw, call.node)
    scalar_gm_store(lw, g, idx, val, STORAGE_SUFFIX[g.type.dtype], call.node)      # through the DCache


# ---------------------------------------------------------------------------- LocalTensor


def _position(lw: LoweringContext, v: Value, node) -> TPosition:
    p = lw.const_value(v, node, "a TPosition")
    try:
        return TPosition(p)
    except ValueError:
        lw.type_error(f"{p!r} is not a TPosition", node)


def _dtype_arg(lw: LoweringContext, v: Value, node, what: str = "dtype") -> dt.DataType:
    d = lw.const_value(v, node, what)
    if not isinstance(d, dt.DataType) or d is dt.void:
        lw.type_error(f"{what} must be an asc data type (asc.float32, x.dtype, ...), got {d!r}", node)
    return d


@rule(lang.LocalTensor)
def _local_tensor(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "dtype, pos=9, addr=0, tile_size=0")
    d = _dtype_arg(lw, a["dtype"], call.node)
    pos = _position(lw, a["pos"], call.node)
    hw = memory_of(lw, pos, call.node)
    addr = lw.int_expr(a["addr"], call.node, "addr")
    n = lw.int_expr(a["tile_size"], call.node, "tile_size")
    out = lw.new_var("laddr")
    lw.emit(f"{out} = " + lw.call_isa("tensor", "static_tensor",
                                      ["_st", str(int(hw)), addr, f"({n}) * {d.sizeof()}"], call.node))
    return Value(LocalTensorT(d, pos), code=(out, n))


@method(LocalTensorT, "__getitem__")
def _local_getitem(lw: LoweringContext, call: Call) -> Value:
    t = call.recv
    start = lw.int_expr(call.args[0], call.node, "a LocalTensor index")
    if start == "0":
        return t
    a, n = lw.new_var("laddr"), lw.new_var("llen")
    lw.emit(f"{a}, {n} = " + lw.call_isa("tensor", "sub_tensor",
                                         [t.code[0], t.code[1], str(t.type.dtype.sizeof()), start], call.node))
    return Value(t.type, code=(a, n))


@method(LocalTensorT, "get_size", "get_length")
def _local_size(lw: LoweringContext, call: Call) -> Value:
    t = call.recv
    if call.name == "get_length":
        return scalar("int", f"({t.code[1]} * {t.type.dtype.sizeof()})")
    return scalar("int", t.code[1])


@method(LocalTensorT, "get_position")
def _local_position(lw: LoweringContext, call: Call) -> Value:
    return const(call.recv.type.pos)


@method(LocalTensorT, "get_phy_addr")
def _local_phy_addr(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "offset=0")
    t = call.recv
    hw = POSITION_MEMORY[t.type.pos]
    off = lw.int_expr(a["offset"], call.node)
    return scalar("int", f"({t.code[0]} - _st[{S.SEG_BASE + int(hw)}] + ({off}))")


@method(LocalTensorT, "reinterpret_cast")
def _reinterpret(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "dtype")
    t = call.recv
    d = _dtype_arg(lw, a["dtype"], call.node)
    old = t.type.dtype.sizeof()
    return Value(LocalTensorT(d, t.type.pos), code=(t.code[0], f"({t.code[1]} * {old} // {d.sizeof()})"))


@method(LocalTensorT, "get_value", "__call__")
def _local_get_value(lw: LoweringContext, call: Call) -> Value:
    t = call.recv
    a = call.bind(lw, "index")
    idx = lw.int_expr(a["index"], call.node, "an element index")
    _scalar_access(lw, t, idx, access.READ, call.node)
    settle_l0c(lw, t, call.node)
    raw = lw.call_isa("tensor", f"local_get_{STORAGE_SUFFIX[t.type.dtype]}",
                      ["_lm", t.code[0], t.code[1], idx], call.node)
    return lw.fresh_value(scalar(_scalar_kind(t.type.dtype), _from_storage(t.type.dtype, raw, lw)), "lv")


@method(LocalTensorT, "set_value")
def _local_set_value(lw: LoweringContext, call: Call) -> None:
    t = call.recv
    a = call.bind(lw, "index, value")
    idx = lw.int_expr(a["index"], call.node, "an element index")
    val = _to_storage(t.type.dtype, a["value"], lw, call.node)
    _scalar_access(lw, t, idx, access.WRITE, call.node)
    settle_l0c(lw, t, call.node)
    lw.emit_isa("tensor", f"local_set_{STORAGE_SUFFIX[t.type.dtype]}", ["_lm", t.code[0], t.code[1], idx, val],
                call.node)


def _scalar_access(lw: LoweringContext, t: Value, idx: str, kind: int, node) -> None:
    """Element ``idx`` of ``t``, read or written by the scalar unit (an index outside ``t`` is not declared:
    the access itself reports it)."""
    if lw.full_check:
        size = t.type.dtype.sizeof()
        lw.local_access(hb.S, f"({t.code[0]}) + ({idx}) * {size}",
                        f"({size} if 0 <= ({idx}) < ({t.code[1]}) else 0)", kind, node)


# ---------------------------------------------------------------------------- TPipe / TQue / TBuf


@rule(lang.TPipe)
def _tpipe(lw: LoweringContext, call: Call) -> Value:
    if lw.facts.tpipe:
        lw.fail("a kernel may create only one TPipe", call.node, UnsupportedSyntaxError)
    lw.facts.tpipe = True
    return Value(TPipeT())


def _queue_depth(lw: LoweringContext, v: Value, node) -> int:
    depth = lw.const_value(v, node, "the queue depth")
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= S.MAX_QUEUE_BLOCKS:
        lw.type_error(f"queue depth must be an int in 1..{S.MAX_QUEUE_BLOCKS}, got {depth!r}", node)
    return depth


@rule(lang.TQue)
def _tque(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "pos, depth=1")
    pos = _position(lw, a["pos"], call.node)
    depth = _queue_depth(lw, a["depth"], call.node)
    memory_of(lw, pos, call.node)
    qid = lw.count("queue")
    if qid >= S.MAX_QUEUES:
        lw.fail(f"a kernel may create at most {S.MAX_QUEUES} queues", call.node, UnsupportedSyntaxError)
    lw.facts.queue_pipes[qid] = queue_pipes(pos, pos)
    return Value(TQueT(qid, pos, pos, depth))


@rule(lang.TQueBind)
def _tque_bind(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "src, dst, depth=1")
    src, dst = _position(lw, a["src"], call.node), _position(lw, a["dst"], call.node)
    depth = _queue_depth(lw, a["depth"], call.node)
    qid = lw.count("queue")
    if qid >= S.MAX_QUEUES:
        lw.fail(f"a kernel may create at most {S.MAX_QUEUES} queues", call.node, UnsupportedSyntaxError)
    # the buffer lives in the producer's memory unless that is GM (e.g. GM->VECIN binds)
    home = dst if src == TPosition.GM else src
    memory_of(lw, home, call.node)
    lw.facts.queue_pipes[qid] = queue_pipes(src, dst)
    return Value(TQueT(qid, home, dst, depth))


@rule(lang.TBuf)
def _tbuf(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "pos=11")
    pos = _position(lw, a["pos"], call.node)
    memory_of(lw, pos, call.node)
    bid = lw.count("tbuf")
    if bid >= S.MAX_TBUFS:
        lw.fail(f"a kernel may create at most {S.MAX_TBUFS} TBufs", call.node, UnsupportedSyntaxError)
    return Value(TBufT(bid, pos))


def _limits(lw: LoweringContext) -> tuple[int, int]:
    p = lw.platform
    return p.max_buffers_per_position, p.max_pipe_buffers


@method(TPipeT, "init_buffer")
def _init_buffer(lw: LoweringContext, call: Call) -> None:
    target = call.args[0] if call.args else call.kwargs.get("que", call.kwargs.get("buf"))
    if target is not None and isinstance(target.type, TBufT):
        a = call.bind(lw, "que=?, num=?, len=?, buf=?")
        buf = a.get("que") or a.get("buf")
        length = a.get("len") or a.get("num")   # pyasc: init_buffer(tbuf, nbytes) (param named num)
        if length is None:
            lw.type_error("init_buffer(tbuf, length) needs the length in bytes", call.node)
        hw = memory_of(lw, buf.type.pos, call.node)
        lw.emit_isa("queue", "init_tbuf", ["_st", str(buf.type.bid), str(int(hw)),
                                           lw.int_expr(length, call.node, "len"), str(_limits(lw)[1])], call.node)
        return
    a = call.bind(lw, "que, num, len")
    q = a["que"]
    if not isinstance(q.type, TQueT):
        lw.type_error(f"init_buffer needs a TQue or TBuf, got {lw.describe(q)}", call.node)
    hw = memory_of(lw, q.type.pos, call.node)
    lw.emit_isa("queue", "init_queue", [
        "_st", str(q.type.qid), str(int(q.type.pos)), str(int(hw)), lw.int_expr(a["num"], call.node, "num"),
        lw.int_expr(a["len"], call.node, "len"), str(q.type.depth), str(_limits(lw)[1])], call.node)


@method(TPipeT, "reset", "destroy")
def _pipe_reset(lw: LoweringContext, call: Call) -> None:
    call.bind(lw, "")
    if lw.full_check:
        lw.emit_isa("hb", "pipe_reset", ["_st", "_sh"], call.node)
    lw.emit_isa("queue", "pipe_reset", ["_st"], call.node)


@method(TPipeT, "init")
def _pipe_init(lw: LoweringContext, call: Call) -> None:
    call.bind(lw, "")


def _hard_event(lw: LoweringContext, call: Call, v: Value) -> int:
    e = lw.const_value(v, call.node, "event")
    try:
        return int(HardEvent(e))
    except (ValueError, TypeError):
        lw.type_error(f"{call.name}: event must be a HardEvent member, got {e!r}", call.node)


@method(TPipeT, "alloc_event_id", "fetch_event_id")
def _pipe_event_id(lw: LoweringContext, call: Call) -> Value:
    """``pipe.alloc_event_id(event)`` / ``fetch_event_id(event)``: an id of ``event`` from TPipe's pool."""
    a = call.bind(lw, f"event={int(HardEvent.V_S)}")
    event = _hard_event(lw, call, a["event"])
    return lw.fresh_value(scalar("int", lw.call_isa("sync", call.name, ["_st", str(event)], call.node)), "evt")


@method(TPipeT, "release_event_id")
def _pipe_release_event_id(lw: LoweringContext, call: Call) -> None:
    """``pipe.release_event_id(id, event)``: give the id back to the pool."""
    a = call.bind(lw, f"id, event={int(HardEvent.V_S)}")
    event = _hard_event(lw, call, a["event"])
    lw.emit_isa("sync", "release_event_id", ["_st", str(event), lw.int_expr(a["id"], call.node, "id")],
                call.node)


def _queue_tensor(lw: LoweringContext, call: Call, fn: str, extra: list[str]) -> Value:
    q = call.recv
    a = call.bind(lw, "dtype")
    d = _dtype_arg(lw, a["dtype"], call.node)
    addr, nbytes = lw.new_var("qaddr"), lw.new_var("qbytes")
    lw.emit(f"{addr}, {nbytes} = " + lw.call_isa("queue", fn, ["_st", str(q.type.qid), *extra], call.node))
    if lw.full_check:
        # deque waits on the consumer for the enque; alloc_tensor on the producer for the last free_tensor
        producer, consumer = _pipes(lw, q)
        lw.emit_isa("hb", "queue_join", ["_st", "_sh", str(q.type.qid), addr,
                                         str(consumer if fn == "deque" else producer)], call.node)
    pos = q.type.dst_pos if fn == "deque" else q.type.pos
    return Value(LocalTensorT(d, pos), code=(addr, f"({nbytes} // {d.sizeof()})"))


@method(TQueT, "alloc_tensor")
def _alloc_tensor(lw: LoweringContext, call: Call) -> Value:
    return _queue_tensor(lw, call, "alloc_tensor", [str(_limits(lw)[0])])


@method(TQueT, "deque")
def _deque(lw: LoweringContext, call: Call) -> Value:
    return _queue_tensor(lw, call, "deque", [])


def _queue_takes_tensor(lw: LoweringContext, call: Call, fn: str) -> None:
    from .common import local
    q = call.recv
    a = call.bind(lw, "tensor")
    local(lw, a["tensor"], call.node, "the tensor", positions=None)
    lw.emit_isa("queue", fn, ["_st", str(q.type.qid), a["tensor"].code[0]], call.node)
    if lw.full_check:
        # enque publishes the producer's work for deque; free_tensor the consumer's for alloc_tensor
        producer, consumer = _pipes(lw, q)
        pipe, target = (producer, consumer) if fn == "enque" else (consumer, producer)
        lw.emit_isa("hb", "queue_publish", ["_st", "_sh", str(q.type.qid), a["tensor"].code[0], str(pipe),
                                            str(target)], call.node)


def _pipes(lw: LoweringContext, q: Value) -> tuple[int, int]:
    """(producer, consumer) pipes of a queue (see isa/queue.py)."""
    return lw.facts.queue_pipes[q.type.qid]


@method(TQueT, "enque")
def _enque(lw: LoweringContext, call: Call) -> None:
    _queue_takes_tensor(lw, call, "enque")


@method(TQueT, "free_tensor")
def _free_tensor(lw: LoweringContext, call: Call) -> None:
    _queue_takes_tensor(lw, call, "free_tensor")


@method(TQueT, "get_tensor_count_in_que")
def _que_count(lw: LoweringContext, call: Call) -> Value:
    return lw.fresh_value(scalar("int", lw.call_isa("queue", "queue_count", ["_st", str(call.recv.type.qid)],
                                                    call.node)), "qn")


@method(TQueT, "has_tensor_in_que")
def _que_has(lw: LoweringContext, call: Call) -> Value:
    n = _que_count(lw, call)
    return scalar("bool", f"({n.code[0]} > 0)")


@method(TQueT, "vacant_in_que")
def _que_vacant(lw: LoweringContext, call: Call) -> Value:
    n = _que_count(lw, call)
    return scalar("bool", f"({n.code[0]} < {call.recv.type.depth})")


@method(TQueT, "has_idle_buffer")
def _que_idle(lw: LoweringContext, call: Call) -> Value:
    return lw.fresh_value(scalar("bool", lw.call_isa("queue", "queue_has_idle", ["_st", str(call.recv.type.qid)],
                                                     call.node)), "qi")


@method(TBufT, "get")
def _tbuf_get(lw: LoweringContext, call: Call) -> Value:
    b = call.recv
    a = call.bind(lw, "dtype, length=None, len=None")     # pyasc names it len
    d = _dtype_arg(lw, a["dtype"], call.node)
    n = a["len"] if a["length"].is_const and a["length"].const is None else a["length"]
    nbytes = "-1" if n.is_const and n.const is None else f"({lw.int_expr(n, call.node, 'length')}) * {d.sizeof()}"
    addr, got = lw.new_var("baddr"), lw.new_var("bbytes")
    lw.emit(f"{addr}, {got} = " + lw.call_isa("queue", "tbuf_get", ["_st", str(b.type.bid), nbytes, "0"], call.node))
    return Value(LocalTensorT(d, b.type.pos), code=(addr, f"({got} // {d.sizeof()})"))


@method(TBufT, "get_with_offset")
def _tbuf_get_with_offset(lw: LoweringContext, call: Call) -> Value:
    b = call.recv
    a = call.bind(lw, "length, offset, dtype")
    d = _dtype_arg(lw, a["dtype"], call.node)
    n = lw.int_expr(a["length"], call.node, "length")
    off = lw.int_expr(a["offset"], call.node, "offset")
    addr, got = lw.new_var("baddr"), lw.new_var("bbytes")
    lw.emit(f"{addr}, {got} = " + lw.call_isa("queue", "tbuf_get", ["_st", str(b.type.bid), f"({n}) * {d.sizeof()}",
                                                                    off], call.node))
    return Value(LocalTensorT(d, b.type.pos), code=(addr, f"({got} // {d.sizeof()})"))


@rule(lang.LocalMemAllocator)
def _allocator(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "hardware=1")
    hw = lw.const_value(a["hardware"], call.node, "the hardware")
    return Value(AllocatorT(int(Hardware(hw))), code=("0",))


@method(AllocatorT, "alloc")
def _allocator_alloc(lw: LoweringContext, call: Call) -> Value:
    import ast
    al = call.recv
    a = call.bind(lw, "pos, dtype, tile_size")
    pos = _position(lw, a["pos"], call.node)
    if memory_of(lw, pos, call.node) != al.type.hardware:
        lw.type_error(f"position {pos.name} is not in {Hardware(al.type.hardware).name}", call.node)
    d = _dtype_arg(lw, a["dtype"], call.node)
    n = lw.int_expr(a["tile_size"], call.node, "tile_size")
    addr = lw.new_var("laddr")
    lw.emit(f"{addr} = " + lw.call_isa("tensor", "static_tensor",
                                       ["_st", str(al.type.hardware), al.code[0], f"({n}) * {d.sizeof()}"], call.node))
    nxt = Value(al.type, code=(f"(({al.code[0]}) + ({n}) * {d.sizeof()} + 31) // 32 * 32",))
    if isinstance(call.recv_node, ast.Name):
        _update_receiver(lw, call, nxt)
    return Value(LocalTensorT(d, pos), code=(addr, n))


@method(AllocatorT, "get_cur_addr")
def _allocator_cur(lw: LoweringContext, call: Call) -> Value:
    return scalar("int", call.recv.code[0])


# ---------------------------------------------------------------------------- parameter structs, Structs


def _record(lw: LoweringContext, call: Call, cls: type) -> Value:
    names = cls.field_names()
    spec = ", ".join(n + ("" if d is P.REQUIRED else "=?") for n, d, _ in cls._fields_)
    a = call.bind(lw, spec)
    items = []
    for name, default, ctype in cls._fields_:
        v = a.get(name, const(default))
        if ctype == "dtype":
            v = const(_dtype_arg(lw, v, call.node, name))
        elif ctype == "const":
            lw.const_value(v, call.node, name)
        elif not (is_number(v) or v.is_const):
            lw.type_error(f"{cls.__name__}.{name} must be a number, got {lw.describe(v)}", call.node)
        items.append(v if v.is_const else lw.fresh_value(v, "p"))
    return Value(RecordT(cls, names), items=tuple(items))


def _register_params() -> None:
    for obj in vars(P).values():
        if isinstance(obj, type) and issubclass(obj, P.ParamStruct) and obj is not P.ParamStruct:
            rule(obj)(lambda lw, call, _cls=obj: _record(lw, call, _cls))


_register_params()


def register_param_struct(cls: type) -> type:
    """Make a ParamStruct subclass defined elsewhere constructible in kernels."""
    rule(cls)(lambda lw, call, _cls=cls: _record(lw, call, _cls))
    return cls


# ---------------------------------------------------------------------------- Python builtins


@rule(builtins.min, builtins.max)
def _minmax(lw: LoweringContext, call: Call) -> Value:
    if call.kwargs or len(call.args) < 2:
        lw.type_error(f"{call.name}() in a kernel takes two or more numbers", call.node)
    if all(a.is_const for a in call.args):
        return _fold(lw, call, builtins.min if call.name == "min" else builtins.max, *(a.const for a in call.args))
    kind = "float" if any((a.type.kind == "float") if isinstance(a.type, ScalarT) else isinstance(a.const, float)
                          for a in call.args) else "int"
    exprs = [lw.materialize(a, call.node, kind) for a in call.args]
    return scalar(kind, f"{call.name}({', '.join(exprs)})")


def _fold(lw: LoweringContext, call: Call, fn, *args) -> Value:
    """A builtin applied to constants, at compile time."""
    try:
        return const(fn(*args))
    except Exception as exc:  # noqa: BLE001 - the user's constant was wrong
        lw.type_error(f"{call.name}() of {', '.join(map(repr, args))}: {exc}", call.node)


def _one_arg(lw: LoweringContext, call: Call) -> Value:
    """The argument of a one-argument builtin: a constant (folded by the caller) or a runtime number."""
    v = call.bind(lw, "x")["x"]
    if not (v.is_const or is_number(v)):
        lw.type_error(f"{call.name}() in a kernel takes a number, got {lw.describe(v)}", call.node)
    return v


@rule(builtins.abs)
def _abs(lw: LoweringContext, call: Call) -> Value:
    v = _one_arg(lw, call)
    if v.is_const:
        return _fold(lw, call, builtins.abs, v.const)
    return scalar("int" if v.type.kind == "bool" else v.type.kind, f"abs({lw.materialize(v, call.node)})")


@rule(builtins.int, builtins.float, builtins.bool)
def _convert(lw: LoweringContext, call: Call) -> Value:
    v = _one_arg(lw, call)
    if v.is_const:
        return _fold(lw, call, {"int": int, "float": float, "bool": bool}[call.name], v.const)
    if call.name == "int":
        return scalar("int", f"int({lw.materialize(v, call.node)})")
    if call.name == "float":
        return scalar("float", f"_f32({lw.materialize(v, call.node)})")
    return scalar("bool", f"bool({lw.materialize(v, call.node)})")


@rule(builtins.len)
def _len(lw: LoweringContext, call: Call) -> Value:
    v = call.bind(lw, "obj")["obj"]
    if v.is_const:
        return _fold(lw, call, builtins.len, v.const)
    if hasattr(v.type, "n"):
        return const(v.type.n)
    lw.type_error(f"len() of {lw.describe(v)}", call.node)


@rule(builtins.print)
def _print(lw: LoweringContext, call: Call) -> None:
    """Plain print works in both modes for scalars (debug mode prints as CPython does)."""
    parts = []
    for v in call.args:
        if v.is_const:
            parts.append(repr(str(v.const)))
        elif isinstance(v.type, ScalarT):
            parts.append(v.code[0])
        else:
            lw.type_error(f"print() can show numbers and strings; use asc.dump_tensor for {lw.describe(v)}",
                          call.node)
    lw.emit(f"print({', '.join(parts)})")


@rule(lang.ceildiv)
def _ceildiv(lw: LoweringContext, call: Call) -> Value:
    args = call.bind(lw, "a, b")
    a, b = args["a"], args["b"]
    if a.is_const and b.is_const:
        if b.const == 0:
            lw.type_error("ceildiv by zero", call.node)
        return const(lang.ceildiv(a.const, b.const))
    x, y = lw.int_expr(a, call.node), lw.int_expr(b, call.node)
    if b.is_const and b.const != 0:
        return scalar("int", f"((({x}) + ({y}) - 1) // ({y}))")
    return scalar("int", lw.call_isa("arith", "floordiv_int", [f"(({x}) + ({y}) - 1)", y], call.node))


@rule(lang.static_assert)
def _static_assert(lw: LoweringContext, call: Call) -> None:
    a = call.bind(lw, "cond, msg=''")
    if not lw.const_value(a["cond"], call.node, "the static_assert condition"):
        lw.fail(f"static_assert failed: {a['msg'].const}", call.node)


# ---------------------------------------------------------------------------- core identity


def _st_read(slot: int, kind: str = "int") -> Any:
    def r(lw: LoweringContext, call: Call) -> Value:
        call.bind(lw, "")
        return scalar(kind, f"_st[{slot}]" if kind == "int" else f"(_st[{slot}] != 0)")
    return r


rule(sv.get_block_idx)(_st_read(S.BLOCK_IDX))
rule(sv.get_block_num)(_st_read(S.BLOCK_NUM))
rule(sv.get_sub_block_idx)(_st_read(S.SUB_BLOCK_IDX))
rule(sv.get_sub_block_num, sv.get_task_ratio)(_st_read(S.SUB_BLOCK_NUM))


@rule(sv.ascend_is_aic)
def _is_aic(lw: LoweringContext, call: Call) -> Value:
    return scalar("bool", f"(_st[{S.CORE_TYPE}] == 1)")


@rule(sv.ascend_is_aiv)
def _is_aiv(lw: LoweringContext, call: Call) -> Value:
    return scalar("bool", f"(_st[{S.CORE_TYPE}] == 0)")


@rule(sv.get_data_block_size_in_bytes)
def _blk_size(lw: LoweringContext, call: Call) -> Value:
    return const(32)


__all__ = ["register_param_struct", "errors", "Struct"]
