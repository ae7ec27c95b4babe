"""Rules for ``TPipe``, ``TQue``/``TQueBind`` and ``TBuf``: on-chip memory split into queues and buffers.

Queue and buffer ids are numbered per kernel at compile time; their tables
live in each core's state (``isa/queue.py``).  At check level ``full`` the
queue operations also move the race checker's clocks between the queue's
producer and consumer pipes.
"""
from __future__ import annotations

from ...errors import UnsupportedSyntaxError
from ...isa import state as S
from ...isa.queue import queue_pipes
from ...language import core as lang
from ...language.enums import HardEvent, TPosition
from ..context import LoweringContext
from ..registry import Call, method, rule
from ..types import LocalTensorT, TBufT, TPipeT, TQueT, Value, const, scalar
from .common import dtype_arg, local, memory_of, plain_int, position_arg

# ---------------------------------------------------------------------------- TPipe / TQue / TBuf


@rule(lang.TPipe)
def _tpipe(lw: LoweringContext, call: Call) -> Value:
    if lw.facts.tpipe and not lw.facts.tpipe_destroyed:
        lw.fail("a kernel may create another TPipe only after destroy() of the one before (TPipe objects in "
                "sequence, as Ascend C allows)", call.node, UnsupportedSyntaxError)
    lw.facts.tpipe = True
    lw.facts.tpipe_destroyed = False
    return Value(TPipeT())


def _queue_depth(lw: LoweringContext, v: Value, node) -> int:
    depth = lw.const_value(v, node, "the queue depth")
    if not isinstance(depth, int) or isinstance(depth, bool) or not 1 <= depth <= S.MAX_QUEUE_BLOCKS:
        lw.type_error(f"queue depth must be an int in 1..{S.MAX_QUEUE_BLOCKS}, got {depth!r}", node)
    return depth


@rule(lang.get_tpipe_ptr, lang.TPipeManager.get)
def _get_tpipe_ptr(lw: LoweringContext, call: Call) -> Value:
    if call.args or call.kwargs:
        lw.type_error(f"{call.name}() takes no arguments", call.node)
    if not lw.facts.tpipe:
        lw.type_error(f"{call.name}() before the kernel created its TPipe (asc.TPipe())", call.node)
    return Value(TPipeT())


@rule(lang.TPipeManager.set)
def _tpipe_manager_set(lw: LoweringContext, call: Call) -> None:
    pipe = call.bind_to(lw, lang.TPipeManager.set)["pipe"]
    if not isinstance(pipe.type, TPipeT):
        lw.type_error(f"TPipeManager.set() takes the kernel's TPipe, got {lw.describe(pipe)}", call.node)


@rule(lang.TPipeManager.reset)
def _tpipe_manager_reset(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, lang.TPipeManager.reset)


@method(TPipeT, "get_base_addr")
def _pipe_base_addr(lw: LoweringContext, call: Call) -> Value:
    """Local addresses count from the start of each memory (as ``get_phy_addr`` reports them): 0."""
    pos = call.bind_to(lw, lang.TPipe.get_base_addr)["logic_pos"]
    if not (pos.is_const and pos.const is None):
        memory_of(lw, position_arg(lw, pos, call.node), call.node)
    return const(0)


@rule(lang.pop_stack_buffer)
def _pop_stack_buffer(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.pop_stack_buffer)
    d = dtype_arg(lw, a["dtype"], call.node)
    pos = position_arg(lw, a["position"], call.node)
    hw = memory_of(lw, pos, call.node)
    addr, nbytes = lw.new_var("saddr"), lw.new_var("sbytes")
    lw.emit(f"{addr}, {nbytes} = " + lw.call_isa("queue", "pop_stack_buffer", ["_st", str(int(hw))], call.node))
    return Value(LocalTensorT(d, pos), code=(addr, f"({nbytes} // {d.sizeof()})"))


@rule(lang.TQue)
def _tque(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.TQue)
    pos = position_arg(lw, a["pos"], call.node)
    depth = _queue_depth(lw, a["depth"], call.node)
    memory_of(lw, pos, call.node)
    qid = lw.count("queue")
    if qid >= S.MAX_QUEUES:
        lw.fail(f"a kernel may create at most {S.MAX_QUEUES} queues", call.node, UnsupportedSyntaxError)
    lw.facts.queue_pipes[qid] = queue_pipes(pos, pos)
    return Value(TQueT(qid, pos, pos, depth))


