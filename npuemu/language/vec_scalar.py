"""Vector-scalar instructions: ``dst = src (op) scalar`` element-wise on UB tensors.

Every instruction has three forms (as pyasc):

* ``op(dst, src, scalar, count, is_set_mask=True)`` - the first ``count`` elements;
* ``op(dst, src, scalar, mask=int, repeat_times=r, repeat_params=UnaryRepeatParams(...),
  is_set_mask=True)`` - ``r`` repeats of 256 bytes, the first ``mask`` lanes of each;
* ``op(dst, src, scalar, mask=[mask0, mask1], ...)`` - a 128-bit lane mask.

``scalar`` is a number (constant or run time); it is converted to the tensors'
element type before the operation, as on hardware.  With ``is_set_mask=False``
the count form ignores ``count`` and runs one repeat under the mask register
(in counter mode: the element count set with ``set_vector_mask``), as Ascend
C does.  ``axpy`` has no ``is_set_mask`` in its count form.
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["adds", "muls", "maxs", "mins", "leaky_relu", "shift_left", "shift_right", "axpy"]


@builtin
def adds(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src + scalar`` (``AscendC::Adds``); float16, float32, int16, int32."""


@builtin
def muls(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src * scalar`` (``AscendC::Muls``); float16, float32, int16, int32."""


@builtin
def maxs(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = max(src, scalar)`` (``AscendC::Maxs``); float16, float32, int16, int32."""


@builtin
def mins(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = min(src, scalar)`` (``AscendC::Mins``); float16, float32, int16, int32."""


@builtin
def leaky_relu(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src if src >= 0 else src * scalar`` (``AscendC::LeakyRelu``); float16, float32."""


@builtin
def shift_left(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src << scalar`` (``AscendC::ShiftLeft``); int16, uint16, int32, uint32; ``0 <= scalar <= bits``."""


@builtin
def shift_right(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src >> scalar`` (``AscendC::ShiftRight``): arithmetic for signed, logical for unsigned types.

    int16, uint16, int32, uint32; ``0 <= scalar <= bits``.
    """


@builtin
def axpy(dst: Any, src: Any, scalar: Any, *args: Any, **kwargs: Any) -> None:
    """``dst = src * scalar + dst`` (``AscendC::Axpy``).

    (src, dst) dtypes: (float16, float16), (float32, float32) and (float16,
    float32); the scalar has the source's type.  The mixed form runs 64 lanes
    per repeat.  Forms: ``axpy(dst, src, scalar, count)`` and the two level-0
    forms with UnaryRepeatParams.
    """
