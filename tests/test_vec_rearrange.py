"""copy and gather_mask against NumPy models of the documented rules; scatter is refused on A2/A3."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import AlignmentError, BoundsError, KernelTypeError, ParamRangeError
from tests.level0_layout import level0_elements

N = 1024          # elements of the source and of each destination
NP = 64           # pattern words
PERIOD = {1: (2, 0), 2: (2, 1), 3: (4, 0), 4: (4, 1), 5: (4, 2), 6: (4, 3), 7: (1, 0)}


@asc.jit
def rearrange_kernel(x: asc.GlobalAddress, pat: asc.GlobalAddress, out: asc.GlobalAddress, res: asc.GlobalAddress,
                     pattern: int, reduce: int, mask: int, blk: int, repeat: int, rep0: int, rep1: int, shift: int,
                     lo: int, hi: int, crepeat: int, dstride: int, sstride: int, drsize: int, srsize: int):
    """gather_mask with ``pattern`` and with the pattern tensor, then two copies (the second one with the mask
    register gather_mask left); the kept counts go to ``res``."""
    size = x.dtype.sizeof()
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    pg = asc.GlobalTensor()
    pg.set_global_buffer(pat, NP)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 4 * N)
    rg = asc.GlobalTensor()
    rg.set_global_buffer(res, 8)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, N)
    pt = asc.LocalTensor(pat.dtype, asc.TPosition.VECIN, 4096, NP)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 8192, 4 * N)
    counts = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 8192 + 4 * N * size, 8)
    asc.data_copy(src, xg, N)
    asc.data_copy(pt, pg, NP)
    asc.data_copy(dst, og, 4 * N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    k1 = asc.gather_mask(dst[shift:], src, pattern, reduce != 0, mask, asc.GatherMaskParams(blk, repeat, rep0, 0))
    k2 = asc.gather_mask(dst[N:], src, pt, reduce != 0, mask, asc.GatherMaskParams(blk, repeat, rep0, rep1),
                         asc.GatherMaskMode.DEFAULT)
    asc.copy(dst[2 * N:], src, 0, 1, asc.CopyRepeatParams(1, 1, 8, 8), is_set_mask=False)
    asc.copy(dst[3 * N:], src, [lo, hi], crepeat, asc.CopyRepeatParams(dstride, sstride, drsize, srsize))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    counts.set_value(0, k1)
    counts.set_value(1, k2)
    counts.set_value(2, asc.get_gather_mask_remain_count())
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, dst, 4 * N)
    asc.data_copy(rg, counts, 8)


def kept_model(x, keep, reduce, mask, blk, repeat, rep0):
    """The documented gather_mask: lanes of each repeat in order, the kept ones packed."""
    esize = x.itemsize
    n = mask if reduce else 256 // esize
    picked = []
    for r in range(repeat):
        idx = level0_elements(1, n, lambda e: keep(r, e), blk, 0, 32 // esize) + r * rep0 * (32 // esize)
        picked.extend(x[idx])
    return np.array(picked, x.dtype)


def builtin_keep(pattern):
    period, phase = PERIOD[pattern]
    return lambda r, e: e % period == phase


def tensor_keep(words, rep1):
    raw = words.view(np.uint8)
    return lambda r, e: bool((raw[r * rep1 * 32 + e // 8] >> (e % 8)) & 1)


def copy_model(dst, src, active, repeats, dstride, sstride, drsize, srsize):
    epb = 32 // src.itemsize
    lanes = 256 // src.itemsize
    out = dst.copy()
    out[level0_elements(repeats, lanes, active, dstride, drsize, epb)] = \
        src[level0_elements(repeats, lanes, active, sstride, srsize, epb)]
    return out


def bit_active(lo, hi):
    return lambda e: bool(((lo if e < 64 else hi) >> (e % 64)) & 1)


def bits(a):
    return a.view(np.uint16 if a.itemsize == 2 else np.uint32)


# (dtype, pattern, reduce, mask, blk, repeat, rep0, rep1, copy: lo, hi, crepeat, dstride, sstride, drsize, srsize)
CASES = {
    "b16-normal": (np.float16, 3, 0, 0x0F0F, 1, 3, 8, 1, 0xF0F0FFFF0000FFFF, 0x8000000000000001, 2, 1, 2, 8, 16),
    "b32-counter": (np.float32, 2, 1, 70, 1, 2, 4, 0, 0x00000000FFFF00FF, 0, 3, 2, 1, 16, 8),
    "b32-strided": (np.int32, 5, 0, 0x11, 2, 2, 16, 1, 0xFFFFFFFFFFFFFFFF, 0, 1, 1, 1, 0, 8),
}


def signed(word):
    """A uint64 mask word as the int64 a kernel's int argument holds."""
    return word - (1 << 64) if word >= 1 << 63 else word


