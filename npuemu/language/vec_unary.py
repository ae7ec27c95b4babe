"""Unary vector instructions: ``dst = f(src)`` element-wise on UB tensors.

Every instruction has three forms (as pyasc):

* ``op(dst, src, count)`` - the first ``count`` elements;
* ``op(dst, src, mask=int, repeat_times=r, repeat_params=UnaryRepeatParams(...), is_set_mask=True)``
  - ``r`` repeats of 256 bytes, the first ``mask`` lanes of each;
* ``op(dst, src, mask=[mask0, mask1], ...)`` - a 128-bit lane mask (``mask0``: lanes 0-63).

Operands are LocalTensors in VECIN/VECOUT/VECCALC, 32-byte aligned.  Data
types are those Atlas A2 supports (:data:`DTYPES`, listed in each
instruction's docstring); exp, ln and rsqrt are not correctly rounded on
hardware, see :mod:`npuemu.isa.vec_unary`.
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import float16, float32, int16, int32, uint16
from .params import UnaryRepeatParams

__all__ = ["abs", "exp", "ln", "sqrt", "rsqrt", "reciprocal", "relu", "bitwise_not"]


@overload
def abs(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...  # noqa: A001
@overload
def abs(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int,  # noqa: A001
        repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def abs(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int,  # noqa: A001
        repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def abs(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:  # noqa: A001
    """``dst = |src|`` (``AscendC::Abs``)."""


@overload
def exp(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def exp(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
        is_set_mask: bool = True) -> None: ...
@overload
def exp(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int, repeat_params: UnaryRepeatParams,
        is_set_mask: bool = True) -> None: ...
@builtin
def exp(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = e ** src`` (``AscendC::Exp``)."""


@overload
def ln(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def ln(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
       is_set_mask: bool = True) -> None: ...
@overload
def ln(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int, repeat_params: UnaryRepeatParams,
       is_set_mask: bool = True) -> None: ...
@builtin
def ln(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = log(src)``, the natural logarithm (``AscendC::Ln``)."""


@overload
def sqrt(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def sqrt(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
         is_set_mask: bool = True) -> None: ...
@overload
def sqrt(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int, repeat_params: UnaryRepeatParams,
         is_set_mask: bool = True) -> None: ...
@builtin
def sqrt(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = sqrt(src)`` (``AscendC::Sqrt``)."""


@overload
def rsqrt(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def rsqrt(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
          is_set_mask: bool = True) -> None: ...
@overload
def rsqrt(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int, repeat_params: UnaryRepeatParams,
          is_set_mask: bool = True) -> None: ...
@builtin
def rsqrt(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = 1 / sqrt(src)`` (``AscendC::Rsqrt``)."""


@overload
def reciprocal(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def reciprocal(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
               is_set_mask: bool = True) -> None: ...
@overload
def reciprocal(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int, repeat_params: UnaryRepeatParams,
               is_set_mask: bool = True) -> None: ...
@builtin
def reciprocal(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = 1 / src`` (``AscendC::Reciprocal``)."""


@overload
def relu(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def relu(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
         is_set_mask: bool = True) -> None: ...
@overload
def relu(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int, repeat_params: UnaryRepeatParams,
         is_set_mask: bool = True) -> None: ...
@builtin
def relu(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src, 0)`` (``AscendC::Relu``)."""


@overload
def bitwise_not(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def bitwise_not(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
                is_set_mask: bool = True) -> None: ...
@overload
def bitwise_not(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int,
                repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def bitwise_not(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = ~src`` (``AscendC::Not``)."""


_FLOAT = (float16, float32)

# the data types each instruction takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {
    abs: _FLOAT, exp: _FLOAT, ln: _FLOAT, sqrt: _FLOAT, rsqrt: _FLOAT, reciprocal: _FLOAT,
    relu: (float16, float32, int32), bitwise_not: (int16, uint16),
}
document_dtypes(DTYPES)