@rule(lang.TQueBind)
def _tque_bind(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.TQueBind)
    src, dst = position_arg(lw, a["src"], call.node), position_arg(lw, a["dst"], call.node)
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
    a = call.bind_to(lw, lang.TBuf)
    pos = position_arg(lw, a["pos"], call.node)
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
    a = call.bind_to(lw, lang.TPipe.init_buffer)
    q = a["que"] if "que" in a else a["buf"]
    if isinstance(q.type, TBufT):
        # pyasc: init_buffer(tbuf, nbytes), the length in bytes in the parameter named num
        length = a.get("len", a["num"])
        hw = memory_of(lw, q.type.pos, call.node)
        lw.emit_isa("queue", "init_tbuf", ["_st", str(q.type.bid), str(int(hw)),
                                           lw.int_expr(length, call.node, "len"), str(_limits(lw)[1])], call.node)
        return
    if "len" not in a:
        lw.type_error(f"{call.name}() missing required argument 'len'", call.node)
    if not isinstance(q.type, TQueT):
        lw.type_error(f"init_buffer needs a TQue or TBuf, got {lw.describe(q)}", call.node)
    hw = memory_of(lw, q.type.pos, call.node)
    num = a["num"]
    lw.sync_plan.queue_blocks(q.type.qid, num.const if num.is_const and isinstance(num.const, int) else None)
    lw.emit_isa("queue", "init_queue", [
        "_st", str(q.type.qid), str(int(q.type.pos)), str(int(hw)), lw.int_expr(a["num"], call.node, "num"),
        lw.int_expr(a["len"], call.node, "len"), str(q.type.depth), str(_limits(lw)[1])], call.node)


@method(TPipeT, "reset", "destroy")
def _pipe_reset(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, getattr(lang.TPipe, call.name))
    if lw.full_check:
        lw.emit_isa("hb", "pipe_reset", ["_st", "_sh"], call.node)
        if call.name == "destroy":
            # Destroy ends with PipeBarrier<PIPE_ALL>, except in a SuperKernel's sub-kernel (docs/superkernel.md)
            lw.emit_isa("task_sync", "destroy_barrier", ["_st", "_sh"], call.node)
    lw.emit_isa("queue", "pipe_reset", ["_st"], call.node)
    if call.name == "destroy":
        lw.facts.tpipe_destroyed = True


@method(TPipeT, "init")
def _pipe_init(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, lang.TPipe.init)


def _hard_event(lw: LoweringContext, call: Call, v: Value) -> int:
    e = lw.const_value(v, call.node, "event")
    try:
        return int(HardEvent(e))
    except (ValueError, TypeError):
        lw.type_error(f"{call.name}: event must be a HardEvent member, got {e!r}", call.node)


@method(TPipeT, "alloc_event_id", "fetch_event_id")
def _pipe_event_id(lw: LoweringContext, call: Call) -> Value:
    """``pipe.alloc_event_id(event)`` / ``fetch_event_id(event)``: an id of ``event`` from TPipe's pool."""
    a = call.bind_to(lw, getattr(lang.TPipe, call.name))
    event = _hard_event(lw, call, a["event"])
    return lw.fresh_value(scalar("int", lw.call_isa("sync", call.name, ["_st", str(event)], call.node)), "evt")


@method(TPipeT, "release_event_id")
def _pipe_release_event_id(lw: LoweringContext, call: Call) -> None:
    """``pipe.release_event_id(id, event)``: give the id back to the pool."""
    a = call.bind_to(lw, lang.TPipe.release_event_id)
    event = _hard_event(lw, call, a["event"])
    lw.emit_isa("sync", "release_event_id", ["_st", str(event), lw.int_expr(a["id"], call.node, "id")],
                call.node)


