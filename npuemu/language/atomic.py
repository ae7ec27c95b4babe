"""Atomic writes to GM (Ascend C ``SetAtomicAdd``/``Max``/``Min``/``Type``/``None``, ``SetStoreAtomicConfig``).

Each core has a store-atomic config register: an :class:`AtomicDtype` and an
operation.  While the type is not ``ATOMIC_NONE``, every data movement whose
destination is GM -- ``data_copy`` / ``data_copy_pad`` from UB (MTE3) and
``fixpipe`` from L0C (FIX) -- adds its elements to (or keeps the max / min
with) the elements already in GM instead of overwriting them.  The moved data
must be of the atomic type.

* ``set_atomic_add(dtype)``, ``set_atomic_max(dtype)``,
  ``set_atomic_min(dtype)``: operation and type; without ``dtype`` only the
  operation (the type stays, so atomics stay off after ``set_atomic_none``).
* ``set_atomic_type(dtype)``: the type only.
* ``set_atomic_none()``: plain stores again (type ``ATOMIC_NONE``, operation
  sum).
* ``set_store_atomic_config(atomic_type, atomic_op)`` /
  ``get_store_atomic_config() -> (atomic_type, atomic_op)``: the register
  itself; operation 0 is sum, and npuemu reports max as 1 and min as 2
  (assumed: the documents define only sum).

Numerics, the lock that keeps parallel cores from losing updates, and every
assumption: :mod:`npuemu.isa.atomic`.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Optional, overload

from .builtin import builtin, document_dtypes
from .dtype import DataType, bfloat16, float16, float32, int8, int16, int32

__all__ = ["set_atomic_add", "set_atomic_max", "set_atomic_min", "set_atomic_none", "set_atomic_type",
           "set_store_atomic_config", "get_store_atomic_config", "AtomicDtype", "AtomicOp"]


class AtomicDtype(IntEnum):
    """The type field of the store-atomic config register (``AscendC::AtomicDtype``)."""

    ATOMIC_NONE = 0
    ATOMIC_F32 = 1
    ATOMIC_F16 = 2
    ATOMIC_S16 = 3
    ATOMIC_S32 = 4
    ATOMIC_S8 = 5
    ATOMIC_BF16 = 6


class AtomicOp(IntEnum):
    """The operation field of the store-atomic config register (``AscendC::AtomicOp``)."""

    ATOMIC_SUM = 0


# the data type of each AtomicDtype
ATOMIC_DTYPES = {AtomicDtype.ATOMIC_F32: float32, AtomicDtype.ATOMIC_F16: float16,
                 AtomicDtype.ATOMIC_S16: int16, AtomicDtype.ATOMIC_S32: int32, AtomicDtype.ATOMIC_S8: int8,
                 AtomicDtype.ATOMIC_BF16: bfloat16}


def atomic_dtype(d: DataType | None) -> int:
    """The AtomicDtype value of data type ``d`` (-1: atomics do not take it)."""
    for code, t in ATOMIC_DTYPES.items():
        if t is d:
            return int(code)
    return -1


@overload
def set_atomic_add() -> None: ...
@overload
def set_atomic_add(dtype: DataType) -> None: ...


@builtin
def set_atomic_add(dtype: Optional[DataType] = None) -> None:
    """Following movements to GM add their elements to GM's (``AscendC::SetAtomicAdd<T>``); the
    compile-time ``dtype`` sets the atomic type too."""


@overload
def set_atomic_max() -> None: ...
@overload
def set_atomic_max(dtype: DataType) -> None: ...


@builtin
def set_atomic_max(dtype: Optional[DataType] = None) -> None:
    """Following movements to GM keep the larger of their elements and GM's (``AscendC::SetAtomicMax<T>``)."""


@overload
def set_atomic_min() -> None: ...
@overload
def set_atomic_min(dtype: DataType) -> None: ...


@builtin
def set_atomic_min(dtype: Optional[DataType] = None) -> None:
    """Following movements to GM keep the smaller of their elements and GM's (``AscendC::SetAtomicMin<T>``)."""


@builtin
def set_atomic_none() -> None:
    """Following movements to GM overwrite it again (``AscendC::SetAtomicNone``)."""


@builtin
def set_atomic_type(dtype: DataType) -> None:
    """Set the atomic type and keep the operation (``AscendC::SetAtomicType<T>``)."""


@builtin
def set_store_atomic_config(atomic_type: AtomicDtype, atomic_op: AtomicOp) -> None:
    """Write the store-atomic config register (``AscendC::SetStoreAtomicConfig<type, op>``); both are
    compile-time enum members."""


@builtin
def get_store_atomic_config() -> tuple[int, int]:
    """``(atomic_type, atomic_op)`` of the store-atomic config register (``AscendC::GetStoreAtomicConfig``);
    operation 0 is sum, 1 max and 2 min."""


# the types each setter takes on Atlas A2/A3 (SetAtomicType's list; SetAtomicAdd/Max/Min name the same)
DTYPES = {set_atomic_add: (int8, int16, float16, bfloat16, int32, float32),
          set_atomic_max: (int8, int16, float16, bfloat16, int32, float32),
          set_atomic_min: (int8, int16, float16, bfloat16, int32, float32),
          set_atomic_type: (int8, int16, float16, bfloat16, int32, float32)}
document_dtypes(DTYPES)
