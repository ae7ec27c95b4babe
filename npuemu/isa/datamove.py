"""Data movement instructions: ``data_copy`` between GM and on-chip memory.

GM is a tuple of byte arrays (one per region); on-chip memory is the core's
``lm`` byte array.  Every copy is checked against the tensors involved, the
GM region it touches and the hardware's alignment rules before any byte moves.
"""
from __future__ import annotations

from numba import njit

from .. import errors
from .common import BLOCK, memmove
from .fault import Fault, register

F_GM_OOB = 100
F_GM_SIZE = 101
F_LOCAL_SIZE = 102
F_UB_ALIGN = 103
F_NEG = 104

register({
    F_GM_OOB: (errors.BoundsError,
               lambda a, b, c, env: f"the copy touches GM bytes [{a}, {a + b}) outside {env.region(c)}"),
    F_GM_SIZE: (errors.BoundsError,
                lambda a, b, c, env: f"the copy touches {a} elements of a GlobalTensor whose "
                                     f"set_global_buffer size is {b}"),
    F_LOCAL_SIZE: (errors.BoundsError,
                   lambda a, b, c, env: f"the copy needs {a} bytes of a local tensor that holds only {b} bytes"),
    F_UB_ALIGN: (errors.AlignmentError,
                 lambda a, b, c, env: f"local tensor address {a} is not {b}-byte aligned"),
    F_NEG: (errors.ParamRangeError, lambda a, b, c, env: f"negative element count {a}"),
})


@njit(cache=True, inline="always")
def check_gm(gm, rid, off, nbytes, loc):
    if off < 0 or off + nbytes > gm[rid].size:
        raise Fault(F_GM_OOB, loc, off, nbytes, rid)


@njit(cache=True, inline="always")
def check_gm_size(size, nelem, loc):
    """``size`` is the set_global_buffer size in elements (-1 when not given)."""
    if size >= 0 and nelem > size:
        raise Fault(F_GM_SIZE, loc, nelem, size, 0)


@njit(cache=True, inline="always")
def check_local(addr, nbytes_needed, nbytes_have, loc):
    if addr % BLOCK != 0:
        raise Fault(F_UB_ALIGN, loc, addr, BLOCK, 0)
    if nbytes_needed > nbytes_have:
        raise Fault(F_LOCAL_SIZE, loc, nbytes_needed, nbytes_have, 0)


@njit(cache=True)
def gm_to_local(lm, gm, dst, dst_len, rid, off, size, count, esize, loc):
    """``data_copy(local, gm, count)``: the byte count rounds down to a whole 32-byte block."""
    if count < 0:
        raise Fault(F_NEG, loc, count, 0, 0)
    nbytes = count * esize // BLOCK * BLOCK
    check_local(dst, nbytes, dst_len * esize, loc)
    check_gm_size(size, nbytes // esize, loc)
    check_gm(gm, rid, off, nbytes, loc)
    memmove(lm, dst, gm[rid], off, nbytes)


@njit(cache=True)
def local_to_gm(gm, lm, rid, off, size, src, src_len, count, esize, loc):
    """``data_copy(gm, local, count)``: the byte count rounds down to a whole 32-byte block."""
    if count < 0:
        raise Fault(F_NEG, loc, count, 0, 0)
    nbytes = count * esize // BLOCK * BLOCK
    check_local(src, nbytes, src_len * esize, loc)
    check_gm_size(size, nbytes // esize, loc)
    check_gm(gm, rid, off, nbytes, loc)
    memmove(gm[rid], off, lm, src, nbytes)


@njit(cache=True)
def local_to_local(lm, dst, dst_len, src, src_len, count, esize, loc):
    """``data_copy(local, local, count)`` (UB to UB)."""
    if count < 0:
        raise Fault(F_NEG, loc, count, 0, 0)
    nbytes = count * esize // BLOCK * BLOCK
    check_local(dst, nbytes, dst_len * esize, loc)
    check_local(src, nbytes, src_len * esize, loc)
    memmove(lm, dst, lm, src, nbytes)
