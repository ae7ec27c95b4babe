"""``ListTensorDesc`` / ``TensorDesc``: a GM buffer describing a list of tensors of dynamic shape.

The buffer is a run of 64-bit little-endian words (Ascend C's layout):

* word 0: ``ptr_offset``, the byte offset from the buffer's start to the
  array of data pointers;
* then one record per tensor: a word with the dimension count in its low 32
  bits and the tensor's index in its high 32 bits, then ``dim`` shape words
  (every record has the first record's ``dim``);
* then the data pointers, one word per tensor.

A list of pointers only has ``dim`` 0: word 1 holds the count in its high 32
bits, word 2 is ``0xffffffff``, and ``ptr_offset`` is 24.  The count is the
high half of word 1 when that is not 0, else one more than the index in the
last record (the word ``1 + dim`` words before the pointers), as the library
decodes it; the library's consistency checks (``ptr_offset`` against the
count, and ``length`` / ``shape_size`` when both are given) are applied.

A data pointer is a GM address of npuemu's virtual GM: the array argument
``k`` of the launch starts at ``(k + 1) * 2**32`` (``npuemu.host.gm_address``,
``npuemu.host.list_tensor_desc`` builds such buffers).  A pointer that is not
inside one of the launch's GM regions is reported when it is taken.  The
buffer is read directly (a host-written descriptor is what the DCache holds
too); it is not declared to the race checker.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from .datamove import check_gm
from .fault import Fault, register
from .linkage import instruction

F_LT_NOT_INIT = 2020
F_LT_BAD = 2021
F_LT_INDEX = 2022
F_LT_PTR = 2023
F_LT_CHECK = 2024
F_LT_SHAPE_BUF = 2025
F_LT_DIM_INDEX = 2026
F_LT_NO_SHAPES = 2027
F_LT_NO_DESC = 2028

U32 = 0xFFFFFFFF
GM_ADDRESS_SHIFT = 32           # npuemu's virtual GM: argument k starts at (k + 1) << 32 (isa/debug.py)

register({
    F_LT_NOT_INIT: (errors.QueueError,
                    lambda a, b, c, env: "ListTensorDesc used before init(data): it describes no buffer yet"),
    F_LT_BAD: (errors.ParamRangeError,
               lambda a, b, c, env: f"the ListTensorDesc buffer is malformed: ptr_offset {a} bytes does not fit "
                                    f"{c} record(s) of dimension {b} (see npuemu.host.list_tensor_desc)"),
    F_LT_INDEX: (errors.BoundsError,
                 lambda a, b, c, env: f"ListTensorDesc index {a} is outside the {b} tensors of the list"),
    F_LT_PTR: (errors.BoundsError,
               lambda a, b, c, env: f"data pointer {a:#x} of tensor {b} is not an address of this launch's GM "
                                    f"(argument k starts at (k + 1) << 32: see npuemu.host.gm_address)"),
    F_LT_CHECK: (errors.ParamRangeError,
                 lambda a, b, c, env: (f"ListTensorDesc shape_size {a} but the buffer lists {b} tensors" if c == 0
                                       else f"ListTensorDesc length {a} bytes but the buffer spans {b}")),
    F_LT_SHAPE_BUF: (errors.BoundsError,
                     lambda a, b, c, env: f"get_desc writes {a} shape values into a shape buffer of {b}"),
    F_LT_DIM_INDEX: (errors.BoundsError,
                     lambda a, b, c, env: f"TensorDesc.get_shape({a}) of a tensor with {b} dimensions"),
    F_LT_NO_SHAPES: (errors.ParamRangeError,
                     lambda a, b, c, env: "get_desc on a ListTensorDesc of data pointers only (dimension 0): it "
                                          "holds no shapes"),
    F_LT_NO_DESC: (errors.NullPointerError,
                   lambda a, b, c, env: "TensorDesc data pointer read before ListTensorDesc.get_desc filled it"),
})


@njit(cache=True)
def _word(g, rid, off, loc):
    """The little-endian 64-bit word at byte ``off`` of region ``g``."""
    check_gm(g, rid, off, 8, loc)
    w = 0
    for i in range(7, -1, -1):
        w = (w << 8) | g[off + i]
    return w


@njit(cache=True)
def _high(w):
    return (w >> 32) & U32


@instruction
def decode(g, rid, off, length, shape_size, loc):
    """``ListTensorDesc(data, length, shape_size)``: (dim, count, ptr_offset) of the buffer at (rid, off)."""
    ptroff = _word(g, rid, off, loc)
    w1 = _word(g, rid, off + 8, loc)
    dim = w1 & U32
    rec = 2 if dim == 0 else 1 + dim
    if ptroff < 8 * (1 + rec) or ptroff % 8 != 0:
        raise Fault(F_LT_BAD, loc, ptroff, dim, 0)
    count = _high(w1)
    if count == 0:
        count = _high(_word(g, rid, off + ptroff - 8 * rec, loc)) + 1
    if dim != 0 and count * rec * 8 != ptroff - 8:
        raise Fault(F_LT_BAD, loc, ptroff, dim, count)
    if dim == 0 and (ptroff != 24 or _word(g, rid, off + 16, loc) != U32):
        raise Fault(F_LT_BAD, loc, ptroff, dim, count)
    if length != U32 and shape_size != U32:
        if count != shape_size:
            raise Fault(F_LT_CHECK, loc, shape_size, count, 0)
        if length != ptroff + count * 8:
            raise Fault(F_LT_CHECK, loc, length, ptroff + count * 8, 1)
    check_gm(g, rid, off + ptroff, count * 8, loc)
    return dim, count, ptroff


@njit(cache=True)
def _pointer(g, rid, off, count, ptroff, index, nregions, loc):
    if count < 0:
        raise Fault(F_LT_NOT_INIT, loc, 0, 0, 0)
    if index < 0 or index >= count:
        raise Fault(F_LT_INDEX, loc, index, count, 0)
    w = _word(g, rid, off + ptroff + 8 * index, loc)
    region = _high(w)
    if region < 1 or region > nregions:
        raise Fault(F_LT_PTR, loc, w, index, 0)
    return region - 1, w & U32


@instruction
def data_ptr(g, rid, off, count, ptroff, index, nregions, loc):
    """``get_data_ptr(index)``: (region id, byte offset) of tensor ``index``'s data."""
    return _pointer(g, rid, off, count, ptroff, index, nregions, loc)


