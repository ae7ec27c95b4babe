"""Host tiling of the high-level API's vector routines (CANN's ``SoftMaxTilingFunc``, ``GetRmsNormTilingInfo``, ...).

The functions keep CANN's names in snake_case and its formulas (Atlas A2/A3,
sizes in bytes):

* ``get_softmax_max_tmp_size(shape, dtype_size)`` =
  ``m * (32 / dtype_size + k + 64) * 4`` and ``get_softmax_min_tmp_size`` =
  ``(32 / dtype_size + k + 64) * 4`` for ``shape`` flattened to ``[m, k]``
  (``k`` the last axis; ``dtype_size`` is that of ``sum``/``max``);
* ``softmax_tiling_func(shape, dtype_size, local_work_size)``: rows per round
  ``split_m = min(local_work_size / 4 / (32 / dtype_size + k + 64), m)``,
  rounded down to a multiple of 8 when it is below ``m`` and above 8; for a
  basic-block shape (``m % 8 == 0``, ``k % 64 == 0``, ``split_m > 8``) further
  lowered to a divisor of ``m`` that is a multiple of 8 and halved while
  ``split_m * k >= 16384``; then ``range_m = m / split_m``,
  ``tail_m = m % split_m`` and the sizes that follow;
* ``get_rms_norm_max_min_tmp_size(shape, type_size)`` for ``[b, s, h]``:
  max ``(b*s*h * c + round_up(b*s, 32 / type_size)) * 4``, min
  ``(h * c + 8) * 4``, ``c`` = 2 for float16, 1 for float32;
* ``get_rms_norm_tiling_info(shape, original_shape, stack_buffer_size, type_size)``:
  the largest ``bs`` with ``bs * h * c + round_up(bs, 8) <= stack_buffer_size / 4``
  (at most ``b*s``, at most 255, or a multiple of 8 for a basic block), then
  ``loop_round = b*s*h / (bs*h)`` and the tail.

* ``get_math_max_min_tmp_size(name, shape, type_size)``: the math routines'
  scratch (see its docstring).

Invalid arguments raise :class:`npuemu.errors.TilingError` (CANN returns
false or logs an error).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..errors import TilingError
from ..language import adv_math as am
from ..language.adv_tiling import RmsNormTiling, SoftmaxTiling
from ..language.dtype import float16, float32

__all__ = ["get_softmax_max_tmp_size", "get_softmax_min_tmp_size", "softmax_tiling_func",
           "get_rms_norm_max_min_tmp_size", "get_rms_norm_tiling_info", "get_math_max_min_tmp_size"]

_BLOCK = 32
_UNIT = 64          # SOFTMAX_BASICBLOCK_UNIT
_TILE = 8           # BASIC_TILE_NUM: float32 elements per block


def _rows_cols(shape: Sequence[int], dtype_size: int, what: str) -> tuple[int, int]:
    if dtype_size not in (2, 4):
        raise TilingError(f"{what}: dtype_size must be 2 (float16) or 4 (float32), got {dtype_size}")
    if not shape or any(int(d) <= 0 for d in shape):
        raise TilingError(f"{what}: shape {tuple(shape)} must have positive dimensions")
    k = int(shape[-1])
    m = math.prod(int(d) for d in shape) // k
    if k * dtype_size % _BLOCK:
        raise TilingError(f"{what}: the last axis ({k} elements of {dtype_size} bytes) must be 32-byte aligned")
    return m, k


def get_softmax_max_tmp_size(shape: Sequence[int], dtype_size: int, is_reuse_source: bool = False) -> int:
    """The scratch (bytes) with which ``softmax`` does every row in one round (CANN ``GetSoftMaxMaxTmpSize``)."""
    m, k = _rows_cols(shape, dtype_size, "get_softmax_max_tmp_size")
    return m * (_BLOCK // dtype_size + k + _UNIT) * 4


def get_softmax_min_tmp_size(shape: Sequence[int], dtype_size: int, is_reuse_source: bool = False) -> int:
    """The smallest scratch (bytes) ``softmax`` works with: one row per round (CANN ``GetSoftMaxMinTmpSize``)."""
    _, k = _rows_cols(shape, dtype_size, "get_softmax_min_tmp_size")
    return (_BLOCK // dtype_size + k + _UNIT) * 4


def softmax_tiling_func(shape: Sequence[int], dtype_size: int, local_work_size: int) -> SoftmaxTiling:
    """The :class:`SoftmaxTiling` for ``src`` of ``shape`` and a scratch of ``local_work_size`` bytes."""
    m, k = _rows_cols(shape, dtype_size, "softmax_tiling_func")
    if local_work_size < 0:
        raise TilingError(f"softmax_tiling_func: local_work_size {local_work_size} is negative")
    blk = _BLOCK // dtype_size
    base_m = min(local_work_size // 4 // (blk + k + _UNIT), m)
    if _TILE < base_m < m:
        base_m = base_m // _TILE * _TILE
    if base_m > _TILE and m % _TILE == 0 and k % _UNIT == 0:        # basic block
        base_m = base_m // _TILE * _TILE
        while m % base_m:
            base_m -= _TILE
        while base_m * k >= _UNIT * 256:
            base_m //= 2
    range_m, tail = (m // base_m, m % base_m) if base_m else (0, 0)
    return SoftmaxTiling(
        src_m=m, src_k=k, src_size=m * k, out_max_m=m, out_max_k=blk, out_max_size=m * blk,
        split_m=base_m, split_k=k, split_size=base_m * k, reduce_m=base_m, reduce_k=blk, reduce_size=base_m * blk,
        range_m=range_m, tail_m=tail, tail_split_size=tail * k, tail_reduce_size=tail * blk)


def _bsh(shape: Sequence[int], what: str) -> tuple[int, int, int]:
    if len(shape) != 3 or any(int(d) <= 0 for d in shape):
        raise TilingError(f"{what}: shape must be [b, s, h] with positive dimensions, got {tuple(shape)}")
    return int(shape[0]), int(shape[1]), int(shape[2])


def _basic_ok(b: int, s: int, h: int) -> bool:
    return h % 64 == 0 and (b * s) % 8 == 0 and h < 2048


def get_rms_norm_max_min_tmp_size(shape: Sequence[int], type_size: int,
                                  is_basic_block: bool = False) -> tuple[int, int]:
    """``(max, min)`` scratch in bytes for ``rmsnorm`` on ``[b, s, h]`` (CANN ``GetRmsNormMaxMinTmpSize``)."""
    b, s, h = _bsh(shape, "get_rms_norm_max_min_tmp_size")
    if is_basic_block and not _basic_ok(b, s, h):
        raise TilingError("get_rms_norm_max_min_tmp_size: a basic block needs h % 64 == 0, h < 2048 and "
                          f"b * s % 8 == 0, got b * s = {b * s}, h = {h}")
    c = 2 if type_size == 2 else 1
    unit = _BLOCK // type_size
    bs_align = (b * s + unit - 1) // unit * unit
    return (b * s * h * c + bs_align) * 4, (h * c + _TILE) * 4


def get_rms_norm_tiling_info(shape: Sequence[int], original_shape: Sequence[int], stack_buffer_size: int,
                             type_size: int, is_basic_block: bool = False) -> RmsNormTiling:
    """The :class:`RmsNormTiling` for ``src`` of ``shape`` (``original_shape``: ``h`` before padding) and a
    scratch of ``stack_buffer_size`` bytes (CANN ``GetRmsNormTilingInfo``)."""
    b, s, h = _bsh(shape, "get_rms_norm_tiling_info")
    ob, os_, oh = _bsh(original_shape, "get_rms_norm_tiling_info")
    if (ob, os_) != (b, s) or oh > h:
        raise TilingError(f"get_rms_norm_tiling_info: original shape {tuple(original_shape)} does not match "
                          f"{tuple(shape)} (same b and s, original h <= h)")
    if h * type_size % _BLOCK:
        raise TilingError(f"get_rms_norm_tiling_info: h = {h} elements of {type_size} bytes is not 32-byte aligned")
    if is_basic_block and not _basic_ok(b, s, h):
        raise TilingError("get_rms_norm_tiling_info: a basic block needs h % 64 == 0, h < 2048 and b * s % 8 == 0")
    minimum = get_rms_norm_max_min_tmp_size(shape, type_size)[1]
    if stack_buffer_size < minimum:
        raise TilingError(f"get_rms_norm_tiling_info: stack_buffer_size {stack_buffer_size} is below the minimum "
                          f"{minimum} bytes")
    c = 2 if type_size == 2 else 1
    total = stack_buffer_size // 4
    bs = 1
    while total >= (bs + 1) * h * c + (bs + 1 + _TILE - 1) // _TILE * _TILE:
        bs += 1
    one = min(bs * h, b * s * h)
    bs = one // h
    if is_basic_block:
        bs = bs if bs < _TILE else bs // _TILE * _TILE
    else:
        bs = min(bs, 255)
    one = bs * h
    n = b * s * h
    tail = n % one
    return RmsNormTiling(
        b_length=b, s_length=s, h_length=h, original_h_length=oh, reciprocal_of_h_length=float(np.float32(1.0 / oh)),
        main_bsh_length=one, main_bs_length=bs, main_bs_length_align=(bs + _TILE - 1) // _TILE * _TILE,
        loop_round=n // one, input_tail_pos=n - tail, tail_bsh_length=tail, tail_bs_length=tail // h)


_MAX_VARIANT = {"acosh": "per_element", "sin": "linear", "sign": "linear", "xor": "linear", "exp": "float"}


def get_math_max_min_tmp_size(name: str, shape: Sequence[int], type_size: int,
                              is_reuse_source: bool = False) -> tuple[int, int]:
    """``(max, min)`` scratch in bytes of ``asc.adv.<name>`` on ``shape`` (CANN ``GetXxxMaxMinTmpSize``).

    ``min = P * 256`` with ``P`` the routine's factor (``npuemu.language.adv_math.MIN_TMP``); ``max`` is
    ``P * max(n * type_size, 256)`` for ``n`` elements, except ``acosh`` (``max(P * n, 256) * type_size``),
    ``sin``, ``sign`` and ``xor`` (``max(P * n * type_size, min)``), ``exp`` (``P * max(4 n, 256)``, float32
    scratch) and ``power`` (tensor-tensor: float32 ``4 * max(4 n, 256) + 256``, float16
    ``14 * max(2 n, 128) + 256``, int32 ``6 * max(4 n, 256)``; ``type_size`` 4 means float32 here).
    """
    stub = getattr(am, name, None)
    if stub not in am.DTYPES:
        raise TilingError(f"get_math_max_min_tmp_size: {name!r} is not an asc.adv math routine")
    if type_size not in (2, 4):
        raise TilingError(f"get_math_max_min_tmp_size: type_size must be 2 or 4, got {type_size}")
    n = math.prod(int(d) for d in shape)
    if n <= 0:
        raise TilingError(f"get_math_max_min_tmp_size: shape {tuple(shape)} holds no element")
    dtype = float16 if type_size == 2 else float32
    if stub is am.xor:
        return max(n * type_size, 256), 256
    low = am.min_tmp_bytes(stub, dtype, is_reuse_source)
    if stub is am.power:
        big = 14 * max(2 * n, 128) + 256 if type_size == 2 else 4 * max(4 * n, 256) + 256
        return big, low
    p = low // 256
    variant = _MAX_VARIANT.get(name)
    if variant == "per_element":
        big = max(p * n, 256) * type_size
    elif variant == "linear":
        big = max(p * n * type_size, low)
    elif variant == "float":
        big = p * max(4 * n, 256)
    else:
        big = p * max(n * type_size, 256)
    return big, low
