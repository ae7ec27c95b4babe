"""data_copy with SliceInfo lists: a 2-D slice GM -> UB and a differently strided one UB -> GM, against NumPy
slicing, and the slice checks (burst_len outside dimension 0, rows that do not pair up, a misaligned UB burst,
GM out of bounds, an unordered read at check level full).

One kernel holds every case, picked by ``case``; the slice fields are run-time values.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

ROWS, COLS = 8, 64                  # x and y: 8 rows of 64 float32; dimension 0 is the column
UB_ROW = 32                         # the UB block: 4 rows of 32 floats (128 bytes)
GOOD, BAD_BURST, ROW_MISMATCH, MISALIGNED, OUT_OF_BOUNDS, NO_SYNC, ZERO_SHAPE = range(7)


@asc.jit
def slice_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, case: int):
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, ROWS * COLS)
    yg.set_global_buffer(y, ROWS * COLS)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 4 * UB_ROW * 4)
    t = buf.get(asc.float32)
    row0 = 1
    burst1 = 1
    src_rows_end = 7
    ub_start = 0
    shape0 = COLS
    if case == BAD_BURST:
        burst1 = 2
    if case == ROW_MISMATCH:
        src_rows_end = 5
    if case == MISALIGNED:
        ub_start = 4
    if case == OUT_OF_BOUNDS:
        row0 = 3
        src_rows_end = 9
    if case == ZERO_SHAPE:
        shape0 = 0
    # x rows 1, 3, 5, 7; in each, pieces of 8 floats (one 32-byte burst) with 8 left out: columns 16, 32, 48
    asc.data_copy(t, xg,
                  [asc.SliceInfo(ub_start, 23, 0, 1, UB_ROW), asc.SliceInfo(0, 3, 0, 1, 4)],
                  [asc.SliceInfo(16, 63, 8, 1, shape0), asc.SliceInfo(row0, src_rows_end, 1, burst1, ROWS)], 2)
    if case != NO_SYNC:
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    # back to y rows 0, 2, 4, 6, the pieces at columns 8, 21, 34 (5 elements left out: an unaligned GM gap)
    asc.data_copy(yg, t,
                  [asc.SliceInfo(8, 47, 5, 1, COLS), asc.SliceInfo(0, 6, 1, 1, ROWS)],
                  [asc.SliceInfo(0, 23, 0, 1, UB_ROW), asc.SliceInfo(0, 3, 0, 1, 4)], 2)


def reference(x: np.ndarray) -> np.ndarray:
    rows = x.reshape(ROWS, COLS)[1::2]
    ub = np.concatenate([rows[:, c:c + 8] for c in (16, 32, 48)], axis=1)       # 4 x 24
    y = np.zeros((ROWS, COLS), np.float32)
    for b, c in enumerate((8, 21, 34)):
        y[0::2, c:c + 8] = ub[:, 8 * b:8 * b + 8]
    return y.ravel()


def run(case, **kw):
    x = np.arange(ROWS * COLS, dtype=np.float32) * 0.5 - 7
    y = np.zeros(ROWS * COLS, np.float32)
    slice_kernel[1](x, y, case, **kw)
    return x, y


@pytest.mark.parametrize("check", ["default", "full"])
def test_slices_move_like_numpy_slicing(mode, check):
    x, y = run(GOOD, check=check, **mode)
    np.testing.assert_array_equal(y, reference(x))


@pytest.mark.parametrize("case, cls, message", [
    (BAD_BURST, errors.ParamRangeError, r"source \(slice_list2\) SliceInfo of dimension 1: burst_len = 2, but only "
                                        r"dimension 0 has bursts"),
    (ROW_MISMATCH, errors.ParamRangeError, r"the slices select 4 rows of the destination but 3 of the source"),
    (MISALIGNED, errors.AlignmentError, r"destination local tensor address 16 is not 32-byte aligned"),
    (OUT_OF_BOUNDS, errors.BoundsError, r"the copy touches \d+ elements of a GlobalTensor that holds 512"),
    (ZERO_SHAPE, errors.ParamRangeError, r"shape_value 0 .* give every dimension's shape_value"),
], ids=["burst", "rows", "misaligned", "bounds", "shape"])
def test_bad_slices_are_caught(case, cls, message):
    with pytest.raises(cls, match=message):
        run(case, debug=True)


def test_unordered_slice_copies_race():
    with pytest.raises(errors.RaceError, match=r"RAW: MTE3 read of UB bytes .* races with the MTE2 write"):
        run(NO_SYNC, check="full", debug=True)


@asc.jit
def slice_dims_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg, [asc.SliceInfo(0, 7, 0, 1, 8)], [asc.SliceInfo(0, 7, 0, 1, 8)], 2)


def test_lists_shorter_than_dim_value_are_refused():
    with pytest.raises(errors.KernelTypeError, match=r"slice_list1 has 1 SliceInfo but dim_value is 2"):
        slice_dims_kernel[1](np.zeros(64, np.float32))


@asc.jit
def slice_int64_kernel(x: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 512)
    t = buf.get(asc.int64)
    asc.data_copy(t, xg, [asc.SliceInfo(0, 7, 0, 1, 8)], [asc.SliceInfo(0, 7, 0, 1, 8)], 1)


def test_slice_copies_refuse_64_bit_types():
    with pytest.raises(errors.KernelTypeError, match=r"data_copy with slice lists does not support int64"):
        slice_int64_kernel[1](np.zeros(64, np.int64))
