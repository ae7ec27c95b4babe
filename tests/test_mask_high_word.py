"""A bit mask ``[mask0, mask1]`` on 32- and 64-bit dtypes: ``mask1`` is ignored (only 64 or 32 lanes exist, and
the library's mask check does not look at it there); a 64-bit dtype's ``mask0`` must still fit in 32 bits.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 64
P = asc.BinaryRepeatParams()
U = asc.UnaryRepeatParams()
LO = 0x0F0F_00FF_F00F_0001          # float32 add: every bit counts (lanes 0..63)
LO64 = 0x8001_F00F                  # float32 -> int64 cast: 32 lanes
HI = 0x7000_0000_0000_0001          # ignored by both


@asc.jit
def masked_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, zi: asc.GlobalAddress, zr: asc.GlobalAddress, lo: int,
                  hi: int, lo64: int, hi64: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    zig = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg.set_global_buffer(z, N)
    zig.set_global_buffer(zi, 32)
    zrg = asc.GlobalTensor()
    zrg.set_global_buffer(zr, 8)
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, N)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 1024, N)
    ci = asc.LocalTensor(asc.int64, asc.TPosition.VECOUT, 2048, 32)
    r = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, 8)
    tmp = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 8192, N)
    asc.data_copy(a, xg, N)
    asc.data_copy(c, zg, N)
    asc.data_copy(ci, zig, 32)
    asc.add(c, a, a, [lo, hi], 1, P)
    asc.cast(ci, a, asc.RoundMode.CAST_RINT, [lo64, hi64], 1, U)
    asc.reduce_max(r, a, tmp, [lo, hi], 1, 8)   # a library routine's own mask follows the same rule
    asc.data_copy(zg, c, N)
    asc.data_copy(zig, ci, 32)
    asc.data_copy(zrg, r, 8)


def lanes(bits: int, n: int) -> np.ndarray:
    return np.array([(bits >> e) & 1 for e in range(n)], bool)


def test_high_word_is_ignored_for_32_and_64_bit_types(rng, mode):
    x = rng.uniform(-100, 100, N).astype(np.float32)
    z = rng.uniform(-4, 4, N).astype(np.float32)
    zi = rng.integers(-1000, 1000, 32).astype(np.int64)
    want = np.where(lanes(LO, N), x + x, z)
    want_i = np.where(lanes(LO64, 32), np.rint(x[:32]).astype(np.int64), zi)
    zr = np.zeros(8, np.float32)
    masked_kernel[1](x, z, zi, zr, LO, HI, LO64, HI, **mode)
    np.testing.assert_array_equal(z, want)
    np.testing.assert_array_equal(zi, want_i)
    assert zr[0] == x[lanes(LO, N)].max()


def test_64_bit_low_word_beyond_32_lanes_is_still_an_error():
    x = np.ones(N, np.float32)
    with pytest.raises(errors.ParamRangeError) as info:
        masked_kernel[1](x, np.zeros(N, np.float32), np.zeros(32, np.int64), np.zeros(8, np.float32), LO,
                         HI, (1 << 40) | 1, 0, debug=True)
    assert ("bit mask mask[0] = 0x10000000001 sets lanes beyond the 32 lanes of a repeat of a 64-bit dtype: "
            "mask[0] must be at most 0xffffffff") in str(info.value)
