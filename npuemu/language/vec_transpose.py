"""Transposition (Ascend C 数据转换): ``transpose`` and ``trans_data_to_5hd``.

* ``transpose(dst, src)``: one 16 x 16 matrix of 16-bit elements (512 bytes).
* ``transpose(dst, src, shared_tmp_buffer, params: TransposeParamsExt)``:
  the 16 x 16 transpose (``TRANSPOSE_ND2ND_B16``, uint16) or the
  ``[N, C, H, W] <-> [N, H, W, C]`` conversions (``TRANSPOSE_NCHW2NHWC``,
  ``TRANSPOSE_NHWC2NCHW``) with a uint8 scratch tensor of the documented size.
* ``trans_data_to_5hd(dst_list, src_list, params: TransDataTo5HDParams)``:
  the VNCHWCONV instruction: 16 source and 16 destination 32-byte blocks per
  repeat, given as lists of 16 LocalTensors.

Semantics and assumptions: :mod:`npuemu.isa.vec_transpose`.  The data types
each takes are :data:`DTYPES` (listed in their docstrings; ``transpose``
narrows them per form).
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32, int8, int16, int32, uint8, uint16, uint32
from .enums import TransposeType
from .params import ParamStruct

__all__ = ["transpose", "trans_data_to_5hd", "TransposeParamsExt", "TransDataTo5HDParams"]

ADDR_LIST_SIZE = 16        # blocks one trans_data_to_5hd repeat takes (NCHW_CONV_ADDR_LIST_SIZE)

# what each form of transpose takes on Atlas A2/A3 (Ascend C Transpose page)
TRANSPOSE_BASIC_TYPES = (int16, uint16, float16)
TRANSPOSE_ND2ND_B16_TYPES = (uint16,)
TRANSPOSE_NCHW_TYPES = (int8, uint8, int16, uint16, float16, int32, uint32, float32)
# the TransposeType members the A2/A3 library implements; the others are reserved ("当前不支持")
TRANSPOSE_SUPPORTED = (TransposeType.TRANSPOSE_TYPE_NONE, TransposeType.TRANSPOSE_ND2ND_B16,
                       TransposeType.TRANSPOSE_NCHW2NHWC, TransposeType.TRANSPOSE_NHWC2NCHW)


class TransposeParamsExt(ParamStruct):
    """Shape and kind of an extended ``transpose`` (``AscendC::TransposeParamsExt``).

    ``n_size`` 0..65535, ``c_size`` 0..4095, ``h_size * w_size`` 0..4095 with
    ``h_size * w_size * sizeof(T)`` a multiple of 32 for the NCHW/NHWC
    conversions; ``h_size = w_size = 16`` for ``TRANSPOSE_ND2ND_B16``.
    ``transpose_type`` must be a compile-time constant.
    """

    _fields_ = (("n_size", 0, "u16"), ("c_size", 0, "u16"), ("h_size", 0, "u16"), ("w_size", 0, "u16"),
                ("transpose_type", TransposeType.TRANSPOSE_ND2ND_B16, "enum"))


class TransDataTo5HDParams(ParamStruct):
    """Parameters of ``trans_data_to_5hd`` (``AscendC::TransDataTo5HDParams``).

    ``dst_high_half``/``src_high_half``: which 16-byte half of each block
    8-bit data is written to / read from; ``repeat_times`` 0..255; the repeat
    strides (32-byte blocks, 0..65535) move every address of the list.
    """

    _fields_ = (("dst_high_half", False, "bool"), ("src_high_half", False, "bool"), ("repeat_times", 1, "u8"),
                ("dst_rep_stride", 0, "u16"), ("src_rep_stride", 0, "u16"))


@overload
def transpose(dst: LocalTensor, src: LocalTensor) -> None: ...
@overload
def transpose(dst: LocalTensor, src: LocalTensor, shared_tmp_buffer: LocalTensor,
              params: TransposeParamsExt) -> None: ...
@builtin
def transpose(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Transpose a 16 x 16 matrix, or convert between [N, C, H, W] and [N, H, W, C] (``AscendC::Transpose``).

    The basic form takes int16, uint16 and float16; ``TRANSPOSE_ND2ND_B16``
    uint16; the NCHW/NHWC conversions every type below.  The conversions need
    ``shared_tmp_buffer`` (uint8) of ``(c_size + 2) * 512`` (NCHW2NHWC) or
    ``(2 * c_size + 1) * 512`` (NHWC2NCHW) bytes, twice that for 8-bit data,
    and ``dst`` must not overlap ``src``.
    """


@builtin
def trans_data_to_5hd(dst_list: list[LocalTensor], src_list: list[LocalTensor], params: TransDataTo5HDParams) -> None:
    """Transpose 16 blocks of 32 bytes per repeat (VNCHWCONV, ``AscendC::TransDataTo5HD``).

    16-bit data: block ``i`` of the result holds element ``i`` of the 16
    source blocks; 32-bit data: blocks ``2i`` and ``2i + 1`` hold element ``i``
    of source blocks 0-7 and 8-15; 8-bit data: the ``src_high_half`` half of
    the sources' bytes goes to the ``dst_high_half`` half of the results.  Each
    list holds 16 LocalTensors of one type (pyasc's address-list forms are not
    provided).
    """


# the data types each instruction takes on Atlas A2/A3 (transpose: the union of its forms)
DTYPES = {transpose: TRANSPOSE_NCHW_TYPES, trans_data_to_5hd: TRANSPOSE_NCHW_TYPES}
document_dtypes(DTYPES)

document_temp_buffer(transpose, "shared_tmp_buffer", "extended form only: uint8, ``(c_size + 2) * 512`` bytes for "
                     "NCHW2NHWC or ``(2 * c_size + 1) * 512`` for NHWC2NCHW (1024 instead of 512 for 8-bit data); "
                     "it must not overlap ``src`` or ``dst``.")
