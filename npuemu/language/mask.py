"""The vector mask register: which lanes level-0 vector instructions compute.

``set_mask_norm()`` (the default) makes the register a 128-bit lane mask
applied to every repeat; ``set_mask_count()`` makes it a total element count
(repeat_times is then ignored).  ``set_vector_mask`` writes it for the
instructions called with ``is_set_mask=False``; ``reset_mask()`` enables all
lanes again.  A count-form instruction (``add(dst, a, b, count)``) uses the
register itself and leaves it in normal mode with all lanes enabled, as the
Ascend C library does on Atlas A2.
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["set_mask_count", "set_mask_norm", "set_vector_mask", "reset_mask", "MASK_PLACEHOLDER"]

# the value to pass as ``mask`` when is_set_mask=False makes it meaningless (Ascend C's MASK_PLACEHOLDER)
MASK_PLACEHOLDER = 0


@builtin
def set_mask_count() -> None:
    """Counter mode (``AscendC::SetMaskCount``): the mask register holds an element count."""


@builtin
def set_mask_norm() -> None:
    """Normal mode (``AscendC::SetMaskNorm``): the mask register holds per-lane bits."""


@builtin
def set_vector_mask(*args: Any, dtype: Any, mode: Any) -> None:
    """Write the mask register (``AscendC::SetVectorMask<T, mode>``).

    ``set_vector_mask(length, dtype=..., mode=...)``: with ``MaskMode.COUNTER``
    the register holds ``length`` elements; with ``MaskMode.NORMAL`` the first
    ``length`` lanes.  ``set_vector_mask(mask_high, mask_low, dtype=...,
    mode=...)`` writes the 128 bits directly (``mask_low``: lanes 0-63).
    ``mode`` chooses the encoding only; the register's mode is set with
    ``set_mask_count``/``set_mask_norm``.
    """


@builtin
def reset_mask() -> None:
    """Enable every lane again (``AscendC::ResetMask``)."""
