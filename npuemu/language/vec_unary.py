"""Unary vector instructions: ``dst = f(src)`` element-wise on UB tensors.

Every instruction has three forms (as pyasc):

* ``op(dst, src, count)`` - the first ``count`` elements;
* ``op(dst, src, mask=int, repeat_times=r, repeat_params=UnaryRepeatParams(...), is_set_mask=True)``
  - ``r`` repeats of 256 bytes, the first ``mask`` lanes of each;
* ``op(dst, src, mask=[mask0, mask1], ...)`` - a 128-bit lane mask (``mask0``: lanes 0-63).

Operands are LocalTensors in VECIN/VECOUT/VECCALC, 32-byte aligned.  Data
types are those Atlas A2 supports (listed per instruction); exp, ln and rsqrt
are not correctly rounded on hardware, see :mod:`npuemu.isa.vec_unary`.
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["abs", "exp", "ln", "sqrt", "rsqrt", "reciprocal", "relu", "bitwise_not"]


@builtin
def abs(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:  # noqa: A001
    """``dst = |src|`` (``AscendC::Abs``); float16, float32."""


@builtin
def exp(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = e ** src`` (``AscendC::Exp``); float16, float32."""


@builtin
def ln(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = log(src)``, the natural logarithm (``AscendC::Ln``); float16, float32."""


@builtin
def sqrt(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = sqrt(src)`` (``AscendC::Sqrt``); float16, float32."""


@builtin
def rsqrt(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = 1 / sqrt(src)`` (``AscendC::Rsqrt``); float16, float32."""


@builtin
def reciprocal(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = 1 / src`` (``AscendC::Reciprocal``); float16, float32."""


@builtin
def relu(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src, 0)`` (``AscendC::Relu``); float16, float32, int32."""


@builtin
def bitwise_not(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = ~src`` (``AscendC::Not``); int16, uint16."""
