"""Compound vector instructions (Ascend C 复合计算) and the DEQSCALE register.

* ``fused_mul_add(dst, src0, src1, ...)``: ``dst = src0 * dst + src1``;
  ``fused_mul_add_relu``: the same, then ``max(., 0)``;
  ``mul_add_dst``: ``dst = src0 * src1 + dst`` (float16 sources may
  accumulate into a float32 dst).
* ``add_relu_cast`` / ``sub_relu_cast``: ``dst = cast(max(src0 +/- src1, 0))``;
  ``mul_cast``: ``dst = cast(src0 * src1)``; conversions round to nearest
  (CAST_NONE) and saturate.
* ``add_deq_relu``: ``dst = max(deq(src0 + src1), 0)``, int32 -> float16,
  ``deq(x) = x * scale`` with the float16 scale of ``set_deq_scale(scale)``.
* ``cast_deq(dst, src, ..., is_vec_deq, half_block)``: int16 -> int8/uint8,
  ``cast(src * scale + offset)`` with the configuration of
  ``set_deq_scale(scale, offset, sign_mode)`` or, with ``is_vec_deq``, the
  16 configurations ``set_deq_scale(vdeq, vdeq_info)`` wrote into the uint64
  tensor ``vdeq``.  Results fill half of each 32-byte DataBlock of dst
  (``half_block``: the upper 16 bytes).
* ``VdeqInfo(vdeq_scale, vdeq_offset, vdeq_sign_mode)``: 16 scales (float),
  offsets (int, 9 bits) and sign modes (bool).

The binary ones take the forms of :mod:`npuemu.language.vec_binary` (count,
or mask / repeat_times / ``BinaryRepeatParams``); ``cast_deq`` those of a
unary instruction (``UnaryRepeatParams``).  Source and destination data
types are the pairs in :data:`DTYPES`; numerics and every assumption are
described in :mod:`npuemu.isa.vec_fused`.
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin, document_dtypes
from .core import LocalTensor
from .dtype import float16, float32, int8, int16, int32, uint8
from .params import BinaryRepeatParams, ParamStruct, UnaryRepeatParams

__all__ = ["fused_mul_add", "fused_mul_add_relu", "mul_add_dst", "add_relu_cast", "sub_relu_cast", "mul_cast",
           "add_deq_relu", "cast_deq", "set_deq_scale", "VdeqInfo"]

VDEQ_TENSOR_SIZE = 16


class VdeqInfo(ParamStruct):
    """The 16 dequantisation configurations ``set_deq_scale(vdeq, vdeq_info)`` writes (``AscendC::VdeqInfo``).

    Each field is a sequence of 16 values: ``vdeq_scale`` floats,
    ``vdeq_offset`` ints (the low 9 bits count) and ``vdeq_sign_mode`` bools.
    """

    _fields_ = (("vdeq_scale", (0.0,) * VDEQ_TENSOR_SIZE, "list"),
                ("vdeq_offset", (0,) * VDEQ_TENSOR_SIZE, "list"),
                ("vdeq_sign_mode", (False,) * VDEQ_TENSOR_SIZE, "list"))


@overload
def fused_mul_add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int,
                  is_set_mask: bool = True) -> None: ...
@overload
def fused_mul_add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                  repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def fused_mul_add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
                  repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def fused_mul_add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 * dst + src1``, product and sum each rounded to the type (``AscendC::FusedMulAdd``)."""


@overload
def fused_mul_add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int,
                       is_set_mask: bool = True) -> None: ...
@overload
def fused_mul_add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                       repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def fused_mul_add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int],
                       repeat_times: int, repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def fused_mul_add_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src0 * dst + src1, 0)`` (``AscendC::FusedMulAddRelu``)."""


@overload
def mul_add_dst(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int,
                is_set_mask: bool = True) -> None: ...
@overload
def mul_add_dst(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def mul_add_dst(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
                repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def mul_add_dst(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = src0 * src1 + dst`` (``AscendC::MulAddDst``); float16 sources may accumulate into float32."""


