"""Cores scalar-write different words of one 64-byte line: the last write-back wins the whole line.

Each core writes its own int32 slot of ``flags`` with ``set_value``, waits
for the others at ``sync_all`` and then cleans its line.  With slots 4 bytes
apart every core has cached (and dirtied) the same line before any of them
writes it back, so each write-back stores that core's copy of the whole
line and only the last core's flag survives.  The fix gives every core its
own 64-byte line (slots 16 int32 apart).
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import DCacheError

EXPECT = (DCacheError, "lost write")
LEVELS = ("full",)
CORES = 4


@asc.jit
def flags_kernel(flags: asc.GlobalAddress, stride: int):
    fg = asc.GlobalTensor()
    fg.set_global_buffer(flags)
    i = asc.get_block_idx()
    fg.set_value(i * stride, i + 1)
    asc.sync_all()
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, fg[i * stride:])


def run(fixed: bool, **launch) -> np.ndarray:
    if not hasattr(asc, "sync_all"):
        pytest.skip("needs sync_all")
    stride = 16 if fixed else 1
    flags = np.zeros(CORES * 16, np.int32)
    flags_kernel[CORES](flags, stride, kernel_type=asc.KernelType.MIX_AIV_1_0, **launch)
    if fixed:
        want = np.zeros(CORES * 16, np.int32)
        want[::16] = np.arange(1, CORES + 1)
        np.testing.assert_array_equal(flags, want)
    return flags
