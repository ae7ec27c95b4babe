"""Data movement between GM and on-chip memory (``DataCopy``, ``DataCopyPad``, ``SetPadValue``).

Signatures follow pyasc (``asc.language.basic.data_copy``), one ``overload``
per form npuemu emulates; pyasc's slice-list forms are not emulated.  The
semantics and the checks npuemu applies are described in
``npuemu/isa/datamove.py`` and, for the cube-side forms (``Nd2NzParams``,
``Nz2NdParamsFull``, ``DataCopyCO12DstParams``), in ``docs/cube.md``.
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin
from .core import GlobalTensor, LocalTensor
from .enums import TPosition
from .params import (DataCopyCO12DstParams, DataCopyEnhancedParams, DataCopyExtParams, DataCopyPadExtParams,
                     DataCopyPadParams, DataCopyParams, Nd2NzParams, Nz2NdParamsFull)

__all__ = ["data_copy", "data_copy_pad", "set_pad_value"]


@overload
def data_copy(dst: LocalTensor, src: GlobalTensor, count: int) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def data_copy(dst: GlobalTensor, src: LocalTensor, count: int) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: GlobalTensor, repeat_params: DataCopyParams) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: LocalTensor, repeat_params: DataCopyParams) -> None: ...
@overload
def data_copy(dst: GlobalTensor, src: LocalTensor, repeat_params: DataCopyParams) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: GlobalTensor, intri_params: DataCopyParams,
              enhanced_params: DataCopyEnhancedParams) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: LocalTensor, intri_params: DataCopyParams,
              enhanced_params: DataCopyEnhancedParams) -> None: ...
@overload
def data_copy(dst: GlobalTensor, src: LocalTensor, intri_params: DataCopyParams,
              enhanced_params: DataCopyEnhancedParams) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: GlobalTensor, intri_params: Nd2NzParams) -> None: ...
@overload
def data_copy(dst: GlobalTensor, src: LocalTensor, intri_params: Nz2NdParamsFull) -> None: ...
@overload
def data_copy(dst: GlobalTensor, src: LocalTensor, intri_params: DataCopyCO12DstParams) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: LocalTensor, intri_params: DataCopyCO12DstParams) -> None: ...
@overload
def data_copy(dst: LocalTensor, src: GlobalTensor, slice_list1: list, slice_list2: list,
              dim_value: int = 1) -> None: ...
@overload
def data_copy(dst: GlobalTensor, src: LocalTensor, slice_list1: list, slice_list2: list,
              dim_value: int = 1) -> None: ...
@builtin
def data_copy(dst: LocalTensor | GlobalTensor, src: LocalTensor | GlobalTensor, *args: Any,
              **kwargs: Any) -> None:
    """Copy between GM and local memory, or UB to UB (``AscendC::DataCopy``).

    Forms:

    * ``data_copy(dst, src, count)``: ``count`` elements; the byte count rounds
      down to a multiple of 32, as on hardware.
    * ``data_copy(dst, src, DataCopyParams(block_count, block_len, src_stride,
      dst_stride))`` (keyword ``repeat_params``): ``block_count`` blocks of
      ``block_len`` 32-byte units, separated by gaps of ``src_stride`` /
      ``dst_stride`` 32-byte units.  ``block_count`` is in [0, 4095], the
      other fields in [0, 65535]; a count or length of 0 copies nothing.
    * ``data_copy(dst, src, DataCopyParams(...), DataCopyEnhancedParams(...))``:
      the same copy; only the default enhanced modes are emulated.
    * ``data_copy(l1, gm, Nd2NzParams(...))``: GM -> L1 converting ND to the
      NZ fractal layout (see ``docs/cube.md``).
    * ``data_copy(gm, ub, Nz2NdParamsFull(...))``: UB (NZ, 16-element columns)
      -> GM (ND) (MTE3).
    * ``data_copy(gm_or_l1, co1, DataCopyCO12DstParams(...))``: L0C -> GM or
      L1 through the fixpipe, with quantisation, ReLU and, with ``nz2nd_en``,
      NZ -> ND conversion (GM only).
    * ``data_copy(dst, src, [SliceInfo, ...], [SliceInfo, ...], dim_value)``:
      GM -> UB or UB -> GM of a multi-dimensional slice, the first list
      describing the destination, the second the source, dimension 0 (the
      contiguous one) first (see ``docs/language.md``, "Slice copies").

    Paths: GM -> UB or L1, UB -> GM, UB -> UB.  UB addresses must be 32-byte
    aligned and the element types of both sides must match.
    """


@overload
def data_copy_pad(dst: LocalTensor, src: GlobalTensor, data_copy_params: DataCopyExtParams,
                  pad_params: DataCopyPadExtParams) -> None: ...
@overload
def data_copy_pad(dst: GlobalTensor, src: LocalTensor, data_copy_params: DataCopyExtParams) -> None: ...
@overload
def data_copy_pad(dst: LocalTensor, src: GlobalTensor, data_copy_params: DataCopyParams,
                  pad_params: DataCopyPadParams) -> None: ...
@overload
def data_copy_pad(dst: GlobalTensor, src: LocalTensor, data_copy_params: DataCopyParams) -> None: ...
@builtin
def data_copy_pad(dst: LocalTensor | GlobalTensor, src: LocalTensor | GlobalTensor, *args: Any,
                  **kwargs: Any) -> None:
    """Copy rows whose length is not a multiple of 32 bytes, GM <-> UB (``AscendC::DataCopyPad``).

    * ``data_copy_pad(ub, gm, DataCopyExtParams(block_count, block_len,
      src_stride, dst_stride), DataCopyPadExtParams(dtype, is_pad,
      left_padding, right_padding, padding_value))``: ``block_len`` is in
      bytes; ``src_stride`` is a gap in bytes on the GM side, ``dst_stride`` a
      gap in 32-byte blocks on the UB side.  Each row lands at a 32-byte
      boundary as ``left_padding`` elements, the data, ``right_padding``
      elements, and filler up to the next 32-byte boundary.
    * ``data_copy_pad(gm, ub, DataCopyExtParams(...))``: the reverse; here
      ``src_stride`` counts 32-byte blocks (UB) and ``dst_stride`` bytes (GM),
      and only the data bytes are written to GM.
    * The legacy forms take a ``DataCopyParams`` (all fields uint16,
      ``block_len`` in bytes) and, GM -> UB, a ``DataCopyPadParams(is_pad,
      left_padding, right_padding, padding_value)`` whose value is raw bits.
    """


@builtin
def set_pad_value(padding_value: int | float, pos: TPosition = TPosition.MAX) -> None:
    """Set the value ``data_copy_pad`` writes into padding (``AscendC::SetPadValue``).

    The value is converted to the element type of each copy that uses it.
    ``pos`` is ``TPosition.MAX``, ``VECIN`` or ``VECOUT``; all three name the
    one GM -> UB pad register.
    """
