"""Gather (Ascend C 离散与聚合).

* ``gather(dst, src, src_offset, src_base, count)`` and the level-0 form
  ``gather(dst, src, src_offset, src_base, mask, repeat_times, dst_rep_stride)``:
  ``dst[i] = src[(src_base + src_offset[i]) / sizeof(T)]`` with uint32 byte
  offsets.
* ``gatherb(dst, src0, offset, repeat_times, repeat_params)``: the same for
  whole 32-byte blocks, 8 per repeat (``GatherRepeatParams`` strides).

The data types each takes are :data:`DTYPES` (listed in their docstrings).
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import bfloat16, float16, float32, int16, int32, uint16, uint32
from .params import GatherRepeatParams

__all__ = ["gather", "gatherb"]


@overload
def gather(dst: LocalTensor, src: LocalTensor, src_offset: LocalTensor, src_base: int, count: int) -> None: ...
@overload
def gather(dst: LocalTensor, src: LocalTensor, src_offset: LocalTensor, src_base: int, mask: int, repeat_times: int,
           dst_rep_stride: int) -> None: ...
@overload
def gather(dst: LocalTensor, src: LocalTensor, src_offset: LocalTensor, src_base: int, mask: list[int],
           repeat_times: int, dst_rep_stride: int) -> None: ...
@builtin
def gather(dst: LocalTensor, src: LocalTensor, src_offset: LocalTensor, src_base: int, *args: Any,
           **kwargs: Any) -> None:
    """Collect elements of ``src`` at byte offsets (``AscendC::Gather``)."""


@builtin
def gatherb(dst: LocalTensor, src0: LocalTensor, offset: LocalTensor, repeat_times: int,
            repeat_params: GatherRepeatParams) -> None:
    """Collect 32-byte blocks of ``src0`` at byte offsets (``AscendC::Gatherb``)."""


# the data types each instruction takes on Atlas A2/A3 (offsets are uint32); the rules check them, the
# docstrings list them
DTYPES = {gather: (float16, bfloat16, int16, uint16, float32, int32, uint32), gatherb: (uint16, uint32)}
document_dtypes(DTYPES)
