"""Gather (Ascend C 离散与聚合).

* ``gather(dst, src, src_offset, src_base, count)`` and the level-0 form
  ``gather(dst, src, src_offset, src_base, mask, repeat_times, dst_rep_stride)``:
  ``dst[i] = src[(src_base + src_offset[i]) / sizeof(T)]`` with uint32 byte
  offsets; float16, bfloat16, int16, uint16, float32, int32, uint32.
* ``gatherb(dst, src0, offset, repeat_times, repeat_params)``: the same for
  whole 32-byte blocks, 8 per repeat (``GatherRepeatParams`` strides); uint16
  and uint32.
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["gather", "gatherb"]


@builtin
def gather(dst: Any, src: Any, src_offset: Any, src_base: int, *args: Any, **kwargs: Any) -> None:
    """Collect elements of ``src`` at byte offsets (``AscendC::Gather``)."""


@builtin
def gatherb(dst: Any, src0: Any, offset: Any, repeat_times: int, repeat_params: Any) -> None:
    """Collect 32-byte blocks of ``src0`` at byte offsets (``AscendC::Gatherb``)."""
