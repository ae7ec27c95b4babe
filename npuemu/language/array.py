"""Kernel-local arrays of scalars (pyasc ``asc.language.core.array``).

``asc.array(asc.int32, 8)`` is a C array in the kernel's scalar memory:
``a[i]`` reads and ``a[i] = v`` writes an element (the index checked), and
``len(a)`` is its constant length.
"""
from __future__ import annotations

from typing import Sequence, overload

from .builtin import builtin, builtin_class
from .dtype import DataType

__all__ = ["Array", "array"]


@builtin_class
class Array:
    """The value ``asc.array`` returns; index it like a list."""

    def __getitem__(self, index: int) -> int | float: ...
    def __setitem__(self, index: int, value: int | float) -> None: ...


@overload
def array(dtype: DataType, length: int, fill_value: int | float | None = None) -> Array: ...
@overload
def array(dtype: DataType, values: Sequence[int | float]) -> Array: ...
@builtin
def array(dtype: DataType, length_or_values: int | Sequence[int | float],
          fill_value: int | float | None = None) -> Array:
    """A local array of ``length`` elements of ``dtype`` (all ``fill_value``, else uninitialised: npuemu
    fills them with 0), or holding ``values``.  ``length`` is a compile-time constant."""
