"""Declaring the memory an instruction touches, for the race and initialisation checks.

Every instruction rule tells the checker, before it emits the instruction,
which pipe executes it and which bytes of which operand it reads or writes
(``lw.local_access`` / ``lw.gm_access``).  Only a binary
built for check level ``full`` gets the check calls, but the declarations are
made at every level (``lw.declares_access``): automatic synchronisation
(``frontend/autosync.py``) is derived from them.  The helpers here turn
operands into the byte extents those calls take.

Pipes (Ascend C "API流水类型汇总", Atlas A2/A3):

==========  ==========================================================
pipe        instructions
==========  ==========================================================
S           scalar code, ``get_value``/``set_value``, mask registers,
            flag and barrier instructions themselves
V           every vector instruction (arithmetic, cast, duplicate/brcb,
            reductions, compare/select, gather, get/set_cmp_mask) and
            UB -> UB ``data_copy``
MTE2        GM -> UB / GM -> L1 ``data_copy`` and ``data_copy_pad``
MTE3        UB -> GM ``data_copy`` and ``data_copy_pad``
MTE1, M,    the cube path: L1 -> L0A/L0B/BT, ``mmad``, L0C -> GM/L1
FIX
==========  ==========================================================

An extent is clamped to its tensor, so an instruction that runs past its
operand is reported by the instruction's own bounds check, not as a race.
"""
from __future__ import annotations

import ast

from ...isa import hb
from ...language.enums import POSITION_MEMORY
from ..autosync import LOCAL, gm_memory
from ..context import LoweringContext
from ..types import Value
from .common import plain_int

READ, WRITE, READ_SPAN = hb.READ, hb.WRITE, hb.READ_SPAN


def tensor_bytes(t: Value) -> str:
    """A LocalTensor's length in bytes, as an expression."""
    return f"({t.code[1]}) * {t.type.dtype.sizeof()}"


def local(lw: LoweringContext, pipe: int, t: Value, nbytes: str, kind: int, node: ast.AST | None) -> None:
    """``nbytes`` of LocalTensor ``t`` from its start (clamped to the tensor)."""
    if lw.declares_access:
        lw.local_access(pipe, plain_int(t.code[0]), f"min({nbytes}, {tensor_bytes(t)})", kind, node,
                        where=where(t), dtype=t.type.dtype)


def where(t: Value) -> tuple[str, tuple[int, int] | None]:
    """The memory holding LocalTensor ``t`` (named by its position) and, when known at compile time
    (a ``LocalTensorAuto`` and its sub-tensors), the bytes of it ``t`` stays within."""
    hw = POSITION_MEMORY.get(t.type.pos)
    return (hw.name if hw is not None else LOCAL), t.type.region


def local_count(lw: LoweringContext, pipe: int, t: Value, count: str, kind: int, node: ast.AST | None) -> None:
    """The first ``count`` elements of ``t``."""
    local(lw, pipe, t, f"({count}) * {t.type.dtype.sizeof()}", kind, node)


def local_all(lw: LoweringContext, pipe: int, t: Value, kind: int, node: ast.AST | None) -> None:
    """All of ``t`` (an operand the instruction uses whole, or reaches data-dependently)."""
    local(lw, pipe, t, tensor_bytes(t), kind, node)


def _l0_args(l0: list[str]) -> list[str]:
    """``is_set_mask, mask_is_bits, lo, hi, repeat`` as typed isa arguments (two bools, three ints)."""
    flags = [f"np.bool_({a})" for a in l0[:2]]
    return ["_st", *flags, *(plain_int(a) for a in l0[2:5])]


def level0(lw: LoweringContext, pipe: int, t: Value, l0: list[str], blk: str, rep: str, kind: int, node: ast.AST | None,
           lane_esize: int | None = None, esize: int | None = None) -> None:
    """An operand of a level-0 instruction: ``l0`` is ``[is_set_mask, mask_is_bits, lo, hi, repeat]``.

    Lanes the mask leaves off may skip whole blocks, so reads are declared
    as a span (races only) rather than checked for initialisation.  ``esize``
    overrides the operand's element size for an operand laid out as another
    type's blocks (``cast_deq``'s 8-bit results in int16 blocks).
    """
    if not lw.declares_access:
        return
    esize = esize or t.type.dtype.sizeof()
    args = [*_l0_args(l0), plain_int(blk), plain_int(rep), plain_int(str(esize)), plain_int(str(lane_esize or esize))]
    nbytes = f"{lw.isa('checks', 'l0_bytes')}({', '.join(args)})"
    local(lw, pipe, t, nbytes, READ_SPAN if kind == READ else kind, node)


def repeats_expr(lw: LoweringContext, l0: list[str], lane_esize: int) -> str:
    """The number of repeats a level-0 instruction runs, as an expression."""
    args = [*_l0_args(l0), plain_int(str(lane_esize))]
    return f"{lw.isa('checks', 'l0_repeats')}({', '.join(args)})"


def local_strided(lw: LoweringContext, pipe: int, t: Value, nbytes: str, step: str, count: str, kind: int,
                  node: ast.AST | None) -> None:
    """``count`` blocks of ``nbytes`` bytes, ``step`` bytes apart, from the start of ``t``."""
    lw.sync_access(pipe, *where(t), kind == WRITE, node)
    lw.cost_access(pipe, where(t)[0], f"(({count}) * ({nbytes}))", kind == WRITE, False, node, t.type.dtype)
    if lw.full_check:
        lw.emit_isa("checks", "local_access_strided",
                    ["_st", "_sh", str(pipe), plain_int(t.code[0]), plain_int(nbytes), plain_int(step),
                     plain_int(count), str(kind)], node)


def gm(lw: LoweringContext, pipe: int, g: Value, nbytes: str, write: bool, node: ast.AST | None) -> None:
    """``nbytes`` of GlobalTensor ``g`` from its start."""
    if lw.declares_access:
        lw.gm_access(pipe, plain_int(g.code[0]), plain_int(g.code[1]), plain_int(nbytes), int(write), node,
                     origin=g.type.origin)


def gm_strided(lw: LoweringContext, pipe: int, g: Value, nbytes: str, step: str, count: str, write: bool,
               node: ast.AST | None) -> None:
    """``count`` blocks of ``nbytes`` bytes, ``step`` bytes apart, from the start of ``g``."""
    lw.sync_access(pipe, gm_memory(g.type.origin), None, bool(write), node)
    lw.cost_access(pipe, gm_memory(g.type.origin), f"(({count}) * ((max({nbytes}, 0) + 31) // 32 * 32))",
                   bool(write), True, node)
    if lw.full_check:
        lw.emit_isa("checks", "gm_access_strided",
                    ["_st", "_sh", "_gsh", "_dc", str(pipe), plain_int(g.code[0]), plain_int(g.code[1]),
                     plain_int(nbytes), plain_int(step), plain_int(count), str(int(write))], node)
