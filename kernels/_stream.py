"""Kernel-language helpers shared by the bundled kernels: per-core slices and tile I/O.

A full tile moves with ``data_copy``; a tile whose byte length is not a whole
number of 32-byte blocks (the tail of a core's slice) moves with
``data_copy_pad``, as production Ascend C kernels do.
"""
from __future__ import annotations

import npuemu.asc as asc


@asc.jit
def core_slice(total: int, block_len: int):
    """(first element, element count) of this core's slice of ``total`` elements."""
    start = asc.get_block_idx() * block_len
    length = min(block_len, total - start)
    return start, length


@asc.jit
def global_slice(addr: asc.GlobalAddress, start: int, length: int):
    """A GlobalTensor over ``length`` elements from element ``start`` of ``addr``."""
    g = asc.GlobalTensor()
    g.set_global_buffer(addr + start, length)
    return g


@asc.jit
def load(dst: asc.LocalTensor, src: asc.GlobalTensor, count: int):
    """Copy ``count`` elements GM -> UB; an unaligned tail goes through data_copy_pad."""
    nbytes = count * src.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, src, count)
    else:
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0),
                          asc.DataCopyPadExtParams(src.dtype, False, 0, 0, 0))


@asc.jit
def store(dst: asc.GlobalTensor, src: asc.LocalTensor, count: int):
    """Copy ``count`` elements UB -> GM; an unaligned tail goes through data_copy_pad."""
    nbytes = count * src.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, src, count)
    else:
        asc.data_copy_pad(dst, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0))


@asc.jit
def load_tile(q: asc.TQue, src: asc.GlobalTensor, count: int):
    """alloc_tensor + load + enque: the CopyIn stage of a TQue pipeline."""
    t = q.alloc_tensor(src.dtype)
    load(t, src, count)
    q.enque(t)


@asc.jit
def store_tile(q: asc.TQue, dst: asc.GlobalTensor, count: int):
    """deque + store + free_tensor: the CopyOut stage of a TQue pipeline."""
    t = q.deque(dst.dtype)
    store(dst, t, count)
    q.free_tensor(t)


@asc.jit
def to_float(dst: asc.LocalTensor, src: asc.LocalTensor, count: int):
    """Widen float16/bfloat16 to float32 for computation (exact)."""
    asc.cast(dst, src, asc.RoundMode.CAST_NONE, count)


@asc.jit
def from_float(dst: asc.LocalTensor, src: asc.LocalTensor, count: int):
    """Narrow float32 results back to float16/bfloat16, rounding to nearest even."""
    asc.cast(dst, src, asc.RoundMode.CAST_RINT, count)
