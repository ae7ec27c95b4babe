"""transpose (16 x 16, NCHW <-> NHWC) and trans_data_to_5hd against NumPy transposes."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import AlignmentError, BoundsError, KernelTypeError, OverlapError, ParamRangeError

NMAX = 512        # elements of each transpose operand
N5 = 1024         # elements of trans_data_to_5hd's source and destination
BASIC = -1        # transpose(dst, src)
TT = asc.TransposeType


@asc.jit
def transpose_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, n: int, c: int, h: int, w: int, tmp_len: int,
                     dst_addr: int, tmp_addr: int, dshift: int, kind: asc.ConstExpr[int]):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, NMAX)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, NMAX)
    src = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, NMAX)
    dst = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, dst_addr, NMAX)
    tmp = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, tmp_addr, tmp_len)
    asc.data_copy(src, xg, NMAX)
    asc.data_copy(dst, og, NMAX)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if kind == BASIC:
        asc.transpose(dst[dshift:], src)
    else:
        asc.transpose(dst[dshift:], src, tmp, asc.TransposeParamsExt(n, c, h, w, kind))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, dst, NMAX)


def tmp_bytes(kind, c, esize):
    block = (32 if esize == 1 else 16) * (32 // esize) * esize
    return (c + 2) * block if kind == TT.TRANSPOSE_NCHW2NHWC else (2 * c + 1) * block


def run_transpose(rng, dtype, kind, n=0, c=0, h=16, w=16, tmp_len=None, dst_addr=8192, tmp_addr=16384, dshift=0,
                  **options):
    x = (rng.integers(-100, 100, NMAX) if np.dtype(dtype).kind in "iu" else rng.uniform(-9, 9, NMAX)).astype(dtype)
    # dst at UB byte 0 is src: the kernel's copy of ``out`` into dst then sets the source, so make it x
    out = x.copy() if dst_addr == 0 else np.full(NMAX, 7, dtype)
    if tmp_len is None:
        tmp_len = tmp_bytes(kind, c, x.itemsize) if kind in (TT.TRANSPOSE_NCHW2NHWC, TT.TRANSPOSE_NHWC2NCHW) else 32
    transpose_kernel[1](x, out, n, c, h, w, tmp_len, dst_addr, tmp_addr, dshift, int(kind), **options)
    return x, out


@pytest.mark.parametrize("dtype, kind, shape", [
    (np.float16, BASIC, None),
    (np.uint16, TT.TRANSPOSE_ND2ND_B16, None),
    (np.float16, TT.TRANSPOSE_NCHW2NHWC, (2, 3, 2, 16)),
    (np.float32, TT.TRANSPOSE_NHWC2NCHW, (2, 5, 1, 8)),
    (np.int8, TT.TRANSPOSE_NCHW2NHWC, (1, 3, 2, 16)),
])
def test_transpose_matches_numpy(rng, dtype, kind, shape):
    if shape is None:
        x, out = run_transpose(rng, dtype, kind)
        want = x[:256].reshape(16, 16).T.ravel()
    else:
        n, c, h, w = shape
        x, out = run_transpose(rng, dtype, kind, n, c, h, w)
        total = n * c * h * w
        if kind == TT.TRANSPOSE_NCHW2NHWC:
            want = x[:total].reshape(n, c, h, w).transpose(0, 2, 3, 1).ravel()
        else:
            want = x[:total].reshape(n, h, w, c).transpose(0, 3, 1, 2).ravel()
    np.testing.assert_array_equal(out[:len(want)], want)
    np.testing.assert_array_equal(out[len(want):], np.full(NMAX - len(want), 7, dtype))    # nothing else written


def test_transpose_in_place_debug_and_full_checks(rng):
    """The basic form may transpose in place (documented); debug mode and check level full agree."""
    x, out = run_transpose(rng, np.float16, BASIC, dst_addr=0, debug=True, check="full")
    np.testing.assert_array_equal(out[:256], x[:256].reshape(16, 16).T.ravel())
    np.testing.assert_array_equal(out[256:], x[256:])


@pytest.mark.parametrize("kind, over, error, match", [
    (TT.TRANSPOSE_NCHW2NHWC, dict(tmp_len=2047), BoundsError,
     "shared_tmp_buffer holds 2047 bytes; TRANSPOSE_NCHW2NHWC with these sizes needs 2560"),
    (TT.TRANSPOSE_NCHW2NHWC, dict(dst_addr=0), OverlapError, "dst and src overlap"),
    (TT.TRANSPOSE_NCHW2NHWC, dict(tmp_addr=256), OverlapError, "shared_tmp_buffer and src overlap"),
    (TT.TRANSPOSE_NCHW2NHWC, dict(w=15), AlignmentError, "h_size \\* w_size \\* sizeof\\(T\\) = 60 bytes"),
    (TT.TRANSPOSE_NCHW2NHWC, dict(c=4096, tmp_len=32), ParamRangeError, r"c_size = 4096 is out of range \[0, 4095\]"),
    (TT.TRANSPOSE_NCHW2NHWC, dict(n=20), BoundsError, "dst: the instruction touches 1920 elements"),
    (TT.TRANSPOSE_NCHW2NHWC, dict(dshift=4), AlignmentError, "dst starts at UB byte 8200"),
    (BASIC, dict(dshift=272), BoundsError, "dst: the instruction touches 256 elements of a tensor that holds only 240"),
])
def test_broken_transposes_are_caught(rng, kind, over, error, match):
    shape = dict(n=2, c=3, h=2, w=16)
    shape.update({k: over.pop(k) for k in list(over) if k in shape})
    if "tmp_len" not in over and kind != BASIC:
        over["tmp_len"] = tmp_bytes(kind, shape["c"], 2)
    with pytest.raises(error, match=match):
        run_transpose(rng, np.float16, kind, **shape, **over)


def test_nd2nd_b16_takes_16_by_16(rng):
    with pytest.raises(ParamRangeError, match="h_size = 8: TRANSPOSE_ND2ND_B16 transposes one 16 x 16 matrix"):
        run_transpose(rng, np.uint16, TT.TRANSPOSE_ND2ND_B16, h=8)


# --------------------------------------------------------------------------- trans_data_to_5hd

@asc.jit
def five_hd_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, repeat: int, drep: int, srep: int,
                   high: asc.ConstExpr[bool]):
    """src_list[k] = src[k * epb:], dst_list[i] = dst[i * epb:]: rows of 32 bytes; with ``high`` a second call
    moves the high halves of 8-bit data."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, N5)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, N5)
    e = 32 // x.dtype.sizeof()
    s = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, N5)
    d = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 8192, N5)
    asc.data_copy(s, xg, N5)
    asc.data_copy(d, og, N5)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    sl = [s[0:], s[e:], s[2 * e:], s[3 * e:], s[4 * e:], s[5 * e:], s[6 * e:], s[7 * e:], s[8 * e:], s[9 * e:],
          s[10 * e:], s[11 * e:], s[12 * e:], s[13 * e:], s[14 * e:], s[15 * e:]]
    dl = [d[0:], d[e:], d[2 * e:], d[3 * e:], d[4 * e:], d[5 * e:], d[6 * e:], d[7 * e:], d[8 * e:], d[9 * e:],
          d[10 * e:], d[11 * e:], d[12 * e:], d[13 * e:], d[14 * e:], d[15 * e:]]
    asc.trans_data_to_5hd(dl, sl, asc.TransDataTo5HDParams(False, False, repeat, drep, srep))
    if high:
        asc.trans_data_to_5hd(dl, sl, asc.TransDataTo5HDParams(True, True, repeat, drep, srep))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(og, d, N5)


