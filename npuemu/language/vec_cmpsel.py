"""Compare and select (Ascend C 比较与选择).

* ``compare(dst, src0, src1, cmp_mode, count)`` and the level-0 form
  ``compare(dst, src0, src1, cmp_mode, mask, repeat_times, repeat_params)``:
  one bit per element into a uint8/int8 ``dst``, little-endian; int32 only
  with ``CMPMODE.EQ``.  ``count * sizeof(T)`` must be a multiple of 256 bytes.
* ``compare(src0, src1, cmp_mode, mask, repeat_params)``: one repeat into the
  128-bit CMPMASK register (float16 and float32); ``get_cmp_mask(dst)`` /
  ``set_cmp_mask(src)`` move the register to / from 16 bytes of UB.
* ``compare_scalar(dst, src0, src1_scalar, cmp_mode, ...)``: the same against a
  scalar (level-0 form with ``UnaryRepeatParams``).
* ``select(dst, sel_mask, src0, src1, sel_mode, count | mask, repeat_times,
  repeat_params)``: ``src0`` where the ``sel_mask`` bit is 1, else ``src1`` (a
  tensor, or a scalar with ``SelMode.VSEL_TENSOR_SCALAR_MODE``).  Register
  forms: ``select(dst, sel_mask, src0, repeat_times, repeat_params)`` (scalar
  from CMPMASK) and ``select(dst, src0, src1, repeat_times=...,
  repeat_params=..., sel_mode=...)`` (bits or mask address from CMPMASK); both
  use the vector mask register.

The data types of the compared and selected tensors are :data:`DTYPES`
(listed in each instruction's docstring).
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import float16, float32, int32
from .enums import CMPMODE, SelMode
from .params import BinaryRepeatParams, UnaryRepeatParams

__all__ = ["compare", "compare_scalar", "get_cmp_mask", "set_cmp_mask", "select"]


@overload
def compare(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, cmp_mode: CMPMODE, count: int) -> None: ...
@overload
def compare(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, cmp_mode: CMPMODE, mask: int, repeat_times: int,
            repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def compare(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, cmp_mode: CMPMODE, mask: list[int],
            repeat_times: int, repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def compare(src0: LocalTensor, src1: LocalTensor, cmp_mode: CMPMODE, mask: int, repeat_params: BinaryRepeatParams,
            is_set_mask: bool = True) -> None: ...
@overload
def compare(src0: LocalTensor, src1: LocalTensor, cmp_mode: CMPMODE, mask: list[int], repeat_params: BinaryRepeatParams,
            is_set_mask: bool = True) -> None: ...
@builtin
def compare(*args: Any, **kwargs: Any) -> None:
    """Element-wise comparison into a bit mask or CMPMASK (``AscendC::Compare``)."""


@overload
def compare_scalar(dst: LocalTensor, src0: LocalTensor, src1_scalar: int | float, cmp_mode: CMPMODE,
                   count: int) -> None: ...
@overload
def compare_scalar(dst: LocalTensor, src0: LocalTensor, src1_scalar: int | float, cmp_mode: CMPMODE, mask: int,
                   repeat_times: int, repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def compare_scalar(dst: LocalTensor, src0: LocalTensor, src1_scalar: int | float, cmp_mode: CMPMODE, mask: list[int],
                   repeat_times: int, repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def compare_scalar(dst: LocalTensor, src0: LocalTensor, src1_scalar: int | float, cmp_mode: CMPMODE, *args: Any,
                   **kwargs: Any) -> None:
    """Element-wise comparison with a scalar into a bit mask (``AscendC::CompareScalar``)."""


@builtin
def get_cmp_mask(dst: LocalTensor) -> None:
    """Copy the 128-bit CMPMASK register to the first 16 bytes of ``dst`` (``AscendC::GetCmpMask``)."""


@builtin
def set_cmp_mask(src: LocalTensor) -> None:
    """Load the 128-bit CMPMASK register from the first 16 bytes of ``src`` (``AscendC::SetCmpMask``)."""


@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: float, sel_mode: SelMode,
           count: int) -> None: ...
@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: LocalTensor, sel_mode: SelMode,
           count: int) -> None: ...
@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: float, sel_mode: SelMode, mask: list[int],
           repeat_times: int, repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: float, sel_mode: SelMode, mask: int,
           repeat_times: int, repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, repeat_times: int,
           repeat_params: BinaryRepeatParams) -> None: ...
@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: LocalTensor, sel_mode: SelMode,
           mask: list[int], repeat_times: int, repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def select(dst: LocalTensor, sel_mask: LocalTensor, src0: LocalTensor, src1: LocalTensor, sel_mode: SelMode, mask: int,
           repeat_times: int, repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def select(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, repeat_times: int, repeat_params: BinaryRepeatParams,
           sel_mode: SelMode) -> None: ...
@builtin
def select(dst: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Per-element choice between ``src0`` and ``src1`` by a bit mask (``AscendC::Select``)."""


# the data types of the compared and selected tensors on Atlas A2/A3 (compare's CMPMASK form: float16 and
# float32 only); the rules check them, the docstrings list them
DTYPES = {compare: (float16, float32, int32), compare_scalar: (float16, float32, int32), select: (float16, float32)}
document_dtypes(DTYPES)
