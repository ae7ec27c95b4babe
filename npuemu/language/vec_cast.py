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

from typing import Any, overload

from . import dtype as dt
from .builtin import builtin
from .core import LocalTensor
from .enums import RoundMode
from .params import UnaryRepeatParams

__all__ = ["cast"]


@overload
def cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, count: int) -> None: ...
@overload
def cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, mask: int, repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, mask: list[int], repeat_times: int,
         repeat_params: UnaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def cast(dst: LocalTensor, src: LocalTensor, round_mode: RoundMode, *args: Any, **kwargs: Any) -> None:
    """``dst = convert(src)`` rounded in ``round_mode`` (``AscendC::Cast``); see :data:`MODES`."""


N, R, F, C, A, Z, O = (RoundMode.CAST_NONE, RoundMode.CAST_RINT, RoundMode.CAST_FLOOR, RoundMode.CAST_CEIL,
                       RoundMode.CAST_ROUND, RoundMode.CAST_TRUNC, RoundMode.CAST_ODD)
_EXACT = frozenset({N})
_DIRECTED = frozenset({R, F, C, A, Z})
_ANY = _DIRECTED | {N}

# (src, dst) -> the RoundModes the Atlas A2/A3 instruction accepts (Ascend C "Cast" data type table); the
# table in this module's docstring shows it, and a test checks that the two agree
MODES: dict[tuple[dt.DataType, dt.DataType], frozenset[RoundMode]] = {
    (dt.float16, dt.float32): _EXACT,
    (dt.bfloat16, dt.float32): _EXACT,
    (dt.int8, dt.float16): _EXACT,
    (dt.uint8, dt.float16): _EXACT,
    (dt.int16, dt.float32): _EXACT,
    (dt.int32, dt.int64): _EXACT,
    (dt.int32, dt.int16): _EXACT,
    (dt.int64, dt.int32): _EXACT,
    (dt.int16, dt.float16): _ANY,
    (dt.int32, dt.float32): _ANY,
    (dt.float16, dt.int8): _ANY,
    (dt.float16, dt.uint8): _ANY,
    (dt.float16, dt.int16): _DIRECTED,
    (dt.float16, dt.int32): _DIRECTED,
    (dt.bfloat16, dt.int32): _DIRECTED,
    (dt.float32, dt.int16): _DIRECTED,
    (dt.float32, dt.int32): _DIRECTED,
    (dt.float32, dt.int64): _DIRECTED,
    (dt.int64, dt.float32): _DIRECTED,
    (dt.float32, dt.float32): _DIRECTED,
    (dt.float32, dt.bfloat16): _DIRECTED,
    (dt.float32, dt.float16): _ANY | {O},
}
