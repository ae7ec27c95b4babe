"""Data movement between GM and on-chip memory (``DataCopy``, ``DataCopyPad``)."""
from __future__ import annotations

from typing import Any

from .builtin import builtin

__all__ = ["data_copy", "data_copy_pad", "set_pad_value"]


@builtin
def data_copy(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """Copy between GM and local memory (``AscendC::DataCopy``).

    Forms: ``data_copy(dst, src, count)`` copies ``count`` elements; the byte
    count rounds down to a multiple of 32 as on hardware.
    ``data_copy(dst, src, DataCopyParams(...))`` copies ``block_count`` blocks
    of ``block_len`` 32-byte units with gaps ``src_stride``/``dst_stride``.
    """


@builtin
def data_copy_pad(dst: Any, src: Any, *args: Any, **kwargs: Any) -> None:
    """Unaligned copy GM<->UB with padding (``AscendC::DataCopyPad``)."""


@builtin
def set_pad_value(value: Any, pos: Any = None) -> None:
    """Value ``data_copy_pad`` writes into the padding (``AscendC::SetPadValue``)."""
