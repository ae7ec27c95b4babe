"""Rules for the core identity, system variables and system pointers (``get_block_idx``, ``trap``, ...).

The identity variables read a slot of the core's state array, set by the
launch; the system pointers are kept in state slots too (npuemu/isa/system.py).
"""
from __future__ import annotations

from typing import Callable

from ...isa import state as S
from ...language import dtype as dt
from ...language import sys_var as sv
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import GlobalAddressT, Value, const, scalar
from .cache import flush_at_kernel_end, geometry_arg
from .common import global_tensor, plain_int

ARCH_VERSION = 220        # dav-c220: Atlas A2/A3 (the only architecture npuemu's profiles model)


def _st_read(slot: int) -> Callable[[LoweringContext, Call], Value]:
    def r(lw: LoweringContext, call: Call) -> Value:
        call.bind_to(lw, getattr(sv, call.name))
        return scalar("int", f"_st[{slot}]")
    return r


rule(sv.get_block_idx)(_st_read(S.BLOCK_IDX))
rule(sv.get_block_num)(_st_read(S.BLOCK_NUM))
rule(sv.get_sub_block_idx)(_st_read(S.SUB_BLOCK_IDX))


@rule(sv.get_raw_block_num)
def _raw_block_num(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, sv.get_raw_block_num)
    return scalar("int", f"(_st[{S.SK_BLOCK_NUM}] if _st[{S.SK_BLOCK_NUM}] > 0 else _st[{S.BLOCK_NUM}])")
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



@rule(sv.get_system_cycle)
def _system_cycle(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, sv.get_system_cycle)
    mhz = str(int(lw.platform.system_counter_mhz))
    if lw.profile:      # the cost model's clock: device time as the model predicts it
        expr = lw.call_isa("system", "model_cycle", ["_st", mhz, repr(float(lw.platform.clock_mhz))], call.node)
    else:
        expr = lw.call_isa("system", "system_cycle", [mhz], call.node)
    return lw.fresh_value(scalar("int", expr), "cyc")


@rule(sv.get_program_counter)
def _program_counter(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, sv.get_program_counter)
    return const(lw.loc_id(call.node))


@rule(sv.get_arch_version)
def _arch_version(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, sv.get_arch_version)
    return const(ARCH_VERSION)


@rule(sv.trap)
def _trap(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, sv.trap)
    lw.emit_isa("system", "trap", [], call.node)


@rule(sv.init_soc_state)
def _init_soc_state(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, sv.init_soc_state)
    lw.emit_isa("vmask", "set_mask_norm", ["_st"], call.node)
    lw.emit_isa("vmask", "reset_mask", ["_st"], call.node)


def _address(lw: LoweringContext, v: Value, node, what: str) -> tuple[str, str]:
    if not isinstance(v.type, GlobalAddressT):
        lw.type_error(f"{what} must be a GlobalAddress (a kernel array argument, possibly offset), "
                      f"got {lw.describe(v)}", node)
    return plain_int(v.code[0]), plain_int(v.code[1])


def _pointer(lw: LoweringContext, fn: str, args: list[str], node) -> Value:
    rid, off = lw.new_var("prid"), lw.new_var("poff")
    lw.emit(f"{rid}, {off} = " + lw.call_isa("system", fn, ["_st", *args], node))
    return Value(GlobalAddressT(dt.uint8), code=(rid, off))


@rule(sv.set_sys_workspace)
def _set_sys_workspace(lw: LoweringContext, call: Call) -> None:
    rid, off = _address(lw, call.bind_to(lw, sv.set_sys_workspace)["workspace"], call.node, "the workspace")
    lw.emit_isa("system", "set_sys_workspace", ["_st", rid, off], call.node)


@rule(sv.get_sys_workspace)
def _get_sys_workspace(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, sv.get_sys_workspace)
    return _pointer(lw, "sys_workspace", [], call.node)


@rule(sv.set_hccl_context)
def _set_hccl_context(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, sv.set_hccl_context)
    index = lw.int_expr(a["index"], call.node, "index")
    rid, off = _address(lw, a["context"], call.node, "the context")
    lw.emit_isa("system", "set_hccl_context", ["_st", index, rid, off], call.node)


@rule(sv.get_hccl_context)
def _get_hccl_context(lw: LoweringContext, call: Call) -> Value:
    index = lw.int_expr(call.bind_to(lw, sv.get_hccl_context)["index"], call.node, "index")
    return _pointer(lw, "hccl_context", [index], call.node)


@rule(sv.data_cache_preload)
def _data_cache_preload(lw: LoweringContext, call: Call) -> None:
    """Bring the line holding ``src`` + ``cache_offset`` bytes into the DCache, as a scalar read would,
    without declaring a read to the race checker: a line loaded early goes stale like any other."""
    a = call.bind_to(lw, sv.data_cache_preload)
    g = a["src"]
    global_tensor(lw, g, call.node, "data_cache_preload's src")
    off = lw.int_expr(a["cache_offset"], call.node, "cache_offset")
    flush_at_kernel_end(lw)
    rid, at = plain_int(g.code[0]), f"({plain_int(g.code[1])} + ({off}))"
    with lw.emit_if(f"0 <= {at} < _gm[{rid}].size"):       # a preload outside the buffer loads nothing
        lw.emit(lw.call_isa("dcache", "load", ["_st", "_gm", "_dc", rid, at, "1", geometry_arg(lw)], call.node))
