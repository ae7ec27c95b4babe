"""Reductions over UB tensors (Ascend C 归约计算); the data types they take are :data:`DTYPES`.

Three families, all summing as pairwise binary trees with float16 partial sums
rounded and saturated at +-65504 (see ``npuemu/isa/vec_reduce.py``):

* per-repeat instructions (level-0 mask forms, ``mask`` an int or ``[lo, hi]``):
  ``whole_reduce_sum/max/min`` - one result per repeat (max/min also the lane
  index, laid out by ``ReduceOrder``); ``block_reduce_sum/max/min`` - one result
  per 32-byte block, 8 per repeat; ``pair_reduce_sum`` - sums of neighbouring
  pairs; ``repeat_reduce_sum`` - ``whole_reduce_sum`` with a continuous mask;
* library routines over a whole tensor, using a ``shared_tmp_buffer``:
  ``reduce_sum/max/min(dst, src, shared_tmp_buffer, count[, cal_index])`` and
  ``(..., mask, repeat_time, src_rep_stride[, cal_index])``; ``dst[0]`` gets the
  result and, with ``cal_index``, ``dst[1]`` the index bits (read them with
  ``reinterpret_cast`` to uint16 / uint32).
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32
from .enums import ReduceOrder

__all__ = ["whole_reduce_sum", "whole_reduce_max", "whole_reduce_min",
           "block_reduce_sum", "block_reduce_max", "block_reduce_min",
           "pair_reduce_sum", "repeat_reduce_sum", "reduce_sum", "reduce_max", "reduce_min"]


@overload
def whole_reduce_sum(dst: LocalTensor, src: LocalTensor, mask: int, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@overload
def whole_reduce_sum(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@builtin
def whole_reduce_sum(dst: LocalTensor, src: LocalTensor, mask: int | list[int], repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """Sum of each repeat's active lanes into ``dst[r * dst_rep_stride]`` (``AscendC::WholeReduceSum``)."""


@overload
def whole_reduce_max(dst: LocalTensor, src: LocalTensor, mask: int, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask: bool = True) -> None: ...
@overload
def whole_reduce_max(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask: bool = True) -> None: ...
@builtin
def whole_reduce_max(dst: LocalTensor, src: LocalTensor, mask: int | list[int], repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask: bool = True) -> None:
    """Maximum of each repeat and its lane index, laid out by ``order`` (``AscendC::WholeReduceMax``)."""


@overload
def whole_reduce_min(dst: LocalTensor, src: LocalTensor, mask: int, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask: bool = True) -> None: ...
@overload
def whole_reduce_min(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask: bool = True) -> None: ...
@builtin
def whole_reduce_min(dst: LocalTensor, src: LocalTensor, mask: int | list[int], repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, order: ReduceOrder = ReduceOrder.ORDER_VALUE_INDEX,
                     is_set_mask: bool = True) -> None:
    """Minimum of each repeat and its lane index, laid out by ``order`` (``AscendC::WholeReduceMin``)."""


@overload
def block_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat: int, mask: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@overload
def block_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat: int, mask: list[int], dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@builtin
def block_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat: int, mask: int | list[int], dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """Sum of each 32-byte block, 8 results per repeat (``AscendC::BlockReduceSum``)."""