@overload
def add_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None: ...
@overload
def add_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                  repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def add_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
                  repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def add_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = cast(max(src0 + src1, 0))`` to dst's type (``AscendC::AddReluCast``)."""


@overload
def sub_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None: ...
@overload
def sub_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                  repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def sub_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
                  repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def sub_relu_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = cast(max(src0 - src1, 0))`` to dst's type (``AscendC::SubReluCast``)."""


@overload
def mul_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None: ...
@overload
def mul_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
             repeat_params: BinaryRepeatParams) -> None: ...
@overload
def mul_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
             repeat_params: BinaryRepeatParams) -> None: ...
@builtin
def mul_cast(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = cast(src0 * src1)`` to dst's type (``AscendC::MulCast``)."""


@overload
def add_deq_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int,
                 is_set_mask: bool = True) -> None: ...
@overload
def add_deq_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: int, repeat_times: int,
                 repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@overload
def add_deq_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, mask: list[int], repeat_times: int,
                 repeat_params: BinaryRepeatParams, is_set_mask: bool = True) -> None: ...
@builtin
def add_deq_relu(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """``dst = max((src0 + src1) * scale, 0)`` with DEQSCALE's float16 scale (``AscendC::AddDeqRelu``)."""


@overload
def cast_deq(dst: LocalTensor, src: LocalTensor, count: int, is_vec_deq: bool = True,
             half_block: bool = True) -> None: ...
@overload
def cast_deq(dst: LocalTensor, src: LocalTensor, mask: int, repeat_times: int, repeat_params: UnaryRepeatParams,
             is_set_mask: bool = True, is_vec_deq: bool = True, half_block: bool = True) -> None: ...
@overload
def cast_deq(dst: LocalTensor, src: LocalTensor, mask: list[int], repeat_times: int,
             repeat_params: UnaryRepeatParams, is_set_mask: bool = True, is_vec_deq: bool = True,
             half_block: bool = True) -> None: ...
@builtin
def cast_deq(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """int16 -> int8/uint8: ``cast(src * scale + offset)`` with DEQSCALE's configuration (``AscendC::CastDeq``)."""


@overload
def set_deq_scale(scale: float) -> None: ...
@overload
def set_deq_scale(scale: float, offset: int, sign_mode: bool) -> None: ...
@overload
def set_deq_scale(vdeq: LocalTensor, vdeq_info: VdeqInfo) -> None: ...
@builtin
def set_deq_scale(*args: Any, **kwargs: Any) -> None:
    """Set the DEQSCALE register (``AscendC::SetDeqScale``).

    ``scale`` alone: the float16 scale of ``add_deq_relu``.  ``scale, offset,
    sign_mode``: the configuration of ``cast_deq(..., is_vec_deq=False)``.
    ``vdeq, vdeq_info``: writes 16 configurations into the uint64 tensor
    ``vdeq`` (128 bytes) and points the register at it, for
    ``cast_deq(..., is_vec_deq=True)``.
    """


# the (source, destination) data types each instruction takes on Atlas A2/A3 (the library's type checks and
# each API page); the rules check them, the docstrings list them
DTYPES = {
    fused_mul_add: ((float16, float16), (float32, float32)),
    fused_mul_add_relu: ((float16, float16), (float32, float32)),
    mul_add_dst: ((float16, float16), (float32, float32), (float16, float32)),
    add_relu_cast: ((float16, int8), (float32, float16), (int16, int8)),
    sub_relu_cast: ((float16, int8), (float32, float16), (int16, int8)),
    mul_cast: ((float16, int8), (float16, uint8)),
    add_deq_relu: ((int32, float16),),
    cast_deq: ((int16, int8), (int16, uint8)),
}
document_dtypes(DTYPES)
