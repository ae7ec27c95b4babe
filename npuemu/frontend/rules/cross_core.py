"""Rules for cross-core synchronisation (``cross_core_set_flag`` ... ``notify_next_block``).

Modes, pipes and ``is_aiv_only`` are template parameters in Ascend C, so they
must be constants here, and what depends only on them and the kernel type is
checked at compile time: which kernel types start the hardware's cross-core
sync unit (the docs' table of modes per kernel type), and which pipes a set
may name.  Flag ids, block indices and event ids may be computed at run time
and are checked by the instructions.

Each wait lowers to ``lw.wait_until(<try function>)``: the core yields to the
scheduler until the instruction reports that the wait completed.  Every
primitive marks the kernel blocking, so its cores run one at a time (they
share the cross-core state in npuemu's system region).  At check level
``full`` a set or an arrival releases a race-checker sync object and a
completed wait acquires it (object ids: ``npuemu/isa/cross_core.py``).
"""
from __future__ import annotations

from ...isa import cross_core as isa
from ...language import cross_core as lang
from ...language import dtype as dt
from ...language.enums import VECTOR_POSITIONS, KernelType, PipeID
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import GlobalTensorT, LocalTensorT, Value
from .common import const_bool, plain_int

K = KernelType
# kernel types whose launch starts the cross-core sync unit, per mode (CrossCoreSetFlag, table 3)
MODE_TYPES = {
    0: (K.MIX_AIV_1_0, K.MIX_AIC_1_0, K.MIX_AIV_HARD_SYNC, K.MIX_AIC_HARD_SYNC, K.MIX_AIC_1_1, K.MIX_AIC_1_2),
    1: (K.MIX_AIC_1_1, K.MIX_AIC_1_2),
    2: (K.MIX_AIC_1_1, K.MIX_AIC_1_2),
}
# pipes a cross-core set may wait for (modes 0-2: not PIPE_S, not PIPE_ALL)
SET_PIPES = (PipeID.PIPE_V, PipeID.PIPE_M, PipeID.PIPE_MTE1, PipeID.PIPE_MTE2, PipeID.PIPE_MTE3, PipeID.PIPE_FIX)


def _system(lw: LoweringContext) -> str:
    """The system GM region (the last one), which holds the cross-core state; marks the kernel."""
    lw.facts.cross_core = True
    lw.facts.blocking = True     # cores share that state: run them one at a time
    return "_gm[len(_gm) - 1]"


def _const_int(lw: LoweringContext, call: Call, v: Value, what: str) -> int:
    c = lw.const_value(v, call.node, what)
    if isinstance(c, bool) or not isinstance(c, int):
        lw.type_error(f"{call.name}: {what} must be an integer constant, got {c!r}", call.node)
    return int(c)


def _mode(lw: LoweringContext, call: Call, v: Value) -> int:
    mode = _const_int(lw, call, v, "mode_id")
    if mode not in MODE_TYPES:
        lw.type_error(f"{call.name}: mode_id {mode} is not a cross-core mode of Atlas A2/A3 (0, 1 or 2)",
                      call.node)
    return mode


def _pipe(lw: LoweringContext, call: Call, v: Value) -> PipeID:
    c = lw.const_value(v, call.node, "pipe")
    try:
        return PipeID(c)
    except (ValueError, TypeError):
        lw.type_error(f"{call.name}: pipe must be a PipeID member, got {c!r}", call.node)


def _kernel_type(lw: LoweringContext, call: Call, allowed: tuple[KernelType, ...], what: str) -> None:
    kt = lw.facts.kernel_type
    if kt not in allowed:
        names = ", ".join(k.name for k in allowed)
        lw.type_error(f"{what} needs kernel_type {names}; this kernel is {kt.name}, whose launch does not start "
                      f"the hardware's cross-core sync unit (the kernel would hang). Launch it with "
                      f"kernel_type=asc.KernelType.{allowed[0].name}", call.node)


def matmul_flags(lw: LoweringContext) -> None:
    """Ascend C's Matmul client/server of a MIX kernel uses cross-core flags 0 .. 2N-1 for its N objects
    (spec §1.7): a kernel's own set or wait on one of them collides with it on hardware."""
    reserved = 2 * lw.facts.mix_matmuls
    for flag, (name, node) in sorted(lw.facts.flag_sites.items()):
        if flag < reserved:
            lw.type_error(f"{name}: flag {flag} collides with the Matmul API: in a MIX kernel its client and server "
                          f"use cross-core flags 0-{reserved - 1} for this kernel's {lw.facts.mix_matmuls} Matmul "
                          f"object(s) (2 per object), so a set or wait of the kernel's own on one of them is taken "
                          f"for theirs (a hang or wrong data on hardware); use a flag from {reserved} to 10", node)