def run(case, rng, shift=0, **over):
    dtype, pattern, reduce, mask, blk, repeat, rep0, rep1, lo, hi, crepeat, dstride, sstride, drsize, srsize = \
        CASES[case]
    vals = dict(pattern=pattern, reduce=reduce, mask=mask, blk=blk, repeat=repeat, rep0=rep0, rep1=rep1, lo=lo,
                hi=hi, crepeat=crepeat, dstride=dstride, sstride=sstride, drsize=drsize, srsize=srsize)
    options = {k: over.pop(k) for k in ("debug", "check") if k in over}
    vals.update(over)
    x = (rng.integers(-1000, 1000, N) if dtype == np.int32 else rng.uniform(-9, 9, N)).astype(dtype)
    word = np.uint16 if np.dtype(dtype).itemsize == 2 else np.uint32
    pat = rng.integers(0, np.iinfo(word).max, NP, dtype=np.uint64).astype(word)
    if case == "b32-counter":
        pat[:] = 0xAAAAAAAA                  # the Ascend C example: odd elements, 70 per repeat
    out = rng.uniform(-1, 1, 4 * N).astype(dtype)
    res = np.full(8, -1, np.int32)
    before = out.copy()
    rearrange_kernel[1](x, pat, out, res, vals["pattern"], vals["reduce"], vals["mask"], vals["blk"],
                        vals["repeat"], vals["rep0"], vals["rep1"], shift, signed(vals["lo"]), signed(vals["hi"]),
                        vals["crepeat"],
                        vals["dstride"], vals["sstride"], vals["drsize"], vals["srsize"], **options)
    return x, pat, before, out, res, vals


# --------------------------------------------------------------------------- results

def check(x, pat, before, out, res, v):
    args = (v["reduce"], v["mask"], v["blk"], v["repeat"], v["rep0"])
    want1 = kept_model(x, builtin_keep(v["pattern"]), *args)
    want2 = kept_model(x, tensor_keep(pat, v["rep1"]), *args)
    assert list(res[:3]) == [len(want1), len(want2), len(want2)]
    exp = before.copy()
    exp[:len(want1)] = want1
    exp[N:N + len(want2)] = want2
    # the mask register gather_mask leaves: normal mode, low word = its mask
    exp[2 * N:3 * N] = copy_model(before[2 * N:3 * N], x, bit_active(v["mask"], 0), 1, 1, 1, 8, 8)
    exp[3 * N:] = copy_model(before[3 * N:], x, bit_active(v["lo"], v["hi"]), v["crepeat"], v["dstride"],
                             v["sstride"], v["drsize"], v["srsize"])
    np.testing.assert_array_equal(bits(out), bits(exp))


@pytest.mark.parametrize("case", CASES)
def test_gather_mask_and_copy_match_the_model(rng, case):
    check(*run(case, rng))


def test_debug_mode_and_full_checks_agree(rng):
    check(*run("b32-strided", rng, debug=True, check="full"))


