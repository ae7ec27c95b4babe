"""Scalar bit operations and the scalar conversion (Ascend C 标量计算).

* ``scalar_count_leading_zero(x)``: the number of leading zero bits of ``x``
  as a uint64 (64 for 0) - ``ScalarCountLeadingZero`` / ``CountLeadingZero``.
* ``scalar_get_count_of_value(x, v)``: how many bits of the uint64 ``x`` are
  ``v`` (0 or 1) - ``ScalarGetCountOfValue<v>`` / ``GetBitCount<v>``.
* ``scalar_get_sff_value(x, v)``: the position of the lowest bit of the
  uint64 ``x`` that is ``v`` (0 or 1), counting from bit 0; -1 when there is
  none - ``ScalarGetSFFValue<v>`` / ``GetSFFValue<v>``.
* ``count_bits_cnt_same_as_sign_bit(x)``: how many consecutive bits of the
  int64 ``x``, from bit 62 down, equal the sign bit (bit 63); -1 for 0 and -1
  (all bits equal the sign) - ``CountBitsCntSameAsSignBit``.
* ``scalar_cast(x, dtype, round_mode)``: the float32 ``x`` converted to
  ``dtype`` - ``ScalarCast<float, T, mode>``.  Atlas A2/A3 convert to int32
  with ``CAST_RINT``, ``CAST_ROUND``, ``CAST_FLOOR`` or ``CAST_CEIL`` (out of
  range saturates, NaN gives 0, as vector ``cast``), and to float16 only with
  ``CAST_ODD`` (round to odd; overflow gives the largest finite float16 of
  the sign, as round-to-odd never rounds to infinity).  Other targets and
  modes are compile-time errors, as the library's assertion rejects them.

``v`` must be a compile-time constant 0 or 1 (a template argument in Ascend
C).  The result of the bit operations is an int (int64); of ``scalar_cast`` to
int32 an int, to float16 a float holding the float16 value exactly (kernel
scalars are float32; storing it into a float16 tensor keeps it bit for bit).
With constant arguments the result is computed at compile time.
"""
from __future__ import annotations

from typing import Union

from .builtin import builtin
from .dtype import DataType, float16, int32
from .enums import RoundMode

__all__ = ["scalar_count_leading_zero", "scalar_get_count_of_value", "scalar_get_sff_value",
           "count_bits_cnt_same_as_sign_bit", "scalar_cast"]


@builtin
def scalar_count_leading_zero(value_in: int) -> int:
    """Leading zero bits of ``value_in`` as a uint64: 0..64 (``AscendC::ScalarCountLeadingZero``)."""


@builtin
def scalar_get_count_of_value(value_in: int, count_value: int) -> int:
    """How many bits of ``value_in`` (uint64) equal ``count_value``, 0 or 1 (``AscendC::ScalarGetCountOfValue``)."""


@builtin
def scalar_get_sff_value(value_in: int, count_value: int) -> int:
    """Position of the lowest bit of ``value_in`` (uint64) equal to ``count_value`` (0 or 1), or -1
    (``AscendC::ScalarGetSFFValue``)."""


@builtin
def count_bits_cnt_same_as_sign_bit(value_in: int) -> int:
    """Consecutive bits of ``value_in`` (int64) from bit 62 down equal to its sign bit; -1 for 0 and -1
    (``AscendC::CountBitsCntSameAsSignBit``)."""


@builtin
def scalar_cast(value_in: float, dtype: DataType, round_mode: RoundMode) -> Union[int, float]:
    """``value_in`` (float32) converted to ``dtype`` in ``round_mode`` (``AscendC::ScalarCast``).

    int32: CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL; float16: CAST_ODD.
    """


# the (target, round modes) scalar_cast takes on Atlas A2/A3 (ScalarCast's page and its library code)
CAST_MODES = {
    int32: (RoundMode.CAST_RINT, RoundMode.CAST_ROUND, RoundMode.CAST_FLOOR, RoundMode.CAST_CEIL),
    float16: (RoundMode.CAST_ODD,),
}
