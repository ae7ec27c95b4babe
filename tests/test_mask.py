"""The mask register: set_vector_mask encodings, normal and counter mode, reset_mask, and what count-form
instructions leave behind.  ``add`` with ``is_set_mask=False`` is the probe: it computes exactly the lanes
the register enables.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

R = 256            # elements per probe region (two float16 repeats, four float32 repeats)
P = asc.BinaryRepeatParams()
LO, HI = 0x0000_0000_0000_F00F, 0x8000_0000_0000_0001


@asc.jit
def mask_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, xf: asc.GlobalAddress, zf: asc.GlobalAddress,
                n: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, R)
    zg.set_global_buffer(z, 6 * R)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, R)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 6 * R)
    asc.data_copy(a, xg, R)
    asc.data_copy(c, zg, 6 * R)
    asc.reset_mask()
    asc.add(c, a, a, 0, 1, P, is_set_mask=False)                    # every lane of one repeat
    asc.set_vector_mask(n, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
    asc.add(c[R:], a, a, 0, 2, P, is_set_mask=False)                # the first n lanes of each repeat
    asc.set_vector_mask(HI, LO, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
    asc.add(c[2 * R:], a, a, 0, 2, P, is_set_mask=False)            # the bits, in each repeat
    asc.set_mask_count()
    asc.set_vector_mask(200, dtype=asc.float16, mode=asc.MaskMode.COUNTER)
    asc.add(c[3 * R:], a, a, 0, 1, P, is_set_mask=False)            # 200 elements, repeat_times ignored
    # a count-form instruction leaves normal mode with every lane enabled behind
    asc.add(c[5 * R:], a, a, 16)
    asc.add(c[4 * R:], a, a, 0, 1, P, is_set_mask=False)
    asc.data_copy(zg, c, 6 * R)
    # float32 reads the low 64 bits of the register: reset_mask's all-ones and a length over 64 both
    # mean all 64 lanes
    xfg = asc.GlobalTensor()
    zfg = asc.GlobalTensor()
    xfg.set_global_buffer(xf, R)
    zfg.set_global_buffer(zf, 2 * R)
    af = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 8192, R)
    cf = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 9216, 2 * R)
    asc.data_copy(af, xfg, R)
    asc.data_copy(cf, zfg, 2 * R)
    asc.reset_mask()
    asc.add(cf, af, af, 0, 1, P, is_set_mask=False)
    asc.set_vector_mask(100, dtype=asc.float32, mode=asc.MaskMode.NORMAL)
    asc.add(cf[R:], af, af, 0, 2, P, is_set_mask=False)
    asc.reset_mask()
    asc.data_copy(zfg, cf, 2 * R)


def test_mask_register(rng, mode):
    n = 70
    x = rng.uniform(-4, 4, R).astype(np.float16)
    z = rng.uniform(-4, 4, 6 * R).astype(np.float16)
    xf = rng.uniform(-4, 4, R).astype(np.float32)
    zf = rng.uniform(-4, 4, 2 * R).astype(np.float32)
    twice, twicef = x + x, xf + xf

    def expect(region, enabled):
        out = z[region * R:(region + 1) * R].copy()
        out[enabled] = twice[enabled]
        return out

    lane = [e % 128 for e in range(R)]
    bit = np.array([(LO >> e) & 1 if e < 64 else (HI >> (e - 64)) & 1 for e in lane], bool)
    want = np.concatenate([
        expect(0, np.arange(R) < 128),
        expect(1, np.array(lane) < n),
        expect(2, bit),
        expect(3, np.arange(R) < 200),
        expect(4, np.arange(R) < 128),
        np.where(np.arange(R) < 16, twice, z[5 * R:]),
    ])
    wantf = zf.copy()
    wantf[:64] = twicef[:64]
    wantf[R:R + 128] = twicef[:128]
    mask_kernel[1](x, z, xf, zf, n, **mode)
    for k, name in enumerate(("reset_mask", "length", "bits", "counter", "after a count form", "count form")):
        np.testing.assert_array_equal(z[k * R:(k + 1) * R], want[k * R:(k + 1) * R], err_msg=name)
    np.testing.assert_array_equal(zf, wantf)


@asc.jit
def missing_mode_kernel(x: asc.GlobalAddress):
    asc.set_vector_mask(64, dtype=asc.float16)


@asc.jit
def three_words_kernel(x: asc.GlobalAddress):
    asc.set_vector_mask(1, 2, 3, dtype=asc.float16, mode=asc.MaskMode.NORMAL)


@asc.jit
def bad_mode_kernel(x: asc.GlobalAddress):
    asc.set_vector_mask(64, dtype=asc.float16, mode=3)


@pytest.mark.parametrize("kernel, error, message", [
    (missing_mode_kernel, errors.KernelCompileError, "missing required keyword argument 'mode'"),
    (three_words_kernel, errors.KernelCompileError, r"takes \(length\) or \(mask_high, mask_low\)"),
    (bad_mode_kernel, errors.KernelTypeError, "mode must be an asc.MaskMode"),
])
def test_set_vector_mask_misuse(kernel, error, message):
    with pytest.raises(error, match=message):
        kernel[1](np.zeros(8, np.float16))


@asc.jit
def negative_length_kernel(n: int):
    asc.set_vector_mask(n, dtype=asc.float16, mode=asc.MaskMode.COUNTER)


def test_negative_length_is_a_fault():
    with pytest.raises(errors.ParamRangeError, match="set_vector_mask length -5 is negative"):
        negative_length_kernel[1](-5)