def _flag_site(lw: LoweringContext, call: Call, v: Value) -> None:
    """Remember a constant flag id's first use, for :func:`matmul_flags`."""
    if v.is_const and isinstance(v.const, int) and v.const not in lw.facts.flag_sites:
        lw.facts.flag_sites[int(v.const)] = (call.name, call.node)
        matmul_flags(lw)


def _runtime_int(lw: LoweringContext, call: Call, v: Value, what: str) -> str:
    """An integer argument evaluated once (it is used by the instruction and the race-checker hook)."""
    v = lw.fresh_value(v, what.replace("_", ""))
    return plain_int(lw.int_expr(v, call.node, what))


# ---------------------------------------------------------------------------- cross-core flags


@rule(lang.cross_core_set_flag)
def _set_flag(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.cross_core_set_flag)
    mode = _mode(lw, call, a["mode_id"])
    pipe = _pipe(lw, call, a["pipe"])
    if pipe not in SET_PIPES:
        lw.type_error(f"cross_core_set_flag: pipe {pipe.name} is not allowed (one of "
                      f"{', '.join(p.name for p in SET_PIPES)})", call.node)
    _kernel_type(lw, call, MODE_TYPES[mode], f"cross_core_set_flag mode {mode}")
    _flag_site(lw, call, a["flag_id"])
    flag = _runtime_int(lw, call, a["flag_id"], "flag_id")
    lw.cost_isa("cross_set", [_system(lw), flag, str(int(pipe))], call.node)
    lw.emit_isa("cross_core", "set_flag", ["_st", _system(lw), flag, str(mode), str(int(pipe))], call.node)
    if lw.full_check:
        obj = lw.call_isa("cross_core", "flag_object", ["_st", flag, str(mode), "True"], call.node)
        lw.emit_isa("cross_core", "release_pipe", ["_st", "_sh", "_gsh", str(int(pipe)), obj], call.node)


@rule(lang.cross_core_wait_flag)
def _wait_flag(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.cross_core_wait_flag)
    mode = _mode(lw, call, a["mode_id"])
    _pipe(lw, call, a["pipe"])             # no effect on A2/A3: the wait stalls every pipe
    _kernel_type(lw, call, MODE_TYPES[mode], f"cross_core_wait_flag mode {mode}")
    _flag_site(lw, call, a["flag_id"])
    flag = _runtime_int(lw, call, a["flag_id"], "flag_id")
    lw.wait_until(lw.call_isa("cross_core", "try_wait_flag", ["_st", _system(lw), flag, str(mode)],
                              call.node), call.node)
    lw.cost_isa("cross_wait", [_system(lw), flag], call.node)
    if lw.full_check:
        obj = lw.call_isa("cross_core", "flag_object", ["_st", flag, str(mode), "False"], call.node)
        lw.emit_isa("cross_core", "acquire_all", ["_st", "_sh", "_gsh", obj], call.node)


# ---------------------------------------------------------------------------- workspaces


def _workspaces(lw: LoweringContext, call: Call, a: dict[str, Value]) -> list[str]:
    """isa arguments of a GM int32 workspace and a UB int32 workspace: ``_lm, g, off, size, ub, ub_len``."""
    g, ub = a["gm_workspace"], a["ub_workspace"]
    if not isinstance(g.type, GlobalTensorT) or g.type.dtype is not dt.int32:
        lw.type_error(f"{call.name}: gm_workspace must be an int32 GlobalTensor bound with set_global_buffer, "
                      f"got {lw.describe(g)}", call.node)
    if not isinstance(ub.type, LocalTensorT) or ub.type.dtype is not dt.int32:
        lw.type_error(f"{call.name}: ub_workspace must be an int32 LocalTensor, got {lw.describe(ub)}", call.node)
    if ub.type.pos not in VECTOR_POSITIONS:
        lw.type_error(f"{call.name}: ub_workspace is in position {ub.type.pos.name}; it must be in UB "
                      f"(VECIN, VECOUT or VECCALC)", call.node)
    return ["_lm", f"_gm[{g.code[0]}]", *(plain_int(c) for c in (g.code[1], g.code[2], ub.code[0], ub.code[1]))]


def _barrier(lw: LoweringContext, call: Call) -> None:
    """``PipeBarrier<PIPE_ALL>``, with which the soft primitives and hard sync_all begin (and end)."""
    if lw.full_check:
        lw.emit_isa("hb", "barrier_all", ["_st", "_sh"], call.node)
    lw.cost_isa("barrier_all", [], call.node)


def _release(lw: LoweringContext, call: Call, obj: str) -> None:
    if lw.full_check:
        lw.emit_isa("cross_core", "release_all", ["_st", "_sh", "_gsh", obj], call.node)


def _acquire(lw: LoweringContext, call: Call, obj: str) -> None:
    if lw.full_check:
        lw.emit_isa("cross_core", "acquire_all", ["_st", "_sh", "_gsh", obj], call.node)


