"""Type conversion between UB tensors (``AscendC::Cast``).

``cast(dst, src, round_mode, count)`` converts the first ``count`` elements;
``cast(dst, src, round_mode, mask, repeat_times, repeat_params, is_set_mask=True)``
is the level-0 form with a continuous (int) or bitwise (``[low, high]``) mask
and ``UnaryRepeatParams`` strides.  The lanes of a repeat and the mask follow
the wider of the two types (64 lanes when either is 32-bit), and the narrower
operand's strides count its own 32-byte blocks.

Conversions and rounding modes of Atlas A2/A3 (``N`` = CAST_NONE, ``R`` =
CAST_RINT, ``F`` = CAST_FLOOR, ``C`` = CAST_CEIL, ``A`` = CAST_ROUND (ties away
from zero), ``Z`` = CAST_TRUNC, ``O`` = CAST_ODD)::

    float16  -> float32                          N      (exact)
    bfloat16 -> float32                          N      (exact)
    int8, uint8 -> float16                       N      (exact)
    int16 -> float32                             N      (exact)
    int32 -> int64                               N      (exact)
    int32 -> int16, int64 -> int32               N      (saturating)
    int16 -> float16                             N R F C A Z
    int32 -> float32                             N R F C A Z
    float16 -> int8, uint8                       N R F C A Z   (saturating)
    float16 -> int16, int32                        R F C A Z   (saturating)
    bfloat16 -> int32                              R F C A Z   (saturating)
    float32 -> int16, int32, int64                 R F C A Z   (saturating)
    int64 -> float32                               R F C A Z
    float32 -> float32 (round to integral)         R F C A Z
    float32 -> bfloat16                            R F C A Z
    float32 -> float16                           N R F C A Z O

CAST_NONE rounds like CAST_RINT where the conversion can be inexact.  Any other
pair or mode is a compile-time ``KernelTypeError``.  Float results follow the
cores' default Inf/NaN mode (IEEE 754 overflow to infinity or to the largest
finite value depending on the rounding direction; NaN stays a quiet NaN);
integer results saturate, NaN converts to 0 and negative values to uint8
become 0 (the documentation calls them abnormal input).  See
:mod:`npuemu.numerics.rounding` for the details.

Not emulated: int4b_t conversions (no int4 dtype), int32 -> float16 (a
dequantisation that needs ``set_deq_scale``).
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["cast"]


@builtin
def cast(dst: Any, src: Any, round_mode: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = convert(src)`` rounded in ``round_mode`` (``AscendC::Cast``).

    Forms: ``cast(dst, src, round_mode, count)`` and
    ``cast(dst, src, round_mode, mask, repeat_times, repeat_params, is_set_mask=True)``.
    """