@pytest.mark.parametrize("dtype", [np.float16, np.int32, np.int8])
def test_trans_data_to_5hd_transposes_blocks(rng, dtype, mode):
    x = rng.integers(-100, 100, N5).astype(dtype)
    out = np.full(N5, 5, dtype)
    per = 512 // x.itemsize                           # elements of one repeat's 16 blocks
    five_hd_kernel[1](x, out, 2, 16, 16, x.itemsize == 1, **mode)
    for r in range(2):
        m = x[r * per:(r + 1) * per].reshape(16, -1)  # the 16 source blocks as rows
        got = out[r * per:(r + 1) * per]
        if x.itemsize == 1:                           # low halves, then high halves, of each result block
            want = np.concatenate([m[:, :16].T, m[:, 16:].T], axis=1).ravel()
        else:                                         # b16: 16 x 16; b32: the 16 x 8 blocks as 8 x 16
            want = m.T.ravel()
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(out[2 * per:], 5)


def test_one_repeat_starts_one_stride_in(rng):
    """Documented: with repeat_times 1 the blocks are at the list entries plus the strides."""
    x = rng.integers(-100, 100, N5).astype(np.float16)
    out = np.full(N5, 5, np.float16)
    five_hd_kernel[1](x, out, 1, 16, 16, False, check="full")
    np.testing.assert_array_equal(out[256:512], x[256:512].reshape(16, 16).T.ravel())
    np.testing.assert_array_equal(out[:256], 5)
    np.testing.assert_array_equal(out[512:], 5)


def test_broken_trans_data_to_5hd(rng):
    x = np.zeros(N5, np.float16)
    with pytest.raises(ParamRangeError, match=r"TransDataTo5HDParams.repeat_times = 256 is out of range \[0, 255\]"):
        five_hd_kernel[1](x, x.copy(), 256, 16, 16, False)
    # repeat 2 of src_list[0] (1024 elements, 2048 bytes) starts at block 64: past its end
    with pytest.raises(BoundsError, match=r"src_list\[0\]: repeat 1 touches the 32-byte block at UB byte 2048"):
        five_hd_kernel[1](x, x.copy(), 2, 16, 64, False)


def test_compile_time_errors():
    @asc.jit
    def fifteen(x: asc.GlobalAddress):
        s = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 512)
        sl = [s, s, s, s, s, s, s, s, s, s, s, s, s, s, s]
        asc.trans_data_to_5hd(sl, sl, asc.TransDataTo5HDParams(False, False, 1, 0, 0))

    @asc.jit
    def reserved_kind(x: asc.GlobalAddress):
        s = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 512)
        t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 1024, 512)
        asc.transpose(s, s, t, asc.TransposeParamsExt(1, 1, 16, 16, asc.TransposeType.TRANSPOSE_NZ2ND_0213))

    @asc.jit
    def float32_basic(x: asc.GlobalAddress):
        s = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 512)
        asc.transpose(s, s)

    @asc.jit
    def half_tmp(x: asc.GlobalAddress):
        s = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 512)
        t = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 1024, 512)
        asc.transpose(s, s, t, asc.TransposeParamsExt(1, 1, 16, 16, asc.TransposeType.TRANSPOSE_NCHW2NHWC))

    for kernel, what in ((fifteen, "must hold 16 LocalTensors"), (reserved_kind, "TRANSPOSE_NZ2ND_0213"),
                         (float32_basic, "float32"), (half_tmp, "shared_tmp_buffer does not support float16")):
        with pytest.raises(KernelTypeError, match=what):
            kernel[1](np.zeros(8, np.float32))
