"""ListTensorDesc / TensorDesc: a kernel sums each tensor of a list of three 2-D tensors of different shapes,
described by a buffer npuemu.host.list_tensor_desc builds, against NumPy; and the list's checks (index, data
pointer outside the launch's GM, length / shape_size, a malformed buffer, a short shape buffer, get_shape past
the dimensions, get_desc without a shape buffer).
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.host import gm_address, list_tensor_desc

GOOD, INDEX, SMALL_SHAPE, DIM_INDEX = range(4)
SHAPES = [(5, 8), (1, 17), (8, 8)]


@asc.jit
def list_sum_kernel(desc: asc.GlobalAddress, a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                    out: asc.GlobalAddress, info: asc.GlobalAddress, nbytes: int, ntensors: int, case: int):
    ld = asc.ListTensorDesc(desc, nbytes, ntensors)
    og, ig = asc.GlobalTensor(), asc.GlobalTensor()
    og.set_global_buffer(out, 4)
    ig.set_global_buffer(info, 16)
    shape = asc.array(asc.uint64, 4)
    td = asc.TensorDesc(asc.float32)
    td.set_shape_addr(shape)
    n = ld.get_size()
    ig.set_value(12, n)
    for i in range(n):
        ld.get_desc(td, i)
        g = td.get_data_obj()
        total = 0.0
        for j in range(g.get_size()):
            total += g.get_value(j)
        og.set_value(i, total)
        ig.set_value(4 * i, td.get_dim())
        ig.set_value(4 * i + 1, td.get_index())
        ig.set_value(4 * i + 2, td.get_shape(0))
        ig.set_value(4 * i + 3, td.get_shape(1))
    pg = asc.GlobalTensor()
    pg.set_global_buffer(ld.get_data_ptr(2, asc.float32), 64)
    og.set_value(3, pg.get_value(63))                   # the last element of the third tensor
    if case == INDEX:
        ld.get_desc(td, n)
    if case == SMALL_SHAPE:
        small = asc.array(asc.uint64, 1)
        td2 = asc.TensorDesc(asc.float32)
        td2.set_shape_addr(small)
        ld.get_desc(td2, 0)
    if case == DIM_INDEX:
        ig.set_value(13, td.get_shape(2))


def arrays():
    a, b, c = (np.arange(np.prod(s), dtype=np.float32).reshape(s) * k + 1 for s, k in zip(SHAPES, (1, 3, -2)))
    return a, b, c


def run(case=GOOD, desc=None, nbytes=None, ntensors=3, **kw):
    a, b, c = arrays()
    if desc is None:
        desc = list_tensor_desc([(1, a.shape), (2, b.shape), (3, c.shape)])      # arguments 1, 2, 3 hold the data
    out, info = np.zeros(4, np.float32), np.zeros(16, np.int64)
    list_sum_kernel[1](desc, a, b, c, out, info, desc.size * 8 if nbytes is None else nbytes, ntensors, case, **kw)
    return (a, b, c), out, info


def test_list_tensor_desc_layout():
    buf = list_tensor_desc([(1, (1, 2, 3)), (2, (3, 4, 5))])
    assert buf.tolist() == [72, 3, 1, 2, 3, (1 << 32) | 3, 3, 4, 5, 2 << 32, 3 << 32]   # Ascend C's example
    assert list_tensor_desc([(4, (7,), 64)], pointers_only=True).tolist() == [24, 1 << 32, 0xFFFFFFFF,
                                                                              gm_address(4, 64)]


def test_sums_of_a_tensor_list(mode):
    (a, b, c), out, info = run(**mode)
    np.testing.assert_array_equal(out[:3], [a.sum(dtype=np.float32), b.sum(dtype=np.float32),
                                            c.sum(dtype=np.float32)])
    assert out[3] == c.ravel()[-1]
    assert info.tolist() == [2, 0, 5, 8, 2, 1, 1, 17, 2, 2, 8, 8, 3, 0, 0, 0]


@pytest.mark.parametrize("case, kw, cls, message", [
    (INDEX, {}, errors.BoundsError, r"ListTensorDesc index 3 is outside the 3 tensors of the list"),
    (SMALL_SHAPE, {}, errors.BoundsError, r"get_desc writes 2 shape values into a shape buffer of 1"),
    (DIM_INDEX, {}, errors.BoundsError, r"TensorDesc.get_shape\(2\) of a tensor with 2 dimensions"),
    (GOOD, {"ntensors": 4}, errors.ParamRangeError, r"ListTensorDesc shape_size 4 but the buffer lists 3 tensors"),
    (GOOD, {"nbytes": 64}, errors.ParamRangeError, r"ListTensorDesc length 64 bytes but the buffer spans 104"),
    (GOOD, {"desc": list_tensor_desc([(1, (5, 8)), (20, (1, 17)), (3, (8, 8))])}, errors.BoundsError,
     r"data pointer 0x1500000000 of tensor 1 is not an address of this launch's GM"),
    (GOOD, {"desc": np.array([40, 2, 5, 8, (1 << 32) | 2, 1, 17, 8 << 32, 9 << 32], np.uint64)},
     errors.ParamRangeError, r"buffer is malformed: ptr_offset 40 bytes does not fit 1 record\(s\) of dimension 2"),
], ids=["index", "shape-buffer", "get-shape", "shape-size", "length", "pointer", "malformed"])
def test_list_misuse_is_caught(case, kw, cls, message):
    with pytest.raises(cls, match=message):
        run(case, debug=True, **kw)


@asc.jit
def no_shape_buffer_kernel(desc: asc.GlobalAddress):
    ld = asc.ListTensorDesc(desc)
    td = asc.TensorDesc(asc.float32)
    ld.get_desc(td, 0)


def test_get_desc_needs_a_shape_buffer():
    with pytest.raises(errors.KernelTypeError, match=r"call desc.set_shape_addr\(buf\) with an asc.array"):
        no_shape_buffer_kernel[1](list_tensor_desc([(0, (4,))]))
