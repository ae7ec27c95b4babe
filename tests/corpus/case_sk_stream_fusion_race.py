"""SuperKernel with stream fusion: two sub-kernels of different graph streams share data with no event.

Under ``stream-fusion=1`` the inter-kernel barriers give way to syncs along
each graph stream and each event.  Sub-kernel b (stream 1) reads what
sub-kernel a (stream 0) wrote on another core, but nothing orders them: core
0 may run b before core 1 has finished a (wrong data on hardware).  The fix
adds the event a -> b, which becomes a vec:vec sync.
"""
from __future__ import annotations

import numpy as np

from npuemu import superkernel as sk
from npuemu.errors import RaceError

from superkernel_kernels import relay_kernel

EXPECT = (RaceError, "stream-fusion=1: nothing orders sub-kernel 1 'b'")
LEVELS = ("full",)


def run(fixed: bool, **launch) -> None:
    x, y, z = np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32)
    a = sk.Launch(relay_kernel, 2, (x, y, 0), launch, name="a", stream=0)
    b = sk.Launch(relay_kernel, 2, (y, z, 1), launch, name="b", stream=1)
    sk.combine([a, b], "stream-fusion=1", events=[("a", "b")] if fixed else ()).run()
    np.testing.assert_array_equal(z, np.roll(x, -8))
