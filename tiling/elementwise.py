"""Tiling for elementwise kernels: split ``total`` elements over cores, then into UB tiles.

The split follows the usual Ascend C recipe: every core but the last gets
``block_len`` elements, a multiple of one 32-byte block so that each core's
slice of GM starts 32-byte aligned; the last core takes the remainder.  Inside
a core the data streams through UB in tiles of ``tile_len`` elements (also a
whole number of 32-byte blocks), double buffered, so that ``live_tensors``
tiles in flight (inputs, outputs, scratch, each ``buffer_num`` times) fit in
the UB of the platform.  The last tile of a core may be short; kernels move
it with ``data_copy_pad``.
"""
from __future__ import annotations

from npuemu.asc import Field, KnownTypes, Struct
from npuemu.runtime.platform import Platform, get_platform

BLOCK = 32


class ElementwiseTiling(Struct):
    """Tiling data of the elementwise kernels (all counts in elements)."""

    total = Field(KnownTypes.int64, 0)       # elements in the whole tensor
    block_len = Field(KnownTypes.int64, 0)   # elements per core (the last core may have fewer)
    tile_len = Field(KnownTypes.int64, 0)    # elements per UB tile (a whole number of 32-byte blocks)


def elementwise_tiling(total: int, elem_bytes: int, ub_bytes_per_element: int, *,
                       platform: Platform | str | None = None, max_cores: int | None = None,
                       max_tile_bytes: int = 16 * 1024) -> tuple[ElementwiseTiling, int]:
    """Tiling data and the number of cores to launch for ``total`` elements of ``elem_bytes`` bytes.

    ``ub_bytes_per_element`` is the UB one element of a tile occupies across all
    queue buffers and scratch (e.g. 3 tensors x 2 buffers x 4 bytes = 24 for a
    double-buffered float32 ``z = x + y``).
    """
    if total < 1:
        raise ValueError("elementwise tiling needs at least one element")
    p = get_platform(platform)
    cores_avail = min(p.aiv_count, max_cores or p.aiv_count)
    per_block = BLOCK // elem_bytes if elem_bytes < BLOCK else 1
    blocks = -(-total // per_block)
    blocks_per_core = -(-blocks // cores_avail)
    block_len = blocks_per_core * per_block
    core_num = -(-total // block_len)
    fit = p.ub_size // ub_bytes_per_element                       # elements per tile UB can hold
    tile_len = min(fit, max(1, max_tile_bytes // elem_bytes)) // per_block * per_block
    if tile_len < per_block:
        raise ValueError(f"a tile needs {ub_bytes_per_element * per_block} bytes of UB; "
                         f"{p.name} has {p.ub_size}")
    tile_len = min(tile_len, block_len)
    tiling = ElementwiseTiling(total=total, block_len=block_len, tile_len=tile_len)
    return tiling, core_num
