"""The Matmul object in a MIX kernel: the vector cores drive the cube through messages (docs/matmul-api.md).

As with Ascend C's matmul client/server: every core runs the kernel; at
``register_matmul`` the AIC initialises the object, serves the requests of its
AIVs (``isa/adv_matmul_msg.py`` mailboxes in the workspace) until each of them
has ended, and leaves the kernel; the AIVs go on with the kernel, keep the
object's state and post a request where the cube must work: ``get_tensor_c``
(one tile), ``iterate_all`` / ``iterate_batch`` (every tile), ``end``.  A tile
for a UB tensor goes through the AIV's staging area in GM (Atlas A2/A3 have
no L0C -> UB path) and is copied into UB with ``data_copy`` (MTE2).
"""
from __future__ import annotations

from typing import Any

from ...isa import adv_matmul_msg as msg
from ...isa import state as S
from ...language.enums import KernelType
from ..context import LoweringContext
from ..registry import Call
from ..types import GlobalTensorT, LocalTensorT, Value, scalar

SYSMEM = "_gm[len(_gm) - 1]"


def ratio(lw: LoweringContext) -> int:
    return 2 if lw.facts.kernel_type == KernelType.MIX_AIC_1_2 else 1


def _ws(mm: Any, v: Any) -> tuple[str, str]:
    return v(mm, "ws_rid"), v(mm, "ws_off")


def register(lw: LoweringContext, call: Call, mm: Any, v: Any, ws: Value, aic_body: Any) -> None:
    """Emit the AIC's init and server loop (then the AIC leaves the kernel) and the AIVs' client set-up."""
    rid, off = v(mm, "ws_rid"), v(mm, "ws_off")
    if ws.is_const and ws.const is None:
        lw.emit(f"{rid}, {off} = {lw.call_isa('system', 'sys_workspace', ['_st'], call.node)}")
    else:
        lw.emit(f"{rid} = np.int64({ws.code[0]})")
        lw.emit(f"{off} = np.int64({ws.code[1]})")
    n_aiv = f"(_st[{S.BLOCK_NUM}] * {ratio(lw)})"
    lw.emit_isa("adv_matmul_msg", "check_workspace", ["_st", f"_gm[{rid}]", off, n_aiv], call.node)
    lw.emit(f"{v(mm, 'live')} = np.int64(1)")
    lw.emit(f"{v(mm, 'mbox')} = {lw.isa('adv_matmul_msg', 'mailbox')}(_st, {ratio(lw)})")
    with lw.emit_if(f"_st[{S.CORE_TYPE}] == 1"):
        aic_body()
        _serve(lw, call, mm, v)
        lw.emit("return")
    # an AIV that leaves the kernel without end() ends its object (Ascend C: the client's destructor)
    lw.at_kernel_end(f"if {v(mm, 'live')} != 0 and {v(mm, 'mbox')} >= 0: " + _post_call(lw, mm, v, msg.KIND_END, call.node))


def _post_call(lw: LoweringContext, mm: Any, v: Any, kind: int, node: Any, overrides: dict | None = None) -> str:
    vals = {name: v(mm, name) for name in msg.FIELDS if name != "kind"}
    vals.update(overrides or {})
    g, off = f"_gm[{v(mm, 'ws_rid')}]", v(mm, "ws_off")
    args = [g, off, v(mm, "mbox"), SYSMEM, str(kind)] + [vals[n] for n in msg.FIELDS[1:]]
    return lw.isa("adv_matmul_msg", "post") + f"({', '.join(args)})"


def request(lw: LoweringContext, call: Call, mm: Any, v: Any, kind: int, overrides: dict) -> None:
    """Post a request from this AIV and wait until the AIC has carried it out."""
    g, off, slot = f"_gm[{v(mm, 'ws_rid')}]", v(mm, "ws_off"), v(mm, "mbox")
    lw.emit_isa("adv_matmul_msg", "check_served", ["_st", slot, str(ratio(lw))], call.node)
    if lw.full_check:
        lw.emit_isa("cross_core", "release_all", ["_st", "_sh", "_gsh", str(msg.OBJ_REQUEST)], call.node)
    lw.emit(_post_call(lw, mm, v, kind, call.node, overrides))
    lw.wait_until(f"{lw.isa('adv_matmul_msg', 'is_done')}({g}, {off}, {slot})", call.node)
    if lw.full_check:
        lw.emit_isa("cross_core", "acquire_all", ["_st", "_sh", "_gsh", str(msg.OBJ_DONE)], call.node)
    lw.emit(f"{lw.isa('adv_matmul_msg', 'ack')}({g}, {off}, {slot}, {SYSMEM})")
    if kind == msg.KIND_END:
        lw.emit(f"{v(mm, 'live')} = np.int64(0)")


def _serve(lw: LoweringContext, call: Call, mm: Any, v: Any) -> None:
    """The AIC's loop: take a posted request of one of its AIVs, carry it out, mark it done."""
    from .adv_matmul_run import serve_tiles
    g, off = f"_gm[{v(mm, 'ws_rid')}]", v(mm, "ws_off")
    r = ratio(lw)
    ended, slot = lw.new_var("mmended"), lw.new_var("mmslot")
    lw.emit(f"{ended} = np.int64(0)")
    with lw.emit_block(f"while {ended} < {r}:"):
        first = f"(_st[{S.BLOCK_IDX}] * {r})"
        lw.wait_until(f"{lw.isa('adv_matmul_msg', 'pending')}({g}, {off}, {first}, {r}) >= 0", call.node)
        lw.emit(f"{slot} = {lw.isa('adv_matmul_msg', 'pending')}({g}, {off}, {first}, {r})")
        if lw.full_check:
            lw.emit_isa("cross_core", "acquire_all", ["_st", "_sh", "_gsh", str(msg.OBJ_REQUEST)], call.node)
        for i, name in enumerate(msg.FIELDS):
            target = v(mm, "kind") if name == "kind" else v(mm, name)
            lw.emit(f"{target} = {lw.isa('adv_matmul_msg', 'field')}({g}, {off}, {slot}, {i})")
        with lw.emit_if(f"{v(mm, 'kind')} == {msg.KIND_END}"):
            lw.emit(f"{ended} += 1")
        with lw.emit_if(f"{v(mm, 'kind')} == {msg.KIND_TILES}"):
            serve_tiles(lw, call, mm)
        if lw.full_check:
            lw.emit_isa("cross_core", "release_all", ["_st", "_sh", "_gsh", str(msg.OBJ_DONE)], call.node)
        lw.emit(f"{lw.isa('adv_matmul_msg', 'done')}({g}, {off}, {slot}, {SYSMEM})")


def stage(lw: LoweringContext, mm: Any, v: Any) -> Value:
    """This AIV's C staging area in the workspace, as a GlobalTensor of C's type."""
    n_aiv = f"(_st[{S.BLOCK_NUM}] * {ratio(lw)})"
    at = f"{lw.isa('adv_matmul_msg', 'stage_offset')}({v(mm, 'ws_off')}, {n_aiv}, {v(mm, 'mbox')})"
    return lw.fresh_value(Value(GlobalTensorT(mm.c.dtype), code=(v(mm, "ws_rid"), at,
                                                                  str(msg.STAGE // mm.c.dtype.sizeof()))), "mmstage")


def is_ub(t: Value) -> bool:
    return isinstance(t.type, LocalTensorT)


def seq_scalar(flag: bool) -> Value:
    return scalar("int", "1" if flag else "0")
