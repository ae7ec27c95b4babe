"""data_copy with DataCopyParams, data_copy_pad and set_pad_value against NumPy byte-level references.

Two kernels cover every path; their parameters are run-time arguments, so the
error cases reuse the same compiled code with broken values.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import datamove, state

BLOCK = 32
UB_BYTES = 1024
UNSET = 0xFF                       # fresh on-chip memory


@asc.jit
def strided_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, x_size: int, ub_off: int,
                   c1: int, l1: int, s1: int, d1: int, c2: int, l2: int, s2: int, d2: int,
                   c3: int, l3: int, s3: int, d3: int):
    """GM x -> UB a (params 1) -> UB b (params 2) -> GM z (params 3)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, x_size)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    pipe = asc.TPipe()
    buf_a = asc.TBuf(asc.TPosition.VECIN)
    buf_b = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf_a, UB_BYTES)
    pipe.init_buffer(buf_b, UB_BYTES)
    a = buf_a.get(asc.int32)
    b = buf_b.get(asc.int32)
    asc.data_copy(a[ub_off:], xg, asc.DataCopyParams(c1, l1, s1, d1))
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.data_copy(b, a, repeat_params=asc.DataCopyParams(c2, l2, s2, d2))
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, b, asc.DataCopyParams(c3, l3, s3, d3))


def _rows(count: int, blen: int, gap: int) -> np.ndarray:
    """32-byte block indices touched by ``count`` blocks of ``blen`` blocks separated by ``gap``."""
    return (np.arange(count)[:, None] * (blen + gap) + np.arange(blen)[None, :]).ravel()


def _strided_ref(dst: np.ndarray, src: np.ndarray, count: int, blen: int, sgap: int, dgap: int) -> None:
    d, s = dst.reshape(-1, BLOCK), src.reshape(-1, BLOCK)
    d[_rows(count, blen, dgap)] = s[_rows(count, blen, sgap)]


def _run_strided(mode, x, z, p1, p2, p3, x_size=None, ub_off=0):
    strided_kernel[1](x, z, x.size if x_size is None else x_size, ub_off, *p1, *p2, *p3, **mode)


STRIDED_CASES = [
    ((2, 3, 0, 0), (1, 6, 0, 0), (1, 6, 0, 0)),          # contiguous through
    ((3, 2, 1, 2), (2, 5, 1, 0), (3, 3, 0, 1)),          # gaps on every side
    ((4, 1, 3, 0), (2, 2, 0, 3), (0, 5, 0, 0)),          # block_count 0: the last copy is a no-op
    ((2, 0, 0, 0), (1, 8, 0, 0), (2, 4, 0, 0)),          # block_len 0: the first copy is a no-op
]


@pytest.mark.parametrize("p1, p2, p3", STRIDED_CASES)
def test_strided_copy_matches_numpy(mode, rng, p1, p2, p3):
    x = rng.integers(-1000, 1000, 512, dtype=np.int32)
    z = rng.integers(-1000, 1000, 512, dtype=np.int32)
    a = np.full(UB_BYTES, UNSET, np.uint8)
    b = np.full(UB_BYTES, UNSET, np.uint8)
    want = z.copy()
    for dst, src, p in ((a, x.view(np.uint8), p1), (b, a, p2), (want.view(np.uint8), b, p3)):
        _strided_ref(dst, src, *p)
    _run_strided(mode, x, z, p1, p2, p3)
    np.testing.assert_array_equal(z, want)


def test_strided_gm_read_past_set_global_buffer_size(mode):
    x = np.arange(128, dtype=np.int32)
    with pytest.raises(errors.BoundsError, match=r"touches 64 elements of a GlobalTensor that holds 32: it starts "
                                                 r"at element 0 of GM argument 'x' \(512 bytes\)"):
        _run_strided(mode, x, np.zeros(128, np.int32), (2, 4, 0, 0), (0, 1, 0, 0), (0, 1, 0, 0), x_size=32)


def test_strided_gm_write_past_the_argument(mode):
    x = np.arange(128, dtype=np.int32)
    z = np.zeros(16, np.int32)                                      # 2 blocks
    with pytest.raises(errors.BoundsError, match=r"\[out of bounds\].*GM bytes \[0, 96\) outside GM "
                                                 r"argument 'z' \(64 bytes\)"):
        _run_strided(mode, x, z, (1, 3, 0, 0), (1, 3, 0, 0), (1, 3, 0, 0))
    _run_strided(mode, x, z, (1, 3, 0, 0), (1, 3, 0, 0), (1, 2, 0, 0))   # the corrected copy
    np.testing.assert_array_equal(z, x[:16])


