"""Binary vector instructions: ``dst = src0 (op) src1`` element-wise on UB tensors.

Every instruction has three forms (as pyasc):

* ``op(dst, src0, src1, count)`` - the first ``count`` elements;
* ``op(dst, src0, src1, mask=int, repeat_times=r, repeat_params=BinaryRepeatParams(...))``
  - ``r`` repeats of 256 bytes, the first ``mask`` lanes of each;
* ``op(dst, src0, src1, mask=[hi, lo], ...)`` - a 128-bit lane mask.
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["add", "sub", "mul", "div", "max", "min", "add_relu", "sub_relu", "bitwise_and", "bitwise_or"]


@builtin
def add(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 + src1`` (``AscendC::Add``); float16, float32, int16, int32."""


@builtin
def sub(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 - src1`` (``AscendC::Sub``); float16, float32, int16, int32."""


@builtin
def mul(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 * src1`` (``AscendC::Mul``); float16, float32, int16, int32."""


@builtin
def div(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 / src1`` (``AscendC::Div``); float16, float32."""


@builtin
def max(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:  # noqa: A001
    """``dst = max(src0, src1)`` (``AscendC::Max``); float16, float32, int16, int32."""


@builtin
def min(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:  # noqa: A001
    """``dst = min(src0, src1)`` (``AscendC::Min``); float16, float32, int16, int32."""


@builtin
def add_relu(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src0 + src1, 0)`` (``AscendC::AddRelu``); float16, float32, int16."""


@builtin
def sub_relu(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src0 - src1, 0)`` (``AscendC::SubRelu``); float16, float32, int16."""


@builtin
def bitwise_and(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 & src1`` (``AscendC::And``); int16, uint16."""


@builtin
def bitwise_or(dst: Any, src0: Any, src1: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 | src1`` (``AscendC::Or``); int16, uint16."""
