"""GM regions of a launch: a byte view of each array argument.

Arrays are used in place: a C-contiguous NumPy array (or torch CPU tensor) is
viewed as bytes and becomes one GM region, so a kernel's writes land directly
in the caller's array.  Arrays that are not C-contiguous are copied in and
back out around the launch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import GMBuffer, as_array
from ..errors import LaunchError
from ..language import dtype as dt


@dataclass
class Region:
    """One GM region of a launch: a byte view of an argument array (or an npuemu buffer)."""

    name: str
    bytes: np.ndarray               # uint8, 1-D, C-contiguous
    dtype: dt.DataType
    writeback: np.ndarray | None = None   # original non-contiguous array to copy results into
    initialized: bool = True        # False: a kernel must write bytes before reading them

    def finish(self) -> None:
        if self.writeback is not None:
            self.writeback[...] = self.bytes.view(self.writeback.dtype).reshape(self.writeback.shape)


def region_for(name: str, value: Any) -> Region:
    arr, kdt = as_array(value)  # type: ignore[misc]
    initialized = not isinstance(value, GMBuffer) or value.initialized
    if not arr.flags.writeable:
        raise LaunchError(f"argument '{name}' is a read-only array; kernels may write any GM argument")
    if arr.flags.c_contiguous:
        return Region(name, arr.reshape(-1).view(np.uint8), kdt, initialized=initialized)
    tmp = np.ascontiguousarray(arr)
    return Region(name, tmp.reshape(-1).view(np.uint8), kdt, writeback=arr, initialized=initialized)