@overload
def block_reduce_max(dst: LocalTensor, src: LocalTensor, repeat: int, mask: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@overload
def block_reduce_max(dst: LocalTensor, src: LocalTensor, repeat: int, mask: list[int], dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@builtin
def block_reduce_max(dst: LocalTensor, src: LocalTensor, repeat: int, mask: int | list[int], dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """Maximum of each 32-byte block, 8 results per repeat (``AscendC::BlockReduceMax``)."""


@overload
def block_reduce_min(dst: LocalTensor, src: LocalTensor, repeat: int, mask: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@overload
def block_reduce_min(dst: LocalTensor, src: LocalTensor, repeat: int, mask: list[int], dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@builtin
def block_reduce_min(dst: LocalTensor, src: LocalTensor, repeat: int, mask: int | list[int], dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """Minimum of each 32-byte block, 8 results per repeat (``AscendC::BlockReduceMin``)."""


@overload
def pair_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat_time: int, mask: int, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@overload
def pair_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat_time: int, mask: list[int], dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None: ...
@builtin
def pair_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat_time: int, mask: int | list[int], dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """``src[2j] + src[2j + 1]`` for each pair of a repeat (``AscendC::PairReduceSum``)."""


@builtin
def repeat_reduce_sum(dst: LocalTensor, src: LocalTensor, repeat_time: int, mask: int, dst_blk_stride: int,
                      src_blk_stride: int, dst_rep_stride: int, src_rep_stride: int, is_set_mask: bool = True) -> None:
    """``whole_reduce_sum`` with a continuous mask (``AscendC::RepeatReduceSum``; ``dst_blk_stride`` is unused)."""


@overload
def reduce_sum(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, count: int) -> None: ...
@overload
def reduce_sum(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, mask: int, repeat_time: int,
               src_rep_stride: int) -> None: ...
@overload
def reduce_sum(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, mask: list[int], repeat_time: int,
               src_rep_stride: int) -> None: ...
@builtin
def reduce_sum(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Sum of the first ``count`` elements, or of a mask/repeat pattern, into ``dst[0]`` (``AscendC::ReduceSum``)."""


@overload
def reduce_max(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, count: int,
               cal_index: bool = False) -> None: ...
@overload
def reduce_max(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, mask: int, repeat_time: int,
               src_rep_stride: int, cal_index: bool = False) -> None: ...
@overload
def reduce_max(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, mask: list[int], repeat_time: int,
               src_rep_stride: int, cal_index: bool = False) -> None: ...
@builtin
def reduce_max(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Maximum (and with ``cal_index`` its index) into ``dst[0]`` (``dst[1]``) (``AscendC::ReduceMax``)."""


@overload
def reduce_min(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, count: int,
               cal_index: bool = False) -> None: ...
@overload
def reduce_min(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, mask: int, repeat_time: int,
               src_rep_stride: int, cal_index: bool = False) -> None: ...
@overload
def reduce_min(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, mask: list[int], repeat_time: int,
               src_rep_stride: int, cal_index: bool = False) -> None: ...
@builtin
def reduce_min(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Minimum (and with ``cal_index`` its index) into ``dst[0]`` (``dst[1]``) (``AscendC::ReduceMin``)."""


_FLOAT = (float16, float32)

# the data types each instruction takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {
    whole_reduce_sum: _FLOAT, whole_reduce_max: _FLOAT, whole_reduce_min: _FLOAT,
    block_reduce_sum: _FLOAT, block_reduce_max: _FLOAT, block_reduce_min: _FLOAT,
    pair_reduce_sum: _FLOAT, repeat_reduce_sum: _FLOAT, reduce_sum: _FLOAT, reduce_max: _FLOAT, reduce_min: _FLOAT,
}
document_dtypes(DTYPES)

_REDUCE_TMP = ("the documented minimum, in elements of the data type, for ``r`` first-level repeats "
               "(``r = max(count // lanes, 1)`` in the count form, ``repeat_time`` in the mask form; ``lanes`` = 256 "
               "bytes / element size, ``e`` = elements per 32-byte block): ")
document_temp_buffer(reduce_sum, "shared_tmp_buffer", _REDUCE_TMP + "``round_up(r, e)``; 32-byte aligned.")
for _stub in (reduce_max, reduce_min):
    document_temp_buffer(_stub, "shared_tmp_buffer", _REDUCE_TMP + "``round_up(2r, e)``; with ``cal_index`` "
                         "``round_up(2r, e) + round_up(s2, e) + round_up(s3, e)`` where "
                         "``s2 = ceil(2r / lanes) * 2`` and ``s3 = ceil(s2 / lanes) * 2``; 32-byte aligned.")
