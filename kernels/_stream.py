"""Kernel-language helpers shared by the bundled kernels: per-core slices and tile I/O.

A full tile moves with ``data_copy``; a tile whose byte length is not a whole
number of 32-byte blocks (the tail of a core's slice) moves with
``data_copy_pad``, as production Ascend C kernels do.
"""
from __future__ import annotations

import npuemu.asc as asc
from npuemu.tiling.elementwise import ElementwiseTiling


@asc.jit
def core_tiles(t: ElementwiseTiling):
    """This core's slice of an elementwise tiling (tiling/elementwise.py).

    Returns (first element, element count, full tiles, tile length, last tile
    length).  Cores below ``former_num`` take ``former_length`` elements, the
    others ``tail_length``; the count is clipped to the tensor (the split is in
    whole 32-byte blocks).
    """
    idx = asc.get_block_idx()
    if idx < t.former_num:
        start = idx * t.former_length
        block = t.former_length
        tiles = t.former_tile_num
        tile_len = t.former_tile_length
        last_len = t.former_last_tile_length
    else:
        start = t.former_num * t.former_length + (idx - t.former_num) * t.tail_length
        block = t.tail_length
        tiles = t.tail_tile_num
        tile_len = t.tail_tile_length
        last_len = t.tail_last_tile_length
    return start, min(block, t.total_length - start), tiles, tile_len, last_len


@asc.jit
def tile_extent(i: int, tiles: int, tile_len: int, last_len: int, length: int):
    """(offset, count) of tile ``i``: ``tiles`` full tiles, then the last one, clipped to ``length``."""
    off = i * tile_len
    count = tile_len if i < tiles else last_len
    return off, min(count, length - off)


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
