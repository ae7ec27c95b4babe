"""A vector op reads UB that nothing has written.

The kernel copies half a tile in and adds over the whole tile: the second
half is whatever an earlier kernel left in UB.
"""
from __future__ import annotations

from npuemu.errors import UninitializedReadError

from .intra_core_kernels import UNINIT, run_ub

EXPECT = (UninitializedReadError, 'V read of UB bytes [128, 256), which nothing has written')
LEVELS = ('full',)


def run(fixed: bool, **launch) -> None:
    run_ub(UNINIT, fixed, **launch)
