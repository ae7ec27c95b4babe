"""Tiling for row-wise kernels (reductions, softmax, norms) over a (rows, cols) matrix.

Rows are split over cores (``rows_per_core`` each, the last core takes the
rest); a core moves ``tile_rows`` rows at a time into UB, each row padded to a
whole number of 32-byte blocks (``cols_padded`` elements, so every row starts
32-byte aligned, as vector instructions require).  A row must fit in UB; wider
rows would need a column split, which these kernels do not do.
"""
from __future__ import annotations

from npuemu.asc import Field, KnownTypes, Struct
from npuemu.runtime.platform import Platform, get_platform

BLOCK = 32


class RowTiling(Struct):
    """Tiling data of the row-wise kernels."""

    rows = Field(KnownTypes.int64, 0)
    cols = Field(KnownTypes.int64, 0)
    cols_padded = Field(KnownTypes.int64, 0)   # row stride in UB, in elements
    rows_per_core = Field(KnownTypes.int64, 0)
    tile_rows = Field(KnownTypes.int64, 0)     # rows per UB tile
    eps = Field(KnownTypes.float32, 0.0)


def row_tiling(rows: int, cols: int, elem_bytes: int, ub_bytes_per_row_element: int, *,
               fixed_ub_bytes: int = 0, platform: Platform | str | None = None, max_cores: int | None = None,
               eps: float = 0.0, max_tile_bytes: int = 32 * 1024) -> tuple[RowTiling, int]:
    """Tiling data and core count for ``rows`` x ``cols``.

    ``ub_bytes_per_row_element``: UB bytes one element of a tile row needs across
    queue buffers and scratch; ``fixed_ub_bytes``: UB needed regardless of the
    tile (per-core vectors such as gamma/beta and reduction work space).
    """
    if rows < 1 or cols < 1:
        raise ValueError("row tiling needs at least one row and one column")
    p = get_platform(platform)
    per_block = max(1, BLOCK // elem_bytes)
    cols_padded = -(-cols // per_block) * per_block
    cores = min(p.aiv_count, max_cores or p.aiv_count, rows)
    rows_per_core = -(-rows // cores)
    cores = -(-rows // rows_per_core)
    room = p.ub_size - fixed_ub_bytes
    row_bytes = cols_padded * ub_bytes_per_row_element
    if row_bytes > room:
        raise ValueError(f"a row of {cols} elements needs {row_bytes} bytes of UB "
                         f"({room} available on {p.name}); split the columns first")
    tile_rows = max(1, min(rows_per_core, room // row_bytes, max(1, max_tile_bytes // (cols_padded * elem_bytes))))
    tiling = RowTiling(rows=rows, cols=cols, cols_padded=cols_padded, rows_per_core=rows_per_core,
                       tile_rows=tile_rows, eps=eps)
    return tiling, cores
