"""Binary vector instructions: ``dst = src0 (op) src1`` element-wise on UB tensors.

Every instruction has three forms (as pyasc):

* ``op(dst, src0, src1, count)`` - the first ``count`` elements;
* ``op(dst, src0, src1, mask=int, repeat_times=r, repeat_params=BinaryRepeatParams(...), is_set_mask=True)``
  - ``r`` repeats of 256 bytes, the first ``mask`` lanes of each;
* ``op(dst, src0, src1, mask=[mask0, mask1], ...)`` - a 128-bit lane mask, ``mask0`` for lanes 0-63 and
  ``mask1`` for lanes 64-127 (32-bit types have 64 lanes: ``[mask0]`` or ``mask1 = 0``).

The fourth positional argument is the count or the mask.  The count form
accepts ``is_set_mask`` and ignores it (it always sets the mask itself, in
counter mode, and leaves normal mode with all lanes enabled).  With
``is_set_mask=False`` the level-0 forms ignore ``mask`` and use the mask
register (``set_vector_mask``); in counter mode (``set_mask_count``) the mask
is the total element count and ``repeat_times`` is ignored.  Lanes the mask
leaves off keep the destination's value.  Operands are LocalTensors in
VECIN/VECOUT/VECCALC, 32-byte aligned, of one dtype; the dtypes are those
Atlas A2 supports (:data:`DTYPES`, listed in each instruction's docstring).
Numerics: see :mod:`npuemu.isa.vec_binary`.
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import float16, float32, int16, int32, uint16
from .params import BinaryRepeatParams

__all__ = ["add", "sub", "mul", "div", "max", "min", "add_relu", "sub_relu", "bitwise_and", "bitwise_or"]


@overload
def add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True) -> None: ...
@overload
def add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 + src1`` (``AscendC::Add``)."""


@overload
def sub(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True) -> None: ...
@overload
def sub(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def sub(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def sub(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 - src1`` (``AscendC::Sub``)."""


@overload
def mul(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True) -> None: ...
@overload
def mul(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def mul(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def mul(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 * src1`` (``AscendC::Mul``)."""


@overload
def div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True) -> None: ...
@overload
def div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 / src1`` (``AscendC::Div``)."""


@overload
def max(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor,  # noqa: A001
        count: int, is_set_mask: bool = True) -> None: ...
@overload
def max(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,  # noqa: A001
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def max(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,  # noqa: A001
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def max(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:  # noqa: A001
    """``dst = max(src0, src1)`` (``AscendC::Max``)."""


@overload
def min(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor,  # noqa: A001
        count: int, is_set_mask: bool = True) -> None: ...
@overload
def min(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,  # noqa: A001
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def min(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,  # noqa: A001
        repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def min(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:  # noqa: A001
    """``dst = min(src0, src1)`` (``AscendC::Min``)."""


@overload
def add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True) -> None: ...
@overload
def add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
             repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
             repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src0 + src1, 0)`` (``AscendC::AddRelu``)."""


@overload
def sub_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True) -> None: ...
@overload
def sub_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
             repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def sub_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
             repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def sub_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src0 - src1, 0)`` (``AscendC::SubRelu``)."""


@overload
def bitwise_and(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor,
                count: int, is_set_mask: bool = True) -> None: ...
@overload
def bitwise_and(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def bitwise_and(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
                repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def bitwise_and(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 & src1`` (``AscendC::And``)."""


@overload
def bitwise_or(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor,
               count: int, is_set_mask: bool = True) -> None: ...
@overload
def bitwise_or(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
               repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def bitwise_or(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
               repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def bitwise_or(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 | src1`` (``AscendC::Or``)."""

_ARITH = (float16, float32, int16, int32)

# the data types each instruction takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {
    add: _ARITH, sub: _ARITH, mul: _ARITH, div: (float16, float32), max: _ARITH, min: _ARITH,
    add_relu: (float16, float32, int16), sub_relu: (float16, float32, int16),
    bitwise_and: (int16, uint16), bitwise_or: (int16, uint16),
}
document_dtypes(DTYPES)