def test_strided_misaligned_ub_address(mode):
    x = np.arange(128, dtype=np.int32)
    with pytest.raises(errors.AlignmentError, match=r"\[alignment\] the destination local tensor address 4 is not "
                                                    r"32-byte aligned"):
        _run_strided(mode, x, np.zeros(128, np.int32), (1, 1, 0, 0), (0, 1, 0, 0), (0, 1, 0, 0), ub_off=1)
    _run_strided(mode, x, np.zeros(128, np.int32), (1, 1, 0, 0), (0, 1, 0, 0), (0, 1, 0, 0), ub_off=8)


def test_strided_block_len_too_large_for_local_tensor(mode):
    x = np.arange(512, dtype=np.int32)
    with pytest.raises(errors.BoundsError, match=r"needs 1056 bytes of the destination local tensor, which "
                                                 r"holds only 1024 bytes"):
        _run_strided(mode, x, np.zeros(512, np.int32), (1, 33, 0, 0), (0, 1, 0, 0), (0, 1, 0, 0))


def test_strided_param_ranges():
    x = np.arange(512, dtype=np.int32)
    z = np.zeros(512, np.int32)
    mode = {"debug": False}
    with pytest.raises(errors.ParamRangeError, match=r"block_count = 4096 is outside its range \[0, 4095\]"):
        _run_strided(mode, x, z, (4096, 1, 0, 0), (0, 1, 0, 0), (0, 1, 0, 0))
    with pytest.raises(errors.ParamRangeError, match=r"src_stride = 65536 is outside its range \[0, 65535\]"):
        _run_strided(mode, x, z, (1, 1, 0, 0), (1, 1, 65536, 0), (0, 1, 0, 0))
    with pytest.raises(errors.ParamRangeError, match=r"block_len = -1"):
        _run_strided(mode, x, z, (1, 1, 0, 0), (1, 1, 0, 0), (1, -1, 0, 0))


# ---------------------------------------------------------------------------- data_copy_pad