# ---------------------------------------------------------------------------- sync_all


@rule(lang.sync_all)
def _sync_all(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.sync_all)
    aiv_only = const_bool(lw, a["is_aiv_only"], call.node, "is_aiv_only")
    given = [a[n].is_const and a[n].const is None for n in ("gm_workspace", "ub_workspace")]
    if all(given):
        _hard_sync_all(lw, call, aiv_only)
    elif any(given):
        lw.type_error("sync_all: the software barrier needs both gm_workspace and ub_workspace (the hardware "
                      "barrier neither)", call.node)
    else:
        ws = _workspaces(lw, call, a)
        used = plain_int(lw.int_expr(a["used_cores"], call.node, "used_cores"))
        _barrier(lw, call)
        _release(lw, call, str(isa.OBJ_SOFT_SYNC))
        ready = lw.call_isa("soft_sync", "try_soft_sync_all",
                            ["_st", *ws, used, str(aiv_only), _system(lw)], call.node)
        lw.wait_until(ready, call.node)
        _acquire(lw, call, str(isa.OBJ_SOFT_SYNC))
        _barrier(lw, call)


def _hard_sync_all(lw: LoweringContext, call: Call, aiv_only: bool) -> None:
    what = "sync_all()" if aiv_only else "sync_all(is_aiv_only=False)"
    _kernel_type(lw, call, MODE_TYPES[0] if aiv_only else MODE_TYPES[2], what)
    _barrier(lw, call)
    lw.cost_isa("sync_arrive", [_system(lw)], call.node)
    _release(lw, call, str(isa.OBJ_SYNC_ALL))
    lw.emit_isa("task_sync", "sync_all_arrive", ["_st", str(aiv_only)], call.node)     # SuperKernel feed-sync-all
    lw.wait_until(lw.call_isa("cross_core", "try_sync_all", ["_st", _system(lw), str(aiv_only)],
                              call.node), call.node)
    if lw.profile:
        lw.emit_isa("cost", "sync_depart", ["_st", _system(lw), str(aiv_only)], call.node)
    _acquire(lw, call, str(isa.OBJ_SYNC_ALL))


# ---------------------------------------------------------------------------- ib_set / ib_wait


def _ib(lw: LoweringContext, call: Call, fn: str) -> None:
    a = call.bind_to(lw, getattr(lang, call.name))
    ws = _workspaces(lw, call, a)
    aiv_only = const_bool(lw, a["is_aiv_only"], call.node, "is_aiv_only")
    block = _runtime_int(lw, call, a["block_idx"], "block_idx")
    event = _runtime_int(lw, call, a["event_id"], "event_id")
    _barrier(lw, call)
    ready = lw.call_isa("soft_sync", fn, ["_st", *ws, block, event, str(aiv_only), _system(lw)], call.node)
    lw.wait_until(ready, call.node)
    if lw.full_check:
        obj = lw.call_isa("soft_sync", "ib_object", [block, event], call.node)
        (_release if fn == "try_ib_set" else _acquire)(lw, call, obj)
    _barrier(lw, call)


@rule(lang.ib_set)
def _ib_set(lw: LoweringContext, call: Call) -> None:
    _ib(lw, call, "try_ib_set")


@rule(lang.ib_wait)
def _ib_wait(lw: LoweringContext, call: Call) -> None:
    _ib(lw, call, "try_ib_wait")


# ---------------------------------------------------------------------------- block order


@rule(lang.init_determine_compute_workspace)
def _init_order(lw: LoweringContext, call: Call) -> None:
    ws = _workspaces(lw, call, call.bind_to(lw, getattr(lang, call.name)))
    _barrier(lw, call)
    lw.emit_isa("soft_sync", "init_determine_compute_workspace", ["_st", *ws, _system(lw)], call.node)
    _barrier(lw, call)


@rule(lang.wait_pre_block)
def _wait_pre_block(lw: LoweringContext, call: Call) -> None:
    ws = _workspaces(lw, call, call.bind_to(lw, getattr(lang, call.name)))
    _barrier(lw, call)
    lw.wait_until(lw.call_isa("soft_sync", "try_wait_pre_block", ["_st", *ws, _system(lw)], call.node),
                  call.node)
    _acquire(lw, call, str(isa.OBJ_BLOCK_ORDER))
    _barrier(lw, call)


@rule(lang.notify_next_block)
def _notify_next_block(lw: LoweringContext, call: Call) -> None:
    ws = _workspaces(lw, call, call.bind_to(lw, getattr(lang, call.name)))
    _barrier(lw, call)
    _release(lw, call, str(isa.OBJ_BLOCK_ORDER))
    lw.emit_isa("soft_sync", "notify_next_block", ["_st", *ws, _system(lw)], call.node)
    _barrier(lw, call)
