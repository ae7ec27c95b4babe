"""Fault messages say what the kernel did, in the kernel's own terms."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc


@asc.jit
def copy_tail(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, start: int):
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg[start:], 64)         # 64 elements from a slice that holds n - start
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg[start:], t, 64)


@asc.jit
def unsized_read(x: asc.GlobalAddress, y: asc.GlobalAddress, i: int):
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg.set_global_buffer(y, 1)
    yg.set_value(0, xg.get_value(i))


def test_a_slice_past_its_end_names_where_it_starts(mode):
    x = np.arange(6160, dtype=np.float32)
    with pytest.raises(npuemu.BoundsError) as info:
        copy_tail[1](x, np.zeros_like(x), 6160, 6144, **mode)
    text = str(info.value)
    assert "touches 64 elements of a GlobalTensor that holds 16: it starts at element 6144 of GM argument 'x' " \
           "(24640 bytes)" in text and "set_global_buffer size less the offset of any slice" in text
    assert info.value.buffer == "x"
    y = np.zeros_like(x)
    copy_tail[1](x, y, 6160, 6096, **mode)                 # the slice that fits
    np.testing.assert_array_equal(y[6096:], x[6096:])


def test_a_negative_index_into_a_tensor_without_size(mode):
    with pytest.raises(npuemu.BoundsError, match=r"element -1: a negative index \(the GlobalTensor has no size"):
        unsized_read[1](np.zeros(8, np.float32), np.zeros(1, np.float32), -1, **mode)
