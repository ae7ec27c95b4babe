"""A kernel reads back part of a GM workspace it has not written yet.

``z`` is passed uninitialised (``npuemu.gm_buffer(z, initialized=False)``, as
``run_op`` passes a workspace): the kernel writes its first half and reads
its second half.  On hardware that reads whatever the memory held before.
"""
from __future__ import annotations

from npuemu.errors import UninitializedReadError

from .intra_core_kernels import UNINIT_GM, run_ub

EXPECT = (UninitializedReadError, "MTE2 read of GM bytes [256, 512) of GM argument 'z' (512 bytes), which nothing has written")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    run_ub(UNINIT_GM, fixed, **launch)
