"""Reads of tiling-data arrays (``ArrayField`` members of struct arguments).

A struct argument's array reaches the kernel as a small read-only parameter
array (int64 or float32 elements).  An element read with a run-time index
goes through :func:`array_item`, which checks the index: a C kernel would
read past the array into the next field, npuemu reports the line instead.
Constant indices are checked at compile time and read directly.
Fault codes 1300-1309 (tiling data).
"""
from __future__ import annotations

from numba import njit

from .. import errors
from .fault import Fault, register

F_ARRAY_INDEX = 1300

register({
    F_ARRAY_INDEX: (errors.BoundsError,
                    lambda a, b, c, env: f"index {a} of a tiling-data array of {b} elements"),
})


@njit(cache=True)
def array_item(arr, i, loc):
    """``arr[i]``, with ``0 <= i < len(arr)`` checked."""
    if i < 0 or i >= arr.shape[0]:
        raise Fault(F_ARRAY_INDEX, loc, i, arr.shape[0], 0)
    return arr[i]
