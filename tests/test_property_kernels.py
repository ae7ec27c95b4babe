"""Property tests of the bundled kernels: emulated results match NumPy for Hypothesis-drawn inputs.

For every bundled kernel Hypothesis draws a shape (1, primes, sizes one past
a 32-byte block, ...), one of the kernel's dtypes and a platform (the default
profile or a small custom one: few cores, small UB, hence many tiles and
short tails), launches the kernel and compares it with its NumPy reference at
the tolerance docs/kernels.md documents; the tiling each launch ran with is
checked against the invariants too.

Shapes are run-time values; dtypes and platforms select kernel
specialisations, each a Numba compilation of seconds.  The CI profile
therefore launches in debug mode: the same generated code run by CPython,
bit-identical to the compiled kernel (tests/test_kernels.py checks that for
every bundled kernel), with no compilation per specialisation.  The thorough
profile launches compiled kernels on three profiles.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from npuemu.host.tiling import TilingError
from npuemu.kernels.catalog import KERNELS
from npuemu.testing import assert_kernel_matches, profiles
from npuemu.testing import strategies as nst
from npuemu.testing.bundled import assert_bundled_tiling, record_tilings

SMALL = nst.make_platform(aiv_count=7, aic_count=3, ub_size=48 * 1024)

if profiles.selected() == "thorough":
    LAUNCH: dict = {}
    PLATFORMS: tuple = ("Ascend910B1", "Ascend910B4", SMALL)
else:
    LAUNCH = {"debug": True}
    PLATFORMS = ("Ascend910B1", SMALL)


def shapes_for(kernel) -> st.SearchStrategy[tuple[int, ...]]:
    if len(kernel.demo_shape) == 2:
        return nst.row_shapes(max_rows=300, max_cols=2000, max_size=1 << 16)
    return nst.shapes(max_dims=2, max_size=1 << 17)


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
@profiles.settings(ci=6, thorough=60)
@given(data=st.data(), seed=nst.seeds())
def test_bundled_kernel_matches_numpy(kernel, data, seed):
    dtype = data.draw(nst.dtypes_for(kernel), label="dtype")
    platform = data.draw(st.sampled_from(PLATFORMS), label="platform")
    shape = data.draw(shapes_for(kernel), label="shape")
    inputs = kernel.make_inputs(np.random.default_rng(seed), dtype, shape)
    with record_tilings() as tilings:
        try:
            assert_kernel_matches(kernel.run, kernel.reference, inputs, tolerance=kernel.tol(dtype),
                                  platform=platform, **LAUNCH)
        except TilingError as exc:
            assert "bytes of UB" in str(exc), exc
            assume(False)               # this shape does not fit the platform's UB (the tiling says so)
    assert tilings
    for t in tilings:
        assert_bundled_tiling(t.tiling_fn, t.ctx, t.result)
