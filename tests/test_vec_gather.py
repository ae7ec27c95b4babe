"""gather / gatherb against a NumPy model: elements (or 32-byte blocks) picked by uint32 byte offsets."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import AlignmentError, BoundsError, KernelTypeError

N = 512           # source elements
NO = 512          # element offsets
NBO = 16          # block offsets (gatherb)
BITS = [0x00FF00F0FFFF0F0F, 0x8000000000000001]


def lanes_of(dtype):
    return 256 // np.dtype(dtype).itemsize


def lane_on(mask, e):
    if isinstance(mask, int):
        return e < mask
    word = mask[e // 64] if e // 64 < len(mask) else 0
    return bool((word >> (e % 64)) & 1)


def model(x, off, boff, out):
    """The expected destination after the kernel's five gathers."""
    L, esize, epb = lanes_of(x.dtype), x.itemsize, 32 // x.itemsize
    out = out.copy()
    n = L + 37
    out[:n] = x[off[:n] // esize]
    out[2 * L:2 * L + n] = x[(64 + off[L + 64:L + 64 + n]) // esize]
    mask = BITS if L == 128 else BITS[:1]
    for r in range(2):
        for e in range(L):
            if lane_on(mask, e):
                out[4 * L + r * 16 * epb + e] = x[off[r * L + e] // esize]
    raw = x.view(np.uint8)
    dst = out.view(np.uint8)
    base = 7 * L * esize
    for r in range(2):
        for k in range(8):
            a = int(boff[8 * r + k])
            d = base + (r * 16 + k * 2) * 32
            dst[d:d + 32] = raw[a:a + 32]
    out[11 * L:12 * L] = x[off[:L] // esize]
    return out


@asc.jit
def gather_run(x, off, boff, out, base, count, start):
    """Load one dtype's operands at UB byte ``base`` and gather; ``count`` and ``start`` shape the last call."""
    size = x.dtype.sizeof()
    L = 256 // size
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    og = asc.GlobalTensor()
    og.set_global_buffer(off, NO)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(boff, NBO)
    dg = asc.GlobalTensor()
    dg.set_global_buffer(out, 12 * L)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, base, N)
    offs = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, base + N * size, NO)
    boffs = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, base + N * size + NO * 4, NBO)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, base + N * size + NO * 4 + NBO * 4, 12 * L)
    asc.data_copy(src, xg, N)
    asc.data_copy(offs, og, NO)
    asc.data_copy(boffs, bg, NBO)
    asc.data_copy(dst, dg, 12 * L)
    mask = [0x00FF00F0FFFF0F0F, 0x8000000000000001] if L == 128 else [0x00FF00F0FFFF0F0F]
    asc.gather(dst, src, offs, 0, L + 37)
    asc.gather(dst[2 * L:], src, offs[L + 64:], src_base=64, count=L + 37)
    asc.gather(dst[4 * L:], src, offs, 0, mask, 2, 16)
    blocks = asc.uint16 if size == 2 else asc.uint32
    asc.gatherb(dst[7 * L:].reinterpret_cast(blocks), src.reinterpret_cast(blocks), boffs, 2,
                asc.GatherRepeatParams(2, 16))
    asc.gather(dst[11 * L + start:], src, offs, 0, count)
    asc.data_copy(dg, dst, 12 * L)


@asc.jit
def gather_kernel(xh: asc.GlobalAddress, oh: asc.GlobalAddress, bh: asc.GlobalAddress, dh: asc.GlobalAddress,
                  xf: asc.GlobalAddress, of: asc.GlobalAddress, bf: asc.GlobalAddress, df: asc.GlobalAddress,
                  count: int, start: int):
    """float16 then float32 (``count`` and ``start`` apply to float32's last gather)."""
    gather_run(xh, oh, bh, dh, 0, 128, 0)
    gather_run(xf, of, bf, df, 16384, count, start)


def inputs(rng, dtype):
    L, esize = lanes_of(dtype), np.dtype(dtype).itemsize
    x = rng.uniform(-100, 100, N).astype(dtype)
    off = (rng.integers(0, N - 64 // esize, NO) * esize).astype(np.uint32)
    boff = (rng.integers(0, N * esize // 32, NBO) * 32).astype(np.uint32)
    out = rng.uniform(-1, 1, 12 * L).astype(dtype)
    return x, off, boff, out


def launch(h, f, count=64, start=0, **options):
    gather_kernel[1](*h, *f, count, start, **options)


def bits(a):
    return a.view(np.uint16 if a.itemsize == 2 else np.uint32)


def check(before, got):
    np.testing.assert_array_equal(bits(got), bits(model(*before)))


def copies(arrays):
    return [a.copy() for a in arrays]


# --------------------------------------------------------------------------- tests

def test_gather_matches_model(rng):
    h, f = inputs(rng, np.float16), inputs(rng, np.float32)
    before_h, before_f = copies(h), copies(f)
    launch(h, f)
    check(before_h, h[3])
    check(before_f, f[3])


def test_gather_debug_mode_agrees(rng, mode):
    h, f = inputs(rng, np.float16), inputs(rng, np.float32)
    before_h, before_f = copies(h), copies(f)
    launch(h, f, **mode)
    check(before_h, h[3])
    check(before_f, f[3])


@pytest.mark.parametrize("value, error", [
    (N * 2, BoundsError),               # one element past the end of src
    (0xFFFFFFFE, BoundsError),          # far outside
    (3, AlignmentError),                # not a multiple of sizeof(float16)
])
def test_bad_offsets_are_caught(rng, value, error):
    h, f = inputs(rng, np.float16), inputs(rng, np.float32)
    h[1][17] = value
    before = h[3].copy()
    with pytest.raises(error, match="offset 17"):
        launch(h, f)
    np.testing.assert_array_equal(bits(h[3]), bits(before))     # nothing was written


def test_bad_block_offset(rng):
    h, f = inputs(rng, np.float16), inputs(rng, np.float32)
    h[2][3] = 16                                               # gatherb offsets are whole 32-byte blocks
    with pytest.raises(AlignmentError, match="offset 3"):
        launch(h, f)


@pytest.mark.parametrize("count, start, error, match", [
    (200, 0, BoundsError, "holds only 64"),     # count beyond the 64 elements left in dst
    (32, 1, AlignmentError, "aligned"),         # dst[11 * 64 + 1:] is not 32-byte aligned
])
def test_bad_runtime_arguments(rng, count, start, error, match):
    with pytest.raises(error, match=match):
        launch(inputs(rng, np.float16), inputs(rng, np.float32), count, start)


def test_wrong_dtypes_are_compile_errors():
    @asc.jit
    def int8_gather(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.int8, asc.TPosition.VECIN, 0, 256)
        offs = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 256, 64)
        asc.gather(src, src, offs, 0, 64)

    @asc.jit
    def int32_offsets(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
        offs = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 1024, 64)
        asc.gather(src, src, offs, 0, 64)

    for kernel, what in ((int8_gather, "int8"), (int32_offsets, "int32")):
        with pytest.raises(KernelTypeError, match=what):
            kernel[1](np.zeros(8, np.float32))
