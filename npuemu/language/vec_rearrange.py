"""Vector data rearrangement: ``copy``, ``gather_mask``, ``scatter`` (Ascend C 数据搬运 / 离散与聚合).

* ``copy(dst, src, mask, repeat_time, repeat_params: CopyRepeatParams, is_set_mask=True)``:
  the vector pipe's UB -> UB copy with level-0 mask and repeat semantics;
  ``dst_stride``/``src_stride`` are the block strides within a repeat and
  ``dst_repeat_size``/``src_repeat_size`` the repeat strides, all in 32-byte
  blocks.
* ``gather_mask(dst, src0, src1_pattern, reduce_mode, mask, params:
  GatherMaskParams) -> int``: keeps the elements of ``src0`` whose pattern
  bit is 1 and packs them at the start of ``dst``; returns how many it kept,
  which ``get_gather_mask_remain_count()`` also reads back.
* ``scatter``: not available on Atlas A2/A3 (a compile-time error).

Semantics and assumptions: :mod:`npuemu.isa.vec_rearrange`.  The data types
each takes are :data:`DTYPES` (listed in their docstrings).
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import bfloat16, float16, float32, int16, int32, uint16, uint32
from .enums import GatherMaskMode
from .params import CopyRepeatParams, GatherMaskParams

__all__ = ["copy", "gather_mask", "get_gather_mask_remain_count", "scatter"]

# the built-in gather_mask patterns (src1_pattern 1..7): lane e of a repeat is kept when e % period == phase
BUILTIN_PATTERNS = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


@overload
def copy(dst: LocalTensor, src: LocalTensor, mask: int, repeat_time: int, repeat_params: CopyRepeatParams,
         is_set_mask: bool = True) -> None: ...
@overload
def copy(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_time: int, repeat_params: CopyRepeatParams,
         is_set_mask: bool = True) -> None: ...
@builtin
def copy(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Level-0 vector copy between VECIN/VECCALC/VECOUT tensors (``AscendC::Copy``)."""


@overload
def gather_mask(dst: LocalTensor, src0: LocalTensor, src1_pattern: LocalTensor, reduce_mode: bool, mask: int,
                params: GatherMaskParams, gather_mask_mode: GatherMaskMode = GatherMaskMode.DEFAULT) -> int: ...
@overload
def gather_mask(dst: LocalTensor, src0: LocalTensor, src1_pattern: int, reduce_mode: bool, mask: int,
                params: GatherMaskParams, gather_mask_mode: GatherMaskMode = GatherMaskMode.DEFAULT) -> int: ...
@builtin
def gather_mask(dst: LocalTensor, src0: LocalTensor, *args: Any, **kwargs: Any) -> int:
    """Keep the elements of ``src0`` a bit pattern selects, packed into ``dst``; returns their number
    (``AscendC::GatherMask``).

    ``src1_pattern`` is a built-in pattern 1..7 (1: even lanes, 2: odd lanes,
    3-6: lane 0/1/2/3 of every 4, 7: all) or a uint16 (16-bit data) / uint32
    (32-bit data) tensor whose bits, lowest first, select the lanes.
    ``reduce_mode=False``: each of ``params.repeat_times`` repeats covers 256
    bytes and ``mask`` is unused; ``True`` (counter mode): each repeat covers
    ``mask`` elements.
    """


@builtin
def get_gather_mask_remain_count() -> int:
    """The number of elements the last ``gather_mask`` kept (``AscendC::GetGatherMaskRemainCount``)."""


@overload
def scatter(dst: LocalTensor, src: LocalTensor, dst_offset: LocalTensor, dst_base: int, count: int) -> None: ...
@overload
def scatter(dst: LocalTensor, src: LocalTensor, dst_offset: LocalTensor, dst_base: int, mask: int,
            repeat_times: int, src_rep_stride: int) -> None: ...
@overload
def scatter(dst: LocalTensor, src: LocalTensor, dst_offset: LocalTensor, dst_base: int, mask: list[int],
            repeat_times: int, src_rep_stride: int) -> None: ...
@builtin
def scatter(dst: LocalTensor, src: LocalTensor, dst_offset: LocalTensor, dst_base: int, *args: Any,
            **kwargs: Any) -> None:
    """Scatter ``src`` to byte offsets of ``dst`` (``AscendC::Scatter``): not available on Atlas A2/A3."""


# the data types each instruction takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {copy: (float16, bfloat16, int16, uint16, float32, int32, uint32),
          gather_mask: (float16, bfloat16, int16, uint16, float32, int32, uint32)}
document_dtypes(DTYPES)
