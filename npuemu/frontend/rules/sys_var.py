"""Rules for the core identity and system variables (``get_block_idx``, ``ascend_is_aic``, ...).

Each reads a slot of the core's state array, set by the launch.
"""
from __future__ import annotations

from typing import Callable

from ...isa import state as S
from ...language import sys_var as sv
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import Value, const, scalar


def _st_read(slot: int) -> Callable[[LoweringContext, Call], Value]:
    def r(lw: LoweringContext, call: Call) -> Value:
        call.bind_to(lw, getattr(sv, call.name))
        return scalar("int", f"_st[{slot}]")
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

