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
Atlas A2 supports, listed per instruction.  Numerics: see
:mod:`npuemu.isa.vec_binary`.
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
