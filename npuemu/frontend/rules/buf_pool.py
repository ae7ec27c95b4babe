"""Rules for ``TBufPool``: memory pools carved from the TPipe or a parent pool (``isa/buf_pool.py``).

Pool ids are numbered per kernel at compile time, like queue ids.  What can be
checked statically is checked here: the pool's position (UB or L1), its
``buf_id_size`` (a compile-time constant, 1..16, as the template parameter),
and that pools, their children, shared pools and the queues and TBufs
initialised on them all live in the same memory.
"""
from __future__ import annotations

from ...errors import UnsupportedSyntaxError
from ...isa import state as S
from ...isa.buf_pool import MAX_ID_SIZE
from ...language import core as lang
from ...language.enums import Hardware, TPosition
from ..context import LoweringContext
from ..registry import Call, method, rule
from ..types import TBufPoolT, TBufT, TPipeT, TQueT, Value
from .common import memory_of, position_arg

_POOL_POSITIONS = (TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC, TPosition.A1, TPosition.B1, TPosition.C1)


@rule(lang.TBufPool)
def _tbufpool(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.TBufPool)
    pos = position_arg(lw, a["pos"], call.node)
    if pos not in _POOL_POSITIONS:
        lw.type_error(f"TBufPool position must be one of {', '.join(p.name for p in _POOL_POSITIONS)} "
                      f"(UB or L1), got {pos.name}", call.node)
    size = lw.const_value(a["buf_id_size"], call.node, "buf_id_size")
    if not isinstance(size, int) or isinstance(size, bool) or not 1 <= size <= MAX_ID_SIZE:
        lw.type_error(f"TBufPool buf_id_size must be a compile-time int in 1..{MAX_ID_SIZE}, got {size!r}",
                      call.node)
    pid = lw.count("bufpool")
    if pid >= S.MAX_POOLS:
        lw.fail(f"a kernel may create at most {S.MAX_POOLS} TBufPools", call.node, UnsupportedSyntaxError)
    return Value(TBufPoolT(pid, pos, size))


def _pool(lw: LoweringContext, v: Value, node, what: str) -> TBufPoolT:
    if not isinstance(v.type, TBufPoolT):
        lw.type_error(f"{what} must be a TBufPool, got {lw.describe(v)}", node)
    return v.type


def _memory(lw: LoweringContext, pool: TBufPoolT, node) -> Hardware:
    return memory_of(lw, pool.pos, node)


@method(TPipeT, "init_buf_pool")
@method(TBufPoolT, "init_buf_pool")
def _init_buf_pool(lw: LoweringContext, call: Call) -> None:
    """``pipe.init_buf_pool(pool, len[, share_buf])`` and ``parent.init_buf_pool(child, len[, share_buf])``."""
    parent = call.recv.type if isinstance(call.recv.type, TBufPoolT) else None
    a = call.bind_to(lw, lang.TBufPool.init_buf_pool if parent else lang.TPipe.init_buf_pool)
    pool = _pool(lw, a["buf_pool"], call.node, "buf_pool")
    hw = _memory(lw, pool, call.node)
    if parent is not None and _memory(lw, parent, call.node) != hw:
        lw.type_error(f"a {pool.describe()} cannot be carved from a {parent.describe()}: both must be in the "
                      f"same memory", call.node)
    share = a["share_buf"]
    sid = -1
    if not (share.is_const and share.const is None):
        sp = _pool(lw, share, call.node, "share_buf")
        if _memory(lw, sp, call.node) != hw:
            lw.type_error(f"share_buf {sp.describe()} is not in the memory of buf_pool {pool.describe()}: pools "
                          f"sharing memory must be in the same memory", call.node)
        if sp.pid == pool.pid:
            lw.type_error("a TBufPool cannot share its own memory (share_buf is buf_pool)", call.node)
        sid = sp.pid
    lw.emit_isa("buf_pool", "init_pool", [
        "_st", str(pool.pid), str(int(hw)), lw.int_expr(a["len"], call.node, "len"), str(pool.id_size),
        str(parent.pid if parent else -1), str(sid)], call.node)


@method(TBufPoolT, "init_buffer")
def _pool_init_buffer(lw: LoweringContext, call: Call) -> None:
    pool = call.recv.type
    a = call.bind_to(lw, lang.TBufPool.init_buffer)
    q = a["que"] if "que" in a else a["buf"]
    hw = _memory(lw, pool, call.node)
    if not isinstance(q.type, (TQueT, TBufT)):
        lw.type_error(f"TBufPool.init_buffer needs a TQue or TBuf, got {lw.describe(q)}", call.node)
    if memory_of(lw, q.type.pos, call.node) != hw:
        lw.type_error(f"{q.type.describe()} is not in the memory of {pool.describe()}: a pool's buffers must be "
                      f"in its memory", call.node)
    if isinstance(q.type, TBufT):
        length = a.get("len", a["num"])          # as TPipe.init_buffer: a TBuf's byte length comes as num
        lw.emit_isa("buf_pool", "pool_init_tbuf", ["_st", str(pool.pid), str(q.type.bid),
                                                   lw.int_expr(length, call.node, "len")], call.node)
        return
    if "len" not in a:
        lw.type_error(f"{call.name}() missing required argument 'len'", call.node)
    lw.emit_isa("buf_pool", "pool_init_queue", [
        "_st", str(pool.pid), str(q.type.qid), str(int(q.type.pos)), lw.int_expr(a["num"], call.node, "num"),
        lw.int_expr(a["len"], call.node, "len"), str(q.type.depth)], call.node)


@method(TBufPoolT, "reset")
def _pool_reset(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, lang.TBufPool.reset)
    pid = str(call.recv.type.pid)
    if lw.full_check:
        lw.emit_isa("buf_pool", "pool_reset_sync", ["_st", "_sh", pid], call.node)
    lw.emit_isa("buf_pool", "pool_reset", ["_st", pid], call.node)


@method(TQueT, "free_all_event")
def _free_all_event(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, lang.TQue.free_all_event)
    qid = str(call.recv.type.qid)
    lw.emit_isa("buf_pool", "free_all_event", ["_st", qid], call.node)
    if lw.full_check:
        lw.emit_isa("buf_pool", "free_all_event_sync", ["_st", "_sh", qid], call.node)


@method(TQueT, "init_buf_handle", "init_start_buf_handle")
def _buf_handle_methods(lw: LoweringContext, call: Call) -> None:
    lw.fail(f"TQue.{call.name} is the library's internal buffer bookkeeping (it needs raw TBufHandle pointers); "
            f"give a queue its buffers with pipe.init_buffer(que, num, len) or pool.init_buffer(que, num, len)",
            call.node, UnsupportedSyntaxError)


@rule(lang.TBufHandle)
def _tbufhandle(lw: LoweringContext, call: Call) -> Value:
    lw.fail("TBufHandle is a raw pointer into the library's buffer tables, which npuemu does not expose; "
            "use TQue/TBuf tensors instead", call.node, UnsupportedSyntaxError)
