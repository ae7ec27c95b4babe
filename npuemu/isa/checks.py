"""Entry points of the ``full``-level checks that instructions' memory accesses go through.

Rules declare each access an instruction makes (``Lowerer.local_access`` /
``Lowerer.gm_access``); at check level ``full`` the generated code calls
these functions before the instruction runs.  They dispatch to the race
checker (:mod:`npuemu.isa.hb`) and, for GM, to the DCache model
(:mod:`npuemu.isa.dcache`), so instructions themselves stay check-free.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def local_access(st, sh, pipe, addr, nbytes, write, loc):
    """Pipe ``pipe`` reads (or writes) ``nbytes`` of local memory at absolute address ``addr``."""


@njit(cache=True)
def gm_access(st, sh, gsh, dc, pipe, rid, off, nbytes, write, loc):
    """Pipe ``pipe`` reads (or writes) ``nbytes`` at byte ``off`` of GM region ``rid`` by DMA."""