def _queue_tensor(lw: LoweringContext, call: Call, fn: str, extra: list[str]) -> Value:
    q = call.recv
    a = call.bind_to(lw, getattr(lang.TQue, fn))
    d = dtype_arg(lw, a["dtype"], call.node)
    addr, nbytes = lw.new_var("qaddr"), lw.new_var("qbytes")
    lw.emit(f"{addr}, {nbytes} = " + lw.call_isa("queue", fn, ["_st", str(q.type.qid), *extra], call.node))
    producer, consumer = _pipes(lw, q)
    if fn == "deque":
        lw.sync_plan.queue(q.type.qid, "data", False, producer, consumer)
    else:
        lw.sync_plan.queue(q.type.qid, "space", False, consumer, producer)
    if lw.full_check:
        # deque waits on the consumer for the enque; alloc_tensor on the producer for the last free_tensor
        lw.emit_isa("hb", "queue_join", ["_st", "_sh", str(q.type.qid), addr,
                                         str(consumer if fn == "deque" else producer)], call.node)
    lw.cost_isa("queue_wait", [str(q.type.qid), addr, str(consumer if fn == "deque" else producer)], call.node)
    pos = q.type.dst_pos if fn == "deque" else q.type.pos
    return Value(LocalTensorT(d, pos), code=(addr, f"({nbytes} // {d.sizeof()})"))


@method(TQueT, "alloc_tensor")
def _alloc_tensor(lw: LoweringContext, call: Call) -> Value:
    return _queue_tensor(lw, call, "alloc_tensor", [str(_limits(lw)[0])])


@method(TQueT, "deque")
def _deque(lw: LoweringContext, call: Call) -> Value:
    return _queue_tensor(lw, call, "deque", [])


def _queue_takes_tensor(lw: LoweringContext, call: Call, fn: str) -> None:
    q = call.recv
    a = call.bind_to(lw, getattr(lang.TQue, fn))
    local(lw, a["tensor"], call.node, "the tensor", positions=None)
    lw.emit_isa("queue", fn, ["_st", str(q.type.qid), a["tensor"].code[0]], call.node)
    producer, consumer = _pipes(lw, q)
    pipe, target = (producer, consumer) if fn == "enque" else (consumer, producer)
    lw.sync_plan.queue(q.type.qid, "data" if fn == "enque" else "space", True, pipe, target)
    if lw.full_check:
        # enque publishes the producer's work for deque; free_tensor the consumer's for alloc_tensor
        lw.emit_isa("hb", "queue_publish", ["_st", "_sh", str(q.type.qid), a["tensor"].code[0], str(pipe),
                                            str(target)], call.node)
    lw.cost_isa("queue_mark", [str(q.type.qid), plain_int(a["tensor"].code[0]), str(pipe)], call.node)


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
    a = call.bind_to(lw, lang.TBuf.get)
    d = dtype_arg(lw, a["dtype"], call.node)
    n = a["len"] if "len" in a else a["length"]
    nbytes = "-1" if n.is_const and n.const is None else f"({lw.int_expr(n, call.node, 'length')}) * {d.sizeof()}"
    addr, got = lw.new_var("baddr"), lw.new_var("bbytes")
    lw.emit(f"{addr}, {got} = " + lw.call_isa("queue", "tbuf_get", ["_st", str(b.type.bid), nbytes, "0"], call.node))
    return Value(LocalTensorT(d, b.type.pos), code=(addr, f"({got} // {d.sizeof()})"))


@method(TBufT, "get_with_offset")
def _tbuf_get_with_offset(lw: LoweringContext, call: Call) -> Value:
    b = call.recv
    a = call.bind_to(lw, lang.TBuf.get_with_offset)
    d = dtype_arg(lw, a["dtype"], call.node)
    n = lw.int_expr(a["size"], call.node, "size")
    off = lw.int_expr(a["buf_offset"], call.node, "buf_offset")
    addr, got = lw.new_var("baddr"), lw.new_var("bbytes")
    lw.emit(f"{addr}, {got} = " + lw.call_isa("queue", "tbuf_get", ["_st", str(b.type.bid), f"({n}) * {d.sizeof()}",
                                                                    off], call.node))
    return Value(LocalTensorT(d, b.type.pos), code=(addr, f"({got} // {d.sizeof()})"))
