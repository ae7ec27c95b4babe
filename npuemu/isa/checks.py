"""Entry points of the ``full``-level checks that instructions' memory accesses go through.

Rules declare each access an instruction makes (``Lowerer.local_access`` /
``Lowerer.gm_access``, and the strided forms below); at check level ``full``
the generated code calls these functions before the instruction runs.  They
dispatch to the race checker's shadows (:mod:`npuemu.isa.local_shadow`,
:mod:`npuemu.isa.gm_shadow`) and, for GM, to the DCache checks
(:mod:`npuemu.isa.dcache_checks`), so instructions themselves stay
check-free.  The level-0 helpers compute how far a mask/repeat instruction
reaches into an operand, as the instruction itself will, without faulting:
a bad parameter is the instruction's to report.
"""
from __future__ import annotations

import numpy as np

from .linkage import instruction
from . import dcache_checks, gm_shadow, hb, local_shadow
from . import state as S
from .vec_cast import operand_reach
from .vmask import bits_from_count, lanes_used


@instruction
def local_access(st, sh, pipe, addr, nbytes, write, loc):
    """Pipe ``pipe`` reads or writes (``write``: an ``hb`` kind) ``nbytes`` of local memory at ``addr``."""
    local_shadow.local(st, sh, pipe, addr, nbytes, write, loc)


@instruction
def local_access_strided(st, sh, pipe, addr, nbytes, step, count, write, loc):
    """``count`` blocks of ``nbytes``, ``step`` bytes apart, from ``addr`` (a strided copy's local side)."""
    if step == nbytes or count == 1:
        local_shadow.local(st, sh, pipe, addr, step * (count - 1) + nbytes, write, loc)
        return
    for i in range(count):
        local_shadow.local(st, sh, pipe, addr + i * step, nbytes, write, loc)


@instruction
def gm_access(st, sh, gsh, dc, pipe, rid, off, nbytes, write, loc):
    """Pipe ``pipe`` reads (or writes) ``nbytes`` at byte ``off`` of GM region ``rid`` by DMA."""
    # ---- DCache: DMA bypasses every core's DCache, so it must not read bytes still dirty in one
    # (missing data_cache_clean_and_invalid after set_value) nor write into a dirty line.
    if pipe != hb.S:
        dcache_checks.check_dma(st, dc, rid, off, nbytes, write, loc)
    # ---- end DCache
    # ---- races: this core's pipes, and other cores (see gm_shadow.gm); MTE3 and FIX writes to GM in the
    # core's atomic mode (isa/atomic.py) are atomic
    atomic = 0
    if write == hb.WRITE and (pipe == hb.MTE3 or pipe == hb.FIX) and st[S.ATOMIC_TYPE] != 0:
        atomic = (st[S.ATOMIC_OP] & 3) + 1
    gm_shadow.gm(st, sh, gsh[rid], rid, pipe, off, nbytes, write, atomic, loc)


@instruction
def gm_access_strided(st, sh, gsh, dc, pipe, rid, off, nbytes, step, count, write, loc):
    """``count`` blocks of ``nbytes``, ``step`` bytes apart, from byte ``off`` of GM region ``rid``."""
    if step == nbytes or count == 1:
        gm_access(st, sh, gsh, dc, pipe, rid, off, step * (count - 1) + nbytes, write, loc)
        return
    for i in range(count):
        gm_access(st, sh, gsh, dc, pipe, rid, off + i * step, nbytes, write, loc)


# --------------------------------------------------------------------------- level-0 reach


@instruction
def l0_plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, lane_esize):
    """``(counter, top, lanes, repeats, total)`` of a level-0 instruction, as ``vmask.resolve`` decides.

    Parameters the instruction will reject give ``repeats = 0`` (nothing touched).
    """
    lanes = 256 // lane_esize
    if st[S.MASK_MODE] == 1:
        total = mask_lo if is_set_mask else st[S.MASK_LO]
        if total <= 0:
            return True, 0, lanes, 0, 0
        return True, min(total, lanes), lanes, (total + lanes - 1) // lanes, total
    if repeat <= 0 or repeat > 255:
        return False, 0, lanes, 0, 0
    if is_set_mask:
        if mask_is_bits:
            lo, hi = np.uint64(mask_lo), np.uint64(mask_hi)
        else:
            if mask_lo <= 0:
                return False, 0, lanes, 0, 0
            lo, hi = bits_from_count(min(mask_lo, lanes))
    else:
        lo, hi = np.uint64(st[S.MASK_LO]), np.uint64(st[S.MASK_HI])
    if lanes <= 64:
        hi = np.uint64(0)
    if lanes == 32:
        lo &= np.uint64(0xFFFFFFFF)
    return False, lanes_used(False, lo, hi, lanes, 0), lanes, repeat, 0


@instruction
def l0_bytes(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, blk, rep, esize, lane_esize):
    """Bytes from an operand's start to the end of the farthest element a level-0 instruction touches.

    ``blk``/``rep`` are the operand's block and repeat strides (32-byte
    units), ``esize`` its element size and ``lane_esize`` the element size
    that sets the lanes per repeat (the wider operand's).
    """
    counter, top, lanes, repeats, total = l0_plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
                                                  lane_esize)
    if repeats <= 0 or top <= 0 or blk < 0 or rep < 0:
        return 0
    return operand_reach(counter, top, lanes, repeats, total, blk, rep, 32 // esize) * esize


@instruction
def l0_repeats(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat, lane_esize):
    """Repeats a level-0 instruction runs (0 when a parameter is invalid)."""
    counter, top, lanes, repeats, total = l0_plan(st, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
                                                  lane_esize)
    return repeats if top > 0 else 0
