"""Host side of ``ListTensorDesc``: GM addresses of npuemu's virtual GM, and descriptor buffers built from them.

A kernel sees GM through its array arguments; npuemu gives array argument
``k`` (counting only arrays, in parameter order) the virtual address range
starting at ``(k + 1) * 2**32``.  A ``ListTensorDesc`` buffer holds such
addresses as its data pointers, so the host builds it knowing which argument
will hold each tensor's data.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

GM_ADDRESS_STRIDE = 1 << 32          # as npuemu.isa.debug: argument k starts at (k + 1) * 2**32
_WORD = np.uint64


def gm_address(arg: int, byte_offset: int = 0) -> int:
    """The virtual GM address of byte ``byte_offset`` of array argument ``arg`` (0-based, arrays only)."""
    if arg < 0:
        raise ValueError(f"argument index must be >= 0, got {arg}")
    if not 0 <= byte_offset < GM_ADDRESS_STRIDE:
        raise ValueError(f"byte offset {byte_offset} is outside [0, 2**32)")
    return (arg + 1) * GM_ADDRESS_STRIDE + byte_offset


def list_tensor_desc(tensors: Sequence[tuple[int, Sequence[int]] | tuple[int, Sequence[int], int]],
                     pointers_only: bool = False) -> np.ndarray:
    """A ``ListTensorDesc`` buffer (uint64 words) describing ``tensors``.

    Each entry is ``(arg, shape)`` or ``(arg, shape, byte_offset)``: the tensor's
    data is array argument ``arg`` of the launch, from ``byte_offset`` on, and
    ``shape`` its dimensions (every tensor of a list has as many).  With
    ``pointers_only`` the buffer holds the data pointers alone (dimension 0).
    Pass the array as a ``GlobalAddress`` argument and give it to
    ``asc.ListTensorDesc(addr, len(buf) * 8, len(tensors))``.
    """
    if not tensors:
        raise ValueError("a ListTensorDesc describes at least one tensor")
    ptrs = [gm_address(t[0], t[2] if len(t) > 2 else 0) for t in tensors]
    if pointers_only:
        return np.array([24, len(tensors) << 32, 0xFFFFFFFF, *ptrs], dtype=_WORD)
    dims = {len(t[1]) for t in tensors}
    if len(dims) != 1 or 0 in dims:
        raise ValueError(f"every tensor of a ListTensorDesc has the same number of dimensions (at least 1), "
                         f"got {sorted(dims)}")
    dim = dims.pop()
    words: list[int] = [0]
    for i, t in enumerate(tensors):
        words.append((i << 32) | dim)
        words.extend(int(s) for s in t[1])
    words[0] = len(words) * 8
    return np.array(words + ptrs, dtype=_WORD)
