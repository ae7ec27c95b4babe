"""Kernel arguments: what each Python value becomes, and the GM regions behind arrays.

Arrays are used in place: a C-contiguous NumPy array (or torch CPU tensor) is
viewed as bytes and becomes one GM region, so a kernel's writes land directly
in the caller's array.  Arrays that are not C-contiguous are copied in and
back out around the launch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LaunchError
from ..language import dtype as dt
from ..language.struct import Struct


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


@dataclass(frozen=True)
class ArgKind:
    """The static description of one kernel argument (part of the specialisation key)."""

    kind: str                      # 'gm' | 'int' | 'float' | 'bool' | 'struct' | 'const'
    dtype: Any = None              # DataType for gm; struct class for struct; value type for const
    const: Any = None


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


def classify(name: str, value: Any, constexpr: bool) -> ArgKind:
    if constexpr:
        if isinstance(value, np.generic):
            value = value.item()
        try:
            hash(value)
        except TypeError:
            raise LaunchError(f"ConstExpr argument '{name}' must be hashable, got {type(value).__name__}") from None
        # the type is part of the key: 1, 1.0 and True are equal but lower differently
        return ArgKind("const", dtype=type(value), const=value)
    arr = as_array(value)
    if arr is not None:
        return ArgKind("gm", dtype=arr[1])
    if isinstance(value, Struct):
        return ArgKind("struct", dtype=type(value))
    if isinstance(value, (bool, np.bool_)):
        return ArgKind("bool")
    if isinstance(value, (int, np.integer)):
        return ArgKind("int")
    if isinstance(value, (float, np.floating)):
        return ArgKind("float")
    raise LaunchError(f"kernel argument '{name}' has unsupported type {type(value).__name__}: pass NumPy "
                      f"arrays, torch CPU tensors, int, float, bool, a Struct or an asc.ConstExpr value")


@dataclass
class Region:
    """One GM region of a launch: a byte view of an argument array (or an npuemu buffer)."""

    name: str
    bytes: np.ndarray               # uint8, 1-D, C-contiguous
    dtype: dt.DataType
    writeback: np.ndarray | None = None   # original non-contiguous array to copy results into
    initialized: bool = True        # False: a kernel must write bytes before reading them

    def finish(self) -> None:
        if self.writeback is not None:
            self.writeback[...] = self.bytes.view(self.writeback.dtype).reshape(self.writeback.shape)


def region_for(name: str, value: Any) -> Region:
    arr, kdt = as_array(value)  # type: ignore[misc]
    initialized = not isinstance(value, GMBuffer) or value.initialized
    if not arr.flags.writeable:
        raise LaunchError(f"argument '{name}' is a read-only array; kernels may write any GM argument")
    if arr.flags.c_contiguous:
        return Region(name, arr.reshape(-1).view(np.uint8), kdt, initialized=initialized)
    tmp = np.ascontiguousarray(arr)
    return Region(name, tmp.reshape(-1).view(np.uint8), kdt, writeback=arr, initialized=initialized)
