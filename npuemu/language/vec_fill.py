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

The data types each takes are :data:`DTYPES` (listed in their docstrings).
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import bfloat16, float16, float32, int16, int32, uint16, uint32
from .params import BrcbRepeatParams

__all__ = ["duplicate", "brcb"]


@overload
def duplicate(dst: LocalTensor, scalar: int | float, count: int, is_set_mask: bool = True) -> None: ...
@overload
def duplicate(dst: LocalTensor, scalar: int | float, mask: int, repeat_times: int, dst_block_stride: int,
              dst_repeat_stride: int, is_set_mask: bool = True) -> None: ...
@overload
def duplicate(dst: LocalTensor, scalar: int | float, mask: list[int], repeat_times: int, dst_block_stride: int,
              dst_repeat_stride: int, is_set_mask: bool = True) -> None: ...
@builtin
def duplicate(dst: LocalTensor, scalar: int | float, *args: Any, **kwargs: Any) -> None:
    """Fill ``dst`` with ``scalar`` (``AscendC::Duplicate``)."""


@builtin
def brcb(dst: LocalTensor, src0: LocalTensor, repeat_times: int, repeat_params: BrcbRepeatParams) -> None:
    """Broadcast each of ``8 * repeat_times`` elements of ``src0`` to a 32-byte block of ``dst`` (``AscendC::Brcb``)."""


_TYPES = (int16, uint16, int32, uint32, float16, bfloat16, float32)

# the data types each instruction takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {duplicate: _TYPES, brcb: _TYPES}
document_dtypes(DTYPES)
