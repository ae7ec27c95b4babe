"""Element access of ``asc.array`` local arrays, the index checked.  Fault codes 1920-1929."""
from __future__ import annotations

from numba import njit

from .. import errors
from .fault import Fault, register

F_INDEX = 1920

register({
    F_INDEX: (errors.BoundsError, lambda a, b, c, env: f"index {a} of an asc.array of {b} elements"),
})


@njit(cache=True)
def item(arr, i, loc):
    if i < 0 or i >= arr.shape[0]:
        raise Fault(F_INDEX, loc, i, arr.shape[0], 0)
    return arr[i]


@njit(cache=True)
def set_item(arr, i, value, loc):
    if i < 0 or i >= arr.shape[0]:
        raise Fault(F_INDEX, loc, i, arr.shape[0], 0)
    arr[i] = value
