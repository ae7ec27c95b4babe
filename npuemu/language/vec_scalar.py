"""Vector-scalar instructions: ``dst = src (op) scalar`` element-wise on UB tensors.

Every instruction has three forms (as pyasc):

* ``op(dst, src, scalar, count, is_set_mask=True)`` - the first ``count`` elements;
* ``op(dst, src, scalar, mask=int, repeat_times=r, repeat_params=UnaryRepeatParams(...),
  is_set_mask=True)`` - ``r`` repeats of 256 bytes, the first ``mask`` lanes of each;
* ``op(dst, src, scalar, mask=[mask0, mask1], ...)`` - a 128-bit lane mask.

``scalar`` is a number (constant or run time); it is converted to the tensors'
element type before the operation, as on hardware.  With ``is_set_mask=False``
the count form ignores ``count`` and runs one repeat under the mask register
(in counter mode: the element count set with ``set_vector_mask``), as Ascend
C does.  ``axpy`` has no ``is_set_mask`` in its count form.
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import float16, float32, int16, int32, uint16, uint32
from .params import UnaryRepeatParams

__all__ = ["adds", "muls", "maxs", "mins", "leaky_relu", "shift_left", "shift_right", "axpy"]


@overload
def adds(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int, is_set_mask: bool = True) -> None: ...
@overload
def adds(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def adds(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def adds(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = src + scalar`` (``AscendC::Adds``)."""


@overload
def muls(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int, is_set_mask: bool = True) -> None: ...
@overload
def muls(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def muls(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def muls(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = src * scalar`` (``AscendC::Muls``)."""


@overload
def maxs(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int, is_set_mask: bool = True) -> None: ...
@overload
def maxs(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def maxs(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def maxs(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src, scalar)`` (``AscendC::Maxs``)."""


@overload
def mins(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int, is_set_mask: bool = True) -> None: ...
@overload
def mins(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def mins(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def mins(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = min(src, scalar)`` (``AscendC::Mins``)."""


@overload
def leaky_relu(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int,
               is_set_mask: bool = True) -> None: ...
@overload
def leaky_relu(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
               repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def leaky_relu(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
               repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def leaky_relu(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = src if src >= 0 else src * scalar`` (``AscendC::LeakyRelu``)."""


@overload
def shift_left(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int,
               is_set_mask: bool = True) -> None: ...
@overload
def shift_left(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
               repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def shift_left(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
               repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def shift_left(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = src << scalar`` (``AscendC::ShiftLeft``); ``0 <= scalar <= bits``."""


@overload
def shift_right(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int,
                is_set_mask: bool = True) -> None: ...
@overload
def shift_right(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
                repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def shift_right(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
                repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def shift_right(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = src >> scalar`` (``AscendC::ShiftRight``); ``0 <= scalar <= bits``.

    Arithmetic for signed types, logical for unsigned ones.
    """


@overload
def axpy(dst: LocalTensor, src: LocalTensor, scalar: int | float, count: int) -> None: ...
@overload
def axpy(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: int, repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def axpy(dst: LocalTensor, src: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def axpy(dst: LocalTensor, src: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """``dst = src * scalar + dst`` (``AscendC::Axpy``).

    The destination may be float32 for a float16 source; the scalar has the
    source's type.  The mixed form runs 64 lanes per repeat.
    """


_ARITH = (float16, float32, int16, int32)
_SHIFT = (int16, uint16, int32, uint32)

# the data types each instruction takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {
    adds: _ARITH, muls: _ARITH, maxs: _ARITH, mins: _ARITH, leaky_relu: (float16, float32),
    shift_left: _SHIFT, shift_right: _SHIFT,
}
# axpy's (source, destination) pairs
AXPY_TYPES = ((float16, float16), (float32, float32), (float16, float32))
document_dtypes(DTYPES)
document_dtypes({axpy: AXPY_TYPES}, ", src -> dst")
