"""Compare and select (Ascend C 比较与选择).

* ``compare(dst, src0, src1, cmp_mode, count)`` and the level-0 form
  ``compare(dst, src0, src1, cmp_mode, mask, repeat_times, repeat_params)``:
  one bit per element into a uint8/int8 ``dst``, little-endian; float16,
  float32, and int32 with ``CMPMODE.EQ``.  ``count * sizeof(T)`` must be a
  multiple of 256 bytes.
* ``compare(src0, src1, cmp_mode, mask, repeat_params)``: one repeat into the
  128-bit CMPMASK register; ``get_cmp_mask(dst)`` / ``set_cmp_mask(src)`` move
  the register to / from 16 bytes of UB.
* ``compare_scalar(dst, src0, src1_scalar, cmp_mode, ...)``: the same against a
  scalar (level-0 form with ``UnaryRepeatParams``).
* ``select(dst, sel_mask, src0, src1, sel_mode, count | mask, repeat_times,
  repeat_params)``: ``src0`` where the ``sel_mask`` bit is 1, else ``src1`` (a
  tensor, or a scalar with ``SelMode.VSEL_TENSOR_SCALAR_MODE``); float16 and
  float32.  Register forms: ``select(dst, sel_mask, src0, repeat_times,
  repeat_params)`` (scalar from CMPMASK) and ``select(dst, src0, src1,
  repeat_times=..., repeat_params=..., sel_mode=...)`` (bits or mask address
  from CMPMASK); both use the vector mask register.
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["compare", "compare_scalar", "get_cmp_mask", "set_cmp_mask", "select"]


@builtin
def compare(*args: Any, **kwargs: Any) -> None:
    """Element-wise comparison into a bit mask or CMPMASK (``AscendC::Compare``)."""


@builtin
def compare_scalar(dst: Any, src0: Any, src1_scalar: Any, cmp_mode: Any, *args: Any, **kwargs: Any) -> None:
    """Element-wise comparison with a scalar into a bit mask (``AscendC::CompareScalar``)."""


@builtin
def get_cmp_mask(dst: Any) -> None:
    """Copy the 128-bit CMPMASK register to the first 16 bytes of ``dst`` (``AscendC::GetCmpMask``)."""


@builtin
def set_cmp_mask(src: Any) -> None:
    """Load the 128-bit CMPMASK register from the first 16 bytes of ``src`` (``AscendC::SetCmpMask``)."""


@builtin
def select(dst: Any, *args: Any, **kwargs: Any) -> None:
    """Per-element choice between ``src0`` and ``src1`` by a bit mask (``AscendC::Select``)."""