@instruction
def size(count, loc):
    """``get_size()``: the number of tensors."""
    if count < 0:
        raise Fault(F_LT_NOT_INIT, loc, 0, 0, 0)
    return count


@instruction
def get_desc(g, rid, off, dim, count, ptroff, index, nregions, shape, loc):
    """``get_desc(desc, index)``: writes tensor ``index``'s shape into ``shape``; returns its data pointer."""
    if count < 0:
        raise Fault(F_LT_NOT_INIT, loc, 0, 0, 0)
    if dim == 0:
        raise Fault(F_LT_NO_SHAPES, loc, 0, 0, 0)
    drid, doff = _pointer(g, rid, off, count, ptroff, index, nregions, loc)
    if dim > shape.size:
        raise Fault(F_LT_SHAPE_BUF, loc, dim, shape.size, 0)
    rec = off + 8 + index * (1 + dim) * 8
    for i in range(dim):
        shape[i] = _word(g, rid, rec + 8 + 8 * i, loc)
    return drid, doff


@instruction
def shape_at(shape, dim, i, loc):
    """``TensorDesc.get_shape(i)``."""
    if i < 0 or i >= dim:
        raise Fault(F_LT_DIM_INDEX, loc, i, dim, 0)
    return np.int64(shape[i])


@instruction
def elements(shape, dim, loc):
    """The element count of a described tensor (the product of its shape)."""
    n = np.int64(1)
    for i in range(dim):
        n *= np.int64(shape[i])
    return n


@instruction
def desc_region(rid, loc):
    """A TensorDesc's data region, which ``get_desc`` must have filled."""
    if rid < 0:
        raise Fault(F_LT_NO_DESC, loc, 0, 0, 0)
    return rid
