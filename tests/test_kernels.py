"""The bundled kernels against their NumPy references, in every dtype they support.

Shapes include single elements, sizes that are not a multiple of the tile or of
32 bytes, and rows narrower than one 32-byte block.  Exact kernels must match
bit for bit; the others within the tolerance documented in docs/kernels.md.
"""
from __future__ import annotations

import numpy as np
import pytest

from npuemu.kernels.catalog import KERNELS, compare

CASES = [(k, d) for k in KERNELS for d in k.dtypes]


@pytest.mark.parametrize("kernel,dtype", CASES, ids=[f"{k.name}-{d}" for k, d in CASES])
def test_bundled_kernel_matches_numpy(kernel, dtype, rng):
    for shape in kernel.test_shapes:
        inputs = kernel.make_inputs(rng, dtype, shape)
        out = kernel.run(*inputs)
        ref = kernel.reference(*inputs)
        assert out.shape == ref.shape and out.dtype == ref.dtype
        ok, err = compare(out, ref, kernel.tol(dtype))
        assert ok, f"{kernel.name} {dtype} {shape}: max error {err}"


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_debug_mode_gives_identical_results(kernel, rng):
    """The generated code run by CPython and by Numba agree bit for bit."""
    dtype = kernel.dtypes[-1]
    shape = kernel.test_shapes[2]
    inputs = kernel.make_inputs(rng, dtype, shape)
    compiled = kernel.run(*inputs)
    debug = kernel.run(*inputs, debug=True)
    assert np.array_equal(np.ascontiguousarray(compiled).view(np.uint8),
                          np.ascontiguousarray(debug).view(np.uint8))


def test_kernels_use_many_cores_and_small_platforms(rng):
    """Tiling follows the platform: a custom part with 7 cores and a 64 KiB UB still gets exact results."""
    from npuemu.kernels import add
    from npuemu.platform import Platform
    small = Platform.custom("tiny-7core", aiv_count=7, ub_size=64 * 1024)
    x = rng.standard_normal(100_003).astype(np.float32)
    y = rng.standard_normal(100_003).astype(np.float32)
    assert np.array_equal(add.add(x, y, platform=small), x + y)
