"""Tiling for row-wise kernels (reductions, softmax, norms) over a (rows, cols) matrix.

Rows are split over the vector cores with the tail-core rule of the
elementwise tiling at a granularity of one row: the first ``former_num`` cores
take ``former_rows`` rows, the others ``tail_rows = former_rows - 1`` (or all
cores the same when the rows divide evenly), and no core is empty.

Inside a core, rows move into UB a tile at a time, each row padded to a whole
number of 32-byte blocks (``cols_padded`` elements, so every row starts
32-byte aligned, as vector instructions require).  Columns are split into
tiles of ``col_tile_len`` elements (``col_tile_num`` of them, the last one
shorter); when a whole padded row fits in UB there is one column tile and
``tile_rows`` rows share a UB tile.  Kernels that cannot combine partial rows
ask for whole rows (attribute ``split_cols=False``), and the tiling fails with
a clear message for rows that do not fit.

UB budget attributes (bytes): ``tile_bytes_per_element`` (queues: what one
element of a tile costs across its input and output buffers),
``scratch_bytes_per_col`` (per-column work vectors, e.g. a float32 copy of a
row) and ``fixed_bytes``.
"""
from __future__ import annotations

from npuemu.asc import Field, KnownTypes, Struct
from npuemu.host.platform_api import CoreMemType
from npuemu.host.tiling import TilingContext, TilingError, TilingResult

BLOCK = 32
MAX_TILE_BYTES = 32 * 1024       # a row tile moves at most 32 KiB of input


class RowTiling(Struct):
    """Tiling data of the row-wise kernels."""

    rows = Field(KnownTypes.uint32)
    cols = Field(KnownTypes.uint32)
    cols_padded = Field(KnownTypes.uint32)     # row stride in UB, in elements (whole 32-byte blocks)
    former_num = Field(KnownTypes.uint32)      # cores 0 .. former_num - 1 take former_rows rows
    former_rows = Field(KnownTypes.uint32)
    tail_rows = Field(KnownTypes.uint32)       # rows of each remaining core
    tile_rows = Field(KnownTypes.uint32)       # rows per UB tile
    col_tile_len = Field(KnownTypes.uint32)    # columns per UB tile (a multiple of one block)
    col_tile_num = Field(KnownTypes.uint32)    # column tiles per row (1: whole rows)
    eps = Field(KnownTypes.float32, 0.0)


def row_split(rows: int, cores: int) -> tuple[int, int, int, int]:
    """(cores used, former_num, former_rows, tail_rows): ``rows`` over at most ``cores`` cores."""
    n = min(rows, cores)
    return n, rows % n, -(-rows // n), rows // n


def row_tiling(ctx: TilingContext) -> TilingResult:
    """Tiling of a row-wise op on input 0, a (rows, cols) matrix (higher ranks fold into rows)."""
    x = ctx.input(0)
    if len(x.shape) < 1 or x.size < 1:
        raise TilingError("row tiling needs at least one row and one column")
    cols = x.shape[-1]
    rows = x.size // cols
    per_block = max(1, BLOCK // x.itemsize)
    cols_padded = -(-cols // per_block) * per_block
    pa = ctx.platform_ascendc()
    n, former_num, former_rows, tail_rows = row_split(rows, pa.get_core_num_aiv())

    per_elem = int(ctx.attr("tile_bytes_per_element", 2 * x.itemsize))
    per_col = int(ctx.attr("scratch_bytes_per_col", 0))
    room = pa.get_core_mem_size(CoreMemType.UB) - int(ctx.attr("fixed_bytes", 0))
    row_bytes = cols_padded * (per_elem + per_col)
    if row_bytes <= room:
        col_tile_len, col_tile_num = cols_padded, 1
        by_tile = max(1, int(ctx.attr("max_tile_bytes", MAX_TILE_BYTES)) // (cols_padded * x.itemsize))
        tile_rows = max(1, min(former_rows, (room - cols_padded * per_col) // (cols_padded * per_elem), by_tile))
    elif ctx.attr("split_cols", False):
        col_tile_len = room // (per_elem + per_col) // per_block * per_block
        if col_tile_len < per_block:
            raise TilingError(f"a column tile of one block needs {per_block * (per_elem + per_col)} bytes of UB; "
                              f"{ctx.platform.name} has {room}")
        col_tile_num = -(-cols // col_tile_len)
        tile_rows = 1
    else:
        raise TilingError(f"a row of {cols} elements needs {row_bytes} bytes of UB ({room} available on "
                          f"{ctx.platform.name}) and this kernel does not split rows into column tiles")
    data = RowTiling(rows=rows, cols=cols, cols_padded=cols_padded, former_num=former_num, former_rows=former_rows,
                     tail_rows=tail_rows, tile_rows=tile_rows, col_tile_len=col_tile_len, col_tile_num=col_tile_num,
                     eps=float(ctx.attr("eps", 0.0)))
    return TilingResult(block_dim=n, tiling_data=data)
