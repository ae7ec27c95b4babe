"""Filling UB tensors with a scalar (``Duplicate``) or broadcasting elements to blocks (``Brcb``).

``duplicate(dst, scalar, count)`` writes ``scalar`` to the first ``count``
elements; ``duplicate(dst, scalar, mask, repeat_times, dst_block_stride,
dst_repeat_stride, is_set_mask=True)`` is the level-0 form (int or
``[low, high]`` mask; strides in 32-byte blocks).  ``scalar`` is converted to
the tensor's dtype as C++ would: floats round to nearest even, integers wrap.

``brcb(dst, src, repeat_times, BrcbRepeatParams(dst_blk_stride, dst_rep_stride))``
reads 8 consecutive elements of ``src`` per repeat and fills one whole 32-byte
block of ``dst`` with each; ``src`` and ``dst`` must not overlap and
``dst_blk_stride`` must not be 0.

Both take int16, uint16, int32, uint32, float16, bfloat16 and float32
(Atlas A2/A3).
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["duplicate", "brcb"]


@builtin
def duplicate(dst: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """Fill ``dst`` with ``scalar`` (``AscendC::Duplicate``).

    Forms: ``duplicate(dst, scalar, count)`` and ``duplicate(dst, scalar, mask,
    repeat_times, dst_block_stride, dst_repeat_stride, is_set_mask=True)``.
    """


@builtin
def brcb(dst: Any, src0: Any, repeat_times: Any, repeat_params: Any) -> None:
    """Broadcast each of ``8 * repeat_times`` elements of ``src0`` to a 32-byte block of ``dst`` (``AscendC::Brcb``)."""
