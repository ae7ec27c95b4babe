"""bilinear_interpolation against a NumPy model of the BilinearInterpolation page's iterations."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc

N0 = 512                                   # src0 halves: 32 DataBlocks
MASKS = [128, [0xF0F0_0000_FFFF_0001, 0x8000_0000_0000_00FF], 37]


@asc.jit
def bil_run(x0: asc.GlobalAddress, offs: asc.GlobalAddress, w: asc.GlobalAddress, d: asc.GlobalAddress,
            out: asc.GlobalAddress, which: asc.ConstExpr[int], h: int, mode: bool, dblk: int, vro: int, v: int,
            n_off: int, n_w: int, n_d: int, tmp_len: int):
    g0 = asc.GlobalTensor()
    g0.set_global_buffer(x0, N0)
    go = asc.GlobalTensor()
    go.set_global_buffer(offs, n_off)
    gw = asc.GlobalTensor()
    gw.set_global_buffer(w, n_w)
    gd = asc.GlobalTensor()
    gd.set_global_buffer(d, n_d)
    gout = asc.GlobalTensor()
    gout.set_global_buffer(out, n_d)
    s0 = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, N0)
    off = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 1024, n_off)
    s1 = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 4096, n_w)
    dst = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 8192, n_d)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 16384, tmp_len)
    asc.data_copy(s0, g0, N0)
    asc.data_copy(off, go, n_off)
    asc.data_copy(s1, gw, n_w)
    asc.data_copy(dst, gd, n_d)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.bilinear_interpolation(dst, s0, off, s1, MASKS[which], h, mode, dblk, vro, v, tmp)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gout, dst, n_d)


def lane_on(which: int, e: int) -> bool:
    m = MASKS[which]
    if isinstance(m, int):
        return e < m
    return (m[e // 64] >> (e % 64)) & 1 == 1


def model(which, src0, offs, w, dst, h, mode, dblk, vro, v):
    """The page's iterations in NumPy float16 (each operation rounds to float16, as the vector instructions)."""
    out = dst.copy()
    blocks = src0.reshape(-1, 16)
    rep = vro * 2 // 32
    for i in range(v):
        s = None
        for q in range(h):
            r = i * h + q
            for_blocks = blocks[offs[8 * r:8 * r + 8] // 32]                      # (8, 16)
            wt = np.full(8, w[r]) if not mode else w[8 * r:8 * r + 8]
            p = (for_blocks * wt[:, None].astype(np.float16)).astype(np.float16)
            s = p if s is None else (p + s).astype(np.float16)
        s = (s + np.float16(0)).astype(np.float16)
        for e in range(128):
            if lane_on(which, e):
                out[(i * rep + (e // 16) * dblk) * 16 + e % 16] = s[e // 16, e % 16]
    return out


def inputs(rng, n_off, n_w, n_d):
    src0 = rng.uniform(-4, 4, N0).astype(np.float16)
    src0[:16] = -0.0                                           # block 0: negative zeros (written as +0)
    offs = (rng.integers(0, N0 // 16, n_off) * 32).astype(np.uint32)
    offs[0] = 0
    w = rng.uniform(-1, 1, n_w).astype(np.float16)
    w[::5] = np.abs(w[::5])
    dst = rng.uniform(-9, 9, n_d).astype(np.float16)
    return src0, offs, w, dst


CASES = [  # which mask, h, mode, dst_blk_stride, v_r_offset, v, src1 length, dst length
    (0, 2, False, 1, 128, 2, 16, 256),          # the page's example: contiguous blocks, v_r_offset 128
    (1, 3, True, 2, 260, 2, 48, 512),           # 8 weights per iteration, strided dst, v_r_offset cut to 16 blocks
    (2, 1, False, 1, 144, 3, 16, 512),          # one horizontal iteration: the products themselves (+0 for -0)
]


@pytest.mark.parametrize("which, h, mode, dblk, vro, v, n_w, n_d", CASES)
def test_matches_the_documented_iterations(which, h, mode, dblk, vro, v, n_w, n_d, rng):
    n_off = 8 * h * v
    src0, offs, w, dst = inputs(rng, n_off, n_w, n_d)
    tmp_len = h * v * 256 + n_w // 8 * 256
    want = model(which, src0, offs, w, dst, h, mode, dblk, vro, v)
    for debug in ((False, True) if which == 0 else (False,)):
        out = np.zeros(n_d, np.float16)
        bil_run[1](src0, offs, w, dst, out, which, h, mode, dblk, vro, v, n_off, n_w, n_d, tmp_len, debug=debug,
                   check="full")
        np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))
    if which == 2:                         # lanes 0..15 of the first iteration: -0 * w[0] > 0, written as +0
        assert (want.view(np.uint16)[:16] == 0).all()


def _run(rng, *, offs=None, h=2, v=2, mode=False, n_w=16, n_d=256, tmp_len=None, vro=128, dblk=1):
    n_off = 8 * h * v if offs is None else len(offs)
    src0, o, w, dst = inputs(rng, max(n_off, 8), n_w, n_d)
    offs = o[:n_off] if offs is None else np.asarray(offs, np.uint32)
    tmp_len = h * v * 256 + n_w // 8 * 256 if tmp_len is None else tmp_len
    bil_run[1](src0, offs, w, dst, np.zeros(n_d, np.float16), 0, h, mode, dblk, vro, v, max(n_off, 8), n_w, n_d,
               tmp_len)


def test_broken_calls_are_caught(rng):
    bad = np.zeros(32, np.uint32)
    bad[5] = 48
    with pytest.raises(npuemu.AlignmentError, match=r"src0_offset\[5\] = 48 is not a multiple of 32"):
        _run(rng, offs=bad)
    bad[5] = N0 * 2
    with pytest.raises(npuemu.BoundsError, match=r"src0_offset\[5\] = 1024 selects a block past the end of src0"):
        _run(rng, offs=bad)
    with pytest.raises(npuemu.BoundsError, match="shared_tmp_buffer holds 1024 bytes; it needs 1536"):
        _run(rng, tmp_len=1024)
    with pytest.raises(npuemu.BoundsError, match="src1 weights up to index 31, but src1 holds 16"):
        _run(rng, mode=True)
    with pytest.raises(npuemu.ParamRangeError, match="h_repeat 16 and v_repeat 16"):
        _run(rng, h=16, v=16, offs=np.zeros(8, np.uint32))
    with pytest.raises(npuemu.ParamRangeError, match="v_repeat is 2 but h_repeat is 0"):
        _run(rng, h=0, offs=np.zeros(8, np.uint32))
    with pytest.raises(npuemu.BoundsError, match="dst"):
        _run(rng, n_d=128)                  # the second vertical iteration writes elements 128..255
    with pytest.raises(npuemu.ParamRangeError, match="v_r_offset 4096"):
        _run(rng, vro=4096)
    with pytest.raises(npuemu.ParamRangeError, match="dst_blk_stride 65536 is outside"):
        _run(rng, dblk=65536)
    with pytest.raises(npuemu.ParamRangeError, match="dst_blk_stride"):
        _run(rng, dblk=0)                   # all 128 lanes onto one DataBlock
    with pytest.raises(npuemu.BoundsError, match="src0_offset holds 8 offsets"):
        _run(rng, offs=np.zeros(8, np.uint32))
    _run(rng)                               # the same call with everything in range is not flagged


@asc.jit
def bil_f32(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
    off = asc.LocalTensor(asc.uint32, asc.TPosition.VECCALC, 256, 8)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 512, 512)
    asc.bilinear_interpolation(a, a, off, a, 64, 1, False, 1, 128, 1, tmp)


@asc.jit
def bil_int_offsets(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 0, 128)
    off = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 256, 8)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 512, 512)
    asc.bilinear_interpolation(a, a, off, a, 128, 1, False, 1, 128, 1, tmp)


def test_types_are_checked_at_compile_time():
    with pytest.raises(npuemu.KernelTypeError, match="bilinear_interpolation does not support float32"):
        bil_f32[1](np.zeros(8, np.float32))
    with pytest.raises(npuemu.KernelTypeError, match="bilinear_interpolation src0_offset does not support int32"):
        bil_int_offsets[1](np.zeros(8, np.float32))