def test_the_documented_counter_mode_example(rng):
    """Ascend C's GatherMask example: uint32, mask 70, 2 repeats 4 blocks apart, pattern 0xAAAAAAAA."""
    x, pat, before, out, res, v = run("b32-counter", rng)
    want = np.concatenate([x[1:70:2], x[33:102:2]])           # elements 2, 4, .., 70 and 34, 36, .., 102
    assert list(res[:3]) == [70, 70, 70]
    np.testing.assert_array_equal(out[:70], want)               # built-in pattern 2 (odd lanes)
    np.testing.assert_array_equal(out[N:N + 70], want)          # the pattern tensor
    np.testing.assert_array_equal(out[70:N], before[70:N])      # the rest of dst keeps its value


# --------------------------------------------------------------------------- broken calls

@pytest.mark.parametrize("over, error, match", [
    (dict(pattern=8), ParamRangeError, "src1_pattern 8 is not a built-in pattern"),
    (dict(pattern=0), ParamRangeError, "src1_pattern 0 is not a built-in pattern"),
    (dict(reduce=1, mask=0), ParamRangeError, "counter mode.*1..4294967295; got 0"),
    (dict(rep1=256), ParamRangeError, r"GatherMaskParams.src1_repeat_stride = 256 is out of range \[0, 255\]"),
    (dict(blk=300), ParamRangeError, r"GatherMaskParams.src0_block_stride = 300"),
    (dict(repeat=9), BoundsError, "src0: the instruction touches 1152 elements of a tensor that holds only 1024"),
    (dict(rep1=7), BoundsError, "src1: the instruction touches 232 elements of a tensor that holds only 64"),
    (dict(rep0=0, repeat=40, pattern=7, rep1=0), BoundsError,
     "dst: the instruction touches 5120 elements of a tensor that holds only 4096"),
    (dict(shift=3), AlignmentError, "dst starts at UB byte 8198"),
    (dict(drsize=4096), ParamRangeError, r"CopyRepeatParams.dst_repeat_size = 4096 is out of range \[0, 4095\]"),
    (dict(sstride=65536), ParamRangeError, r"CopyRepeatParams.src_stride = 65536"),
    (dict(crepeat=256), ParamRangeError, r"repeat_times 256 out of range"),
    (dict(crepeat=9), BoundsError, "dst: the instruction touches 1152 elements of a tensor that holds only 1024"),
    (dict(crepeat=5), BoundsError, "src: the instruction touches 1264 elements of a tensor that holds only 1024"),
])
def test_broken_calls_are_caught(rng, over, error, match):
    shift = over.pop("shift", 0)
    with pytest.raises(error, match=match):
        run("b16-normal", rng, shift=shift, **over)


def test_compile_time_errors():
    @asc.jit
    def wrong_pattern_type(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
        pt = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 512, 64)
        asc.gather_mask(src, src, pt, False, 0, asc.GatherMaskParams(1, 1, 8, 0))

    @asc.jit
    def constant_pattern_9(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
        asc.gather_mask(src, src, 9, False, 0, asc.GatherMaskParams(1, 1, 8, 0))

    @asc.jit
    def int8_copy(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.int8, asc.TPosition.VECIN, 0, 256)
        asc.copy(src, src, 128, 1, asc.CopyRepeatParams(1, 1, 8, 8))

    @asc.jit
    def copy_from_l1(x: asc.GlobalAddress):
        a = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
        b = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 0, 256)
        asc.copy(b, a, 128, 1, asc.CopyRepeatParams(1, 1, 8, 8))

    @asc.jit
    def scatter_kernel(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
        offs = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 1024, 64)
        asc.scatter(src, src, offs, 0, 64)

    for kernel, what in ((wrong_pattern_type, "uint32"), (constant_pattern_9, "built-in pattern 1..7"),
                         (int8_copy, "int8"), (copy_from_l1, "position A1"),
                         (scatter_kernel, "scatter is not available")):
        with pytest.raises(KernelTypeError, match=what):
            kernel[1](np.zeros(8, np.float32))
