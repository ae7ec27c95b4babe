"""Tensor bookkeeping instructions: static tensors, sub-tensors, scalar element access.

Scalar accesses run on PIPE_S.  GM scalar accesses go through the core's
DCache (:mod:`npuemu.isa.dcache`): a read may return a stale cached value and
a write reaches GM only when its line is written back, as on hardware.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from . import state as S
from . import dcache
from .common import check_aligned
from .fault import Fault, Message, register
from .linkage import instruction

F_STATIC_OOB = 1000
F_SUB_OOB = 1001
F_ELEM_OOB = 1002
F_GM_ELEM_OOB = 1003
F_GM_SUB_OOB = 1004
F_NO_MEM = 1005
F_NEG = 1006
F_GM_ELEM_ALIGN = 1007

register({
    F_STATIC_OOB: (errors.CapacityError,
                   lambda a, b, c, env: Message(f"a static tensor at byte {a} of {b} bytes does not fit in "
                                                f"{env.hardware(c)}", buffer=env.hardware(c))),
    F_SUB_OOB: (errors.BoundsError,
                lambda a, b, c, env: f"sub-tensor at element {a} of a tensor of {b} elements"),
    F_ELEM_OOB: (errors.BoundsError,
                 lambda a, b, c, env: f"element {a} of a tensor of {b} elements" if b >= 0 else
                 f"element {a}: a negative index (the GlobalTensor has no size: set_global_buffer was given none)"),
    F_GM_ELEM_OOB: (errors.BoundsError,
                    lambda a, b, c, env: Message(f"scalar access to byte offset {a} is outside {env.region(b)}",
                                                 "S", env.region_name(b))),
    F_GM_SUB_OOB: (errors.BoundsError,
                   lambda a, b, c, env: f"GlobalTensor offset {a} past its size of {b} elements"),
    F_NO_MEM: (errors.PositionError,
               lambda a, b, c, env: f"this core type has no {env.hardware(a)} (tensor position not "
                                    f"usable on this core)"),
    F_NEG: (errors.BoundsError,
            lambda a, b, c, env: f"negative address or size ({a})"),
    F_GM_ELEM_ALIGN: (errors.AlignmentError,
                      lambda a, b, c, env: f"scalar GM access at byte offset {a} is not aligned to its "
                                           f"{b}-byte element"),
})


@njit(cache=True)
def static_tensor(st, hw, addr, nbytes, loc):
    """Absolute lm address of a static tensor at ``addr`` in memory ``hw``; checks it fits."""
    size = st[S.SEG_SIZE + hw]
    if size == 0:
        raise Fault(F_NO_MEM, loc, hw, 0, 0)
    if addr < 0 or nbytes < 0:
        raise Fault(F_NEG, loc, min(addr, nbytes), 0, 0)
    if addr + nbytes > size:
        raise Fault(F_STATIC_OOB, loc, addr, nbytes, hw)
    end = st[S.SEG_BASE + hw] + addr + nbytes
    if end > st[S.LM_DIRTY]:
        st[S.LM_DIRTY] = end               # the launch refills only these bytes for the next core
    return st[S.SEG_BASE + hw] + addr


@njit(cache=True)
def sub_tensor(addr, length, esize, start, loc):
    """``t[start:]`` of a LocalTensor (addr, length): the new (addr, length)."""
    if start < 0 or start > length:
        raise Fault(F_SUB_OOB, loc, start, length, 0)
    return addr + start * esize, length - start


@njit(cache=True)
def gm_sub_tensor(off, size, esize, start, loc):
    """``g[start:]`` of a GlobalTensor: the new (byte offset, size); size -1 means unbounded."""
    if start < 0 or (size >= 0 and start > size):
        raise Fault(F_GM_SUB_OOB, loc, start, size, 0)
    return off + start * esize, (size - start if size >= 0 else size)


@njit(cache=True, inline="always")
def _local_index(addr, length, esize, index, loc):
    if index < 0 or index >= length:
        raise Fault(F_ELEM_OOB, loc, index, length, 0)
    return addr + index * esize


@njit(cache=True)
def gm_elem(gm, rid, off, size, esize, index, loc):
    """Byte offset in region ``rid`` of element ``index`` of a GlobalTensor (off, size); checks bounds.

    Elements are naturally aligned (GlobalTensor offsets count whole
    elements), so one never straddles two DCache lines.
    """
    if index < 0 or (size >= 0 and index >= size):
        raise Fault(F_ELEM_OOB, loc, index, size, 0)
    at = off + index * esize
    if at < 0 or at + esize > gm[rid].size:
        raise Fault(F_GM_ELEM_OOB, loc, at, rid, 0)
    if at % esize:
        raise Fault(F_GM_ELEM_ALIGN, loc, at, esize, 0)
    return at


def _make_access(dtype):
    """get/set element instructions of LocalTensor for one storage dtype."""
    np_t = dtype
    esize = np.dtype(dtype).itemsize

    @njit(cache=True)
    def local_get(lm, addr, length, index, loc):
        at = _local_index(addr, length, esize, index, loc)
        return lm[at:at + esize].view(np_t)[0]

    @njit(cache=True)
    def local_set(lm, addr, length, index, value, loc):
        at = _local_index(addr, length, esize, index, loc)
        lm[at:at + esize].view(np_t)[0] = value

    return local_get, local_set


def _make_gm_access(esize):
    """get/set element instructions of GlobalTensor (two forms) for one element size: they only move
    bytes, so the dtypes of one size share them (and their compilation)."""
    # GM elements go through the DCache.  The generated code checks the index with gm_elem, then
    # reads or writes the element in the DCache array at the position dcache.load_hit / store_hit
    # give for a hit, or else gm_get / gm_set (a miss, or the first write to a clean line).  A binary
    # built for check level full asks gm_get_full / gm_set_full for every access.

    @instruction
    def gm_get(st, gm, dc, rid, at, geo, loc):
        return dcache.load(st, gm, dc, rid, at, np.int64(esize), geo, loc)

    @instruction
    def gm_set(st, gm, dc, rid, at, geo, loc):
        return dcache.store(st, gm, dc, rid, at, np.int64(esize), geo, loc)

    @instruction
    def gm_get_full(st, sh, gsh, gm, dc, rid, at, geo, loc):
        return dcache.load_full(st, sh, gsh, gm, dc, rid, at, np.int64(esize), geo, loc)

    @instruction
    def gm_set_full(st, sh, gsh, gm, dc, rid, at, geo, loc):
        return dcache.store_full(st, sh, gsh, gm, dc, rid, at, np.int64(esize), geo, loc)

    return gm_get, gm_set, gm_get_full, gm_set_full


# module-level local_get_<t>, local_set_<t>, gm_get_<t>, gm_set_<t>, gm_get_<t>_full, gm_set_<t>_full
_GM_ACCESS: dict[int, tuple] = {}
for _t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32,
           np.float64):
    _sfx = np.dtype(_t).kind + str(8 * np.dtype(_t).itemsize)
    _names = (f"local_get_{_sfx}", f"local_set_{_sfx}", f"gm_get_{_sfx}", f"gm_set_{_sfx}",
              f"gm_get_{_sfx}_full", f"gm_set_{_sfx}_full")
    _size = np.dtype(_t).itemsize
    if _size not in _GM_ACCESS:
        _GM_ACCESS[_size] = _make_gm_access(_size)
    globals().update(zip(_names, _make_access(_t) + _GM_ACCESS[_size]))

__all__ = ["static_tensor", "sub_tensor", "gm_sub_tensor", "check_aligned"]
