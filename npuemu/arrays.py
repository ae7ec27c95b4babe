"""Array-like kernel arguments: NumPy arrays, torch CPU tensors and ``npuemu.gm_buffer``.

A C-contiguous array is used in place as a GM region: a kernel's writes land
directly in the caller's array (see :mod:`npuemu.runtime.args`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .errors import LaunchError
from .language import dtype as dt


class GMBuffer:
    """An array passed to a kernel as a given kernel dtype (reinterpreting its bytes).

    The documented way to pass bfloat16 data without ``ml_dtypes``:
    ``npuemu.gm_buffer(bits_uint16, asc.bfloat16)``.  ``initialized=False``
    says the contents are garbage as far as the kernel may assume (a
    workspace): at check level ``full`` reading bytes before the kernel has
    written them is an :class:`~npuemu.errors.UninitializedReadError`.
    """

    def __init__(self, array: np.ndarray, dtype: dt.DataType | None = None, initialized: bool = True):
        if not isinstance(array, np.ndarray):
            raise LaunchError("gm_buffer needs a NumPy array")
        if dtype is None:
            try:
                dtype = dt.from_numpy(array.dtype)
            except TypeError:
                raise LaunchError(f"arrays of dtype {array.dtype} cannot be passed to kernels") from None
        if not isinstance(dtype, dt.DataType) or dtype is dt.void:
            raise LaunchError(f"gm_buffer needs a kernel data type (asc.bfloat16, ...), got {dtype!r}")
        if array.dtype.itemsize != dtype.sizeof() and array.nbytes % dtype.sizeof():
            raise LaunchError(f"an array of {array.nbytes} bytes cannot hold whole {dtype.name} elements")
        self.array = array
        self.dtype = dtype
        self.initialized = initialized

    def __repr__(self) -> str:
        state = "" if self.initialized else ", uninitialized"
        return f"gm_buffer({self.array.dtype}{list(self.array.shape)} as {self.dtype.name}{state})"


def gm_buffer(array: np.ndarray, dtype: dt.DataType | None = None, *, initialized: bool = True) -> GMBuffer:
    """Pass ``array``'s bytes to a kernel as elements of ``dtype`` (default: the array's own dtype).

    ``initialized=False`` marks a buffer whose contents the kernel must not
    read before writing them (a workspace, an output buffer); check level
    ``full`` reports such reads.
    """
    return GMBuffer(array, dtype, initialized)


def _torch_to_numpy(value: Any) -> tuple[np.ndarray, dt.DataType] | None:
    mod = type(value).__module__
    if not mod.startswith("torch"):
        return None
    import torch  # only reached when the user passed a torch tensor
    if value.device.type != "cpu":
        raise LaunchError(f"torch tensor on device '{value.device}': npuemu runs kernels on CPU tensors")
    if value.dtype == torch.bfloat16:
        return value.detach().view(torch.int16).numpy().view(np.uint16), dt.bfloat16
    arr = value.detach().numpy()
    return arr, dt.from_numpy(arr.dtype)


def as_array(value: Any) -> tuple[np.ndarray, dt.DataType] | None:
    """The array and kernel dtype behind an array-like argument, or None for scalars."""
    if isinstance(value, GMBuffer):
        return value.array, value.dtype
    if isinstance(value, np.ndarray):
        try:
            return value, dt.from_numpy(value.dtype)
        except TypeError:
            raise LaunchError(f"arrays of dtype {value.dtype} cannot be passed to kernels") from None
    return _torch_to_numpy(value)
