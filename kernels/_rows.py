"""Kernel-language helpers for row-wise kernels: moving row tiles and per-row statistics.

A tile of ``n`` rows of ``cols`` elements lands in UB with each row padded to a
32-byte boundary (``data_copy_pad`` with one block per row), so row ``j``
starts at element ``j * cols_padded`` and every row is a valid vector operand.
"""
from __future__ import annotations

import npuemu.asc as asc
from npuemu.tiling.rows import RowTiling


@asc.jit
def core_rows(t: RowTiling):
    """(first row, row count) of this core: cores below ``former_num`` take ``former_rows``, the rest ``tail_rows``."""
    idx = asc.get_block_idx()
    if idx < t.former_num:
        first = idx * t.former_rows
        count = t.former_rows
    else:
        first = t.former_num * t.former_rows + (idx - t.former_num) * t.tail_rows
        count = t.tail_rows
    return first, count


@asc.jit
def load_rows(dst: asc.LocalTensor, src: asc.GlobalTensor, n: int, cols: int):
    asc.data_copy_pad(dst, src, asc.DataCopyExtParams(n, cols * src.dtype.sizeof(), 0, 0, 0),
                      asc.DataCopyPadExtParams(src.dtype, False, 0, 0, 0))


@asc.jit
def store_rows(dst: asc.GlobalTensor, src: asc.LocalTensor, n: int, cols: int):
    asc.data_copy_pad(dst, src, asc.DataCopyExtParams(n, cols * src.dtype.sizeof(), 0, 0, 0))


@asc.jit
def read_scalar(t: asc.LocalTensor):
    """Element 0 of ``t`` on the scalar unit, after the vector unit has written it."""
    asc.set_flag(asc.HardEvent.V_S, 0)
    asc.wait_flag(asc.HardEvent.V_S, 0)
    return t.get_value(0)


@asc.jit
def row_sum(work: asc.LocalTensor, tmp: asc.LocalTensor, row: asc.LocalTensor, cols: int):
    """Sum of the first ``cols`` elements of ``row`` (hardware reduction order)."""
    asc.reduce_sum(tmp, row, work, cols)
    return read_scalar(tmp)


@asc.jit
def row_max(work: asc.LocalTensor, tmp: asc.LocalTensor, row: asc.LocalTensor, cols: int):
    asc.reduce_max(tmp, row, work, cols)
    return read_scalar(tmp)


@asc.jit
def rsqrt_scalar(tmp: asc.LocalTensor, value: float):
    """``1 / sqrt(value)`` computed by the vector unit (the scalar unit has no square root)."""
    asc.duplicate(tmp, value, 8)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    asc.rsqrt(tmp, tmp, 8)
    return read_scalar(tmp)
