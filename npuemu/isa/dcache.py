"""The scalar unit's data cache (DCache): per core, write-back, 64-byte lines.

``dc`` is one byte array shared by every core of a launch; each core owns
the slice at its ``st[CORE_SLOT]``.  Scalar GM accesses (``get_value``,
``set_value``, ``g(i)``) go through it; DMA does not.
"""
from __future__ import annotations


def dc_bytes(ncores: int) -> int:
    """Size of the shared DCache array for ``ncores`` cores."""
    return 1
