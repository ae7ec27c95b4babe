"""Bilinear interpolation (``AscendC::BilinearInterpolation``, the VBI instruction).

``bilinear_interpolation(dst, src0, src0_offset, src1, mask, h_repeat,
repeat_mode, dst_blk_stride, v_r_offset, v_repeat, shared_tmp_buffer)``:
``v_repeat`` vertical iterations of ``h_repeat`` horizontal ones.  Each
horizontal iteration reads 8 byte offsets from ``src0_offset`` (uint32), each
selecting a 32-byte DataBlock of ``src0``, multiplies the 8 blocks by one
``src1`` value (``repeat_mode=False``) or by 8 successive values (``True``)
and adds the products block by block to the iteration's running sum; each
vertical iteration writes its 8 summed blocks to ``dst`` (block stride
``dst_blk_stride``, successive vertical iterations ``v_r_offset`` elements
apart).  ``mask`` (continuous or ``[mask0, mask1]``) selects the lanes
written.  ``shared_tmp_buffer`` (uint8) is scratch.

Semantics, sizes and assumptions: :mod:`npuemu.isa.vec_interp`.
"""
from __future__ import annotations

from typing import overload

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16

__all__ = ["bilinear_interpolation"]


@overload
def bilinear_interpolation(dst: LocalTensor, src0: LocalTensor, src0_offset: LocalTensor, src1: LocalTensor,
                           mask: int, h_repeat: int, repeat_mode: bool, dst_blk_stride: int, v_r_offset: int,
                           v_repeat: int, shared_tmp_buffer: LocalTensor) -> None: ...
@overload
def bilinear_interpolation(dst: LocalTensor, src0: LocalTensor, src0_offset: LocalTensor, src1: LocalTensor,
                           mask: list[int], h_repeat: int, repeat_mode: bool, dst_blk_stride: int, v_r_offset: int,
                           v_repeat: int, shared_tmp_buffer: LocalTensor) -> None: ...
@builtin
def bilinear_interpolation(dst: LocalTensor, src0: LocalTensor, src0_offset: LocalTensor, src1: LocalTensor,
                           mask: int | list[int], h_repeat: int, repeat_mode: bool, dst_blk_stride: int,
                           v_r_offset: int, v_repeat: int, shared_tmp_buffer: LocalTensor) -> None:
    """Gathered DataBlocks of src0 times src1 weights, summed per vertical iteration (``BilinearInterpolation``).

    ``shared_tmp_buffer`` needs ``h_repeat * v_repeat * 256 + (src1 length // 8) * 256`` bytes.
    """


# the element types on Atlas A2/A3 (dst, src0 and src1; src0_offset is uint32, shared_tmp_buffer uint8)
DTYPES = {bilinear_interpolation: (float16,)}
document_dtypes(DTYPES)

document_temp_buffer(bilinear_interpolation, "shared_tmp_buffer", "uint8, ``h_repeat * v_repeat * 256 + (len(src1) "
                     "// 8) * 256`` bytes (the gathered blocks and the broadcast weights); it holds the intermediate "
                     "values afterwards.")