@asc.jit
def pad_kernel(x: asc.GlobalAddress, zub: asc.GlobalAddress, zout: asc.GlobalAddress,
               c: int, ln: int, s: int, d: int, left: int, right: int, is_pad: bool, pad_value: float,
               use_set: bool, set_value: float, legacy: bool, raw: int,
               oc: int, ol: int, os_: int, od: int):
    """GM x -> UB (data_copy_pad); the whole UB tensor -> zub; UB -> zout (data_copy_pad)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    ub_g = asc.GlobalTensor()
    ub_g.set_global_buffer(zub)
    out_g = asc.GlobalTensor()
    out_g.set_global_buffer(zout)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECIN)
    pipe.init_buffer(buf, UB_BYTES)
    t = buf.get(asc.float32)
    if use_set:
        asc.set_pad_value(set_value)
    if legacy:
        asc.data_copy_pad(t, xg, asc.DataCopyParams(c, ln, s, d), asc.DataCopyPadParams(is_pad, left, right, raw))
    else:
        asc.data_copy_pad(t, xg, asc.DataCopyExtParams(c, ln, s, d, 0),
                          asc.DataCopyPadExtParams(asc.float32, is_pad, left, right, pad_value))
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 1)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 1)
    asc.data_copy(ub_g, t, UB_BYTES // 4)
    asc.data_copy_pad(out_g, t, asc.DataCopyExtParams(oc, ol, os_, od, 0))


def _f32_bytes(v: float) -> np.ndarray:
    return np.array([v], np.float32).view(np.uint8)


def _pad_in_ref(ub, gm, c, ln, s, d, left, right, pad):
    """GM -> UB data_copy_pad of float32 rows; ``pad`` is the padding element's 4 bytes or None."""
    footprint = -(-(4 * (left + right) + ln) // BLOCK) * BLOCK
    for i in range(c):
        row = gm[i * (ln + s):i * (ln + s) + ln]
        if left == right == 0:
            filler = np.resize(row[:4], footprint)                 # the block's first element, repeated
        else:
            filler = np.resize(pad, footprint) if pad is not None else np.full(footprint, UNSET, np.uint8)
        block = filler.copy()
        block[4 * left:4 * left + ln] = row
        start = i * (footprint + d * BLOCK)
        ub[start:start + footprint] = block


def _pad_out_ref(gm, ub, c, ln, s, d):
    footprint = -(-ln // BLOCK) * BLOCK
    for i in range(c):
        gm[i * (ln + d):i * (ln + d) + ln] = ub[i * (footprint + s * BLOCK):][:ln]


PAD_CASES = {
    # name: (c, ln, s, d, left, right, is_pad, pad_value, set_value or None, legacy, raw), pad element
    "is_pad value": ((2, 20, 4, 1, 1, 2, True, -3.5, None, False, 0), _f32_bytes(-3.5)),
    "dummy repeats first element": ((3, 20, 0, 0, 0, 0, False, 0.0, None, False, 0), None),
    "set_pad_value": ((2, 36, 12, 0, 2, 1, False, 0.0, 9.25, False, 0), _f32_bytes(9.25)),
    "is_pad overrides set_pad_value": ((1, 8, 0, 0, 3, 1, True, 1.5, 9.25, False, 0), _f32_bytes(1.5)),
    "undefined padding": ((2, 12, 0, 2, 1, 0, False, 0.0, None, False, 0), None),
    "odd GM stride": ((3, 28, 3, 0, 0, 1, True, 0.0, None, False, 0), _f32_bytes(0.0)),
    "legacy raw bits": ((2, 20, 8, 1, 0, 3, True, 0.0, None, True, 0x3F800000), _f32_bytes(1.0)),
}


def _run_pad(mode, x, zub, zout, p, out):
    c, ln, s, d, left, right, is_pad, value, set_value, legacy, raw = p
    pad_kernel[1](x, zub, zout, c, ln, s, d, left, right, is_pad, value, set_value is not None,
                  0.0 if set_value is None else set_value, legacy, raw, *out, **mode)


@pytest.mark.parametrize("name", list(PAD_CASES))
def test_data_copy_pad_matches_numpy(mode, rng, name):
    p, pad = PAD_CASES[name]
    c, ln, s, d, left, right = p[:6]
    x = rng.standard_normal(256).astype(np.float32)
    zub = np.zeros(UB_BYTES // 4, np.float32)
    zout = rng.standard_normal(64).astype(np.float32)
    out = (c, ln, 1, 8)                                           # read back with a UB and a GM gap
    ub = np.full(UB_BYTES, UNSET, np.uint8)
    _pad_in_ref(ub, x.view(np.uint8), c, ln, s, d, left, right, pad)
    want_out = zout.copy()
    _pad_out_ref(want_out.view(np.uint8), ub, *out)
    _run_pad(mode, x, zub, zout, p, out)
    np.testing.assert_array_equal(zub.view(np.uint8), ub)
    np.testing.assert_array_equal(zout.view(np.uint8), want_out.view(np.uint8))


def _pad_error(p, out=(0, 4, 0, 0), x=None, mode=None):
    x = np.zeros(256, np.float32) if x is None else x
    _run_pad(mode or {"debug": False}, x, np.zeros(UB_BYTES // 4, np.float32), np.zeros(64, np.float32), p, out)


def test_pad_errors():
    good = (1, 20, 0, 0, 0, 0, False, 0.0, None, False, 0)
    _pad_error(good)
    with pytest.raises(errors.ParamRangeError, match=r"left_padding = 9 elements of 4 bytes is wider than 32"):
        _pad_error((1, 20, 0, 0, 9, 0, True, 0.0, None, False, 0))
    with pytest.raises(errors.AlignmentError, match=r"block_len 18 bytes is not a multiple of the element size 4"):
        _pad_error((1, 18, 0, 0, 0, 0, False, 0.0, None, False, 0))
    with pytest.raises(errors.ParamRangeError, match=r"block_len = 70000 is outside its range \[0, 65535\]"):
        _pad_error((1, 70000, 0, 0, 0, 0, False, 0.0, None, True, 0))
    with pytest.raises(errors.BoundsError, match=r"needs 1120 bytes of the destination"):
        _pad_error((5, 200, 0, 0, 0, 0, False, 0.0, None, False, 0))
    with pytest.raises(errors.BoundsError, match=r"GM bytes \[0, 500\) outside GM argument 'zout' \(256 bytes\)"):
        _pad_error(good, out=(2, 200, 0, 100))
    with pytest.raises(errors.BoundsError, match=r"outside GM argument 'x' \(64 bytes\)"):
        _pad_error((2, 40, 0, 0, 0, 0, False, 0.0, None, False, 0), x=np.zeros(16, np.float32))


@pytest.mark.parametrize("mode_, raw, kind, want", [
    (state.PAD_INT, 3, datamove.K_INT, 3),
    (state.PAD_INT, -2, datamove.K_F16, int(np.float16(-2).view(np.uint16))),
    (state.PAD_FLOAT, int(np.float32(1.5).view(np.int32)), datamove.K_F16, int(np.float16(1.5).view(np.uint16))),
    (state.PAD_FLOAT, int(np.float32(-1.0).view(np.int32)), datamove.K_BF16, 0xBF80),
    (state.PAD_FLOAT, int(np.float32(-7.9).view(np.int32)), datamove.K_INT, -7),
    (state.PAD_FLOAT, int(np.float32(0.5).view(np.int32)), datamove.K_F64, int(np.float64(0.5).view(np.int64))),
    (state.PAD_RAW, 0x3C00, datamove.K_F16, 0x3C00),
])
def test_pad_value_converts_to_the_copied_type(mode_, raw, kind, want):
    assert datamove.pad_bits(mode_, raw, kind) == want


def test_compile_time_errors():
    @asc.jit
    def wrong_dtype(x: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x)
        t = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 64)
        asc.data_copy(t, xg, asc.DataCopyParams(1, 1, 0, 0))

    @asc.jit
    def pad_params_out(x: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 0, 64)
        asc.data_copy_pad(xg, t, asc.DataCopyExtParams(1, 4, 0, 0, 0),
                          asc.DataCopyPadExtParams(asc.float32, False, 0, 0, 0))

    @asc.jit
    def pad_dtype(x: asc.GlobalAddress):
        xg = asc.GlobalTensor()
        xg.set_global_buffer(x)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
        asc.data_copy_pad(t, xg, asc.DataCopyExtParams(1, 4, 0, 0, 0),
                          asc.DataCopyPadExtParams(asc.float16, False, 0, 0, 0))

    @asc.jit
    def pad_pos(x: asc.GlobalAddress):
        asc.set_pad_value(1.0, asc.TPosition.VECCALC)

    x = np.zeros(64, np.float32)
    with pytest.raises(errors.KernelTypeError, match="element types must match"):
        wrong_dtype[1](x)
    with pytest.raises(errors.KernelTypeError, match="UB to GM takes no padding parameters"):
        pad_params_out[1](x)
    with pytest.raises(errors.KernelTypeError, match="DataCopyPadExtParams is for float16 but the tensors are "
                                                     "float32"):
        pad_dtype[1](x)
    with pytest.raises(errors.KernelTypeError, match="pos must be TPosition.MAX, VECIN or VECOUT"):
        pad_pos[1](x)


# ---------------------------------------------------------------------------- count form: partial blocks


@asc.jit
def count_copy_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, 64)
    zg.set_global_buffer(z, 64)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 64)
    asc.data_copy(t, xg, n)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg, t, n)


def test_a_count_that_is_not_whole_blocks_drops_the_tail_and_warns():
    """The hardware moves whole 32-byte blocks: 10 floats copy 8 (the last 8 bytes stay behind), 4 floats copy
    nothing.  The launch warns, naming each core's first such copy, the bytes it dropped and how many there
    were (here the load and the store); whole blocks do not warn."""
    x = np.arange(1, 65, dtype=np.float32)
    for n, copied, dropped in ((10, 8, 8), (4, 0, 16)):
        z = np.zeros(64, np.float32)
        with pytest.warns(npuemu.PartialCopyWarning) as got:
            count_copy_kernel[2](x, z, n)
        np.testing.assert_array_equal(z[:copied], x[:copied])
        assert not z[copied:].any()
        assert len(got) == 1
        text = str(got[0].message)
        assert "test_data_copy.py:" in text and "`asc.data_copy(t, xg, n)`" in text          # the first, the load
        assert f"the last {dropped} bytes were not copied (2 such copies on AIV 0)" in text
        assert "kernel 'count_copy_kernel', 2 cores (AIV 0, ...)" in text
    z = np.zeros(64, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", npuemu.PartialCopyWarning)
        count_copy_kernel[2](x, z, 16)
    np.testing.assert_array_equal(z[:16], x[:16])
