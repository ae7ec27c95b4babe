"""asc.adv.softmax and asc.adv.rmsnorm with host tilings: float64 references and every check."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.host import adv_tiling as at

M, K = 16, 64
ROW = at.get_softmax_min_tmp_size([M, K], 4)          # 544 bytes: scratch for one float32 row
SM_TMP = 8 * ROW


@asc.jit
def softmax_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, s: asc.GlobalAddress, mx: asc.GlobalAddress,
                   tiling: asc.adv.SoftmaxTiling, basic: asc.ConstExpr, use_tmp: asc.ConstExpr, fill: int):
    xg, yg, sg, mg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    blk = 32 // s.dtype.sizeof()
    xg.set_global_buffer(x, M * K)
    yg.set_global_buffer(y, M * K)
    sg.set_global_buffer(s, M * blk)
    mg.set_global_buffer(mx, M * blk)
    pipe = asc.TPipe()
    bx, bs, bm = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(bx, M * K * 4)
    pipe.init_buffer(bs, M * 32)
    pipe.init_buffer(bm, M * 32)
    t = bx.get(x.dtype)
    st = bs.get(s.dtype)
    mt = bm.get(s.dtype)
    asc.data_copy(t, xg, M * K)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if use_tmp:
        bt = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(bt, SM_TMP)
        asc.adv.softmax(t, st, mt, t, tiling, bt.get(asc.uint8), basic_block=basic)
    else:
        filler = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(filler, fill)
        asc.adv.softmax(t, st, mt, t, tiling, basic_block=basic)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, t, M * K)
    asc.data_copy(sg, st, M * blk)
    asc.data_copy(mg, mt, M * blk)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def run_softmax(dtype=np.float32, sum_dtype=np.float32, tiling=None, basic=False, use_tmp=True, fill=32):
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(M, K)) * 4).astype(dtype)
    blk = 32 // np.dtype(sum_dtype).itemsize
    y, s, mx = np.zeros_like(x), np.zeros((M, blk), sum_dtype), np.zeros((M, blk), sum_dtype)
    tiling = tiling or at.softmax_tiling_func([M, K], np.dtype(sum_dtype).itemsize, 4 * ROW)
    softmax_kernel[1](x, y, s, mx, tiling, basic, use_tmp, fill, check="full")
    return x, y, s, mx


@pytest.mark.parametrize("dtype, sum_dtype", [(np.float32, np.float32), (np.float16, np.float32)])
def test_softmax_against_float64(dtype, sum_dtype):
    x, y, s, mx = run_softmax(dtype, sum_dtype)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    tol = 3e-7 if dtype == np.float32 else 5e-4     # measured: 6e-8 (float32), 2.4e-4 (float16) max abs error
    assert np.abs(y - ref).max() <= tol
    np.testing.assert_array_equal(mx, np.repeat(x.max(axis=1, keepdims=True), mx.shape[1], axis=1))
    np.testing.assert_allclose(s[:, 0], e.sum(axis=1), rtol=3e-7)
    assert (s == s[:, :1]).all()


def test_softmax_without_temp_buffer_takes_the_free_ub():
    x, y, _, _ = run_softmax(use_tmp=False)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    assert np.abs(y - e / e.sum(axis=1, keepdims=True)).max() <= 3e-7
    ub = 196608                                          # the A2 profile's UB
    used = M * K * 4 + 2 * M * 32
    with pytest.raises(errors.CapacityError, match="4 rows per round, which needs 2176 bytes"):
        run_softmax(use_tmp=False, fill=ub - used - 1024)


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(tiling=at.softmax_tiling_func([M, K], 4, 16 * ROW)), errors.CapacityError,
     "16 rows per round, which needs 8704 bytes of scratch, but only 4352"),
    (dict(tiling=at.softmax_tiling_func([M, K], 4, 100)), errors.ParamRangeError, "split_m is 0"),
    (dict(tiling="tail"), errors.ParamRangeError, "inconsistent"),
    (dict(basic=True), errors.ParamRangeError, "basic_block needs src_k % 64 == 0 and split_m % 8 == 0"),
    (dict(tiling="k"), errors.ParamRangeError, "src_k = 60 elements of 4 bytes is not a multiple of 32 bytes"),
    (dict(tiling=at.softmax_tiling_func([2 * M, K], 4, 4 * ROW)), errors.BoundsError,
     "src needs 2048 elements for the tiling's shape but holds 1024"),
    (dict(tiling=at.softmax_tiling_func([M, K], 2, 4 * ROW)), errors.ParamRangeError,
     "reduce_k = 16 is not one 32-byte block of 4-byte sum/max elements"),
])
def test_softmax_checks(kwargs, error, text):
    if kwargs.get("tiling") in ("tail", "k"):
        t = at.softmax_tiling_func([M, K], 4, 4 * ROW)
        if kwargs["tiling"] == "tail":
            t.tail_m = 1
        else:
            t.src_k = 60
        kwargs = dict(tiling=t)
    with pytest.raises(error, match=text):
        run_softmax(**kwargs)


def test_softmax_basic_block_with_a_basic_tiling():
    x, y, _, _ = run_softmax(tiling=at.softmax_tiling_func([M, K], 4, 8 * ROW), basic=True)
    assert np.allclose(y.sum(axis=1), 1, atol=1e-6)


# --------------------------------------------------------------------------- rmsnorm

B, S, H, H0 = 2, 8, 64, 60
RN_TMP = 4096


@asc.jit
def rmsnorm_kernel(x: asc.GlobalAddress, g: asc.GlobalAddress, y: asc.GlobalAddress,
                   tiling: asc.adv.RmsNormTiling, eps: float, use_tmp: asc.ConstExpr, fill: int,
                   basic: asc.ConstExpr):
    xg, gg, yg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, B * S * H)
    gg.set_global_buffer(g, H)
    yg.set_global_buffer(y, B * S * H)
    pipe = asc.TPipe()
    bx, bg, by = asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC), asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(bx, B * S * H * 4)
    pipe.init_buffer(bg, H * 4)
    pipe.init_buffer(by, B * S * H * 4)
    xt, gt, yt = bx.get(x.dtype), bg.get(x.dtype), by.get(x.dtype)
    asc.data_copy(xt, xg, B * S * H)
    asc.data_copy(gt, gg, H)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if use_tmp:
        bt = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(bt, RN_TMP)
        asc.adv.rmsnorm(yt, xt, gt, eps, tiling, bt.get(asc.uint8), basic)
    else:
        filler = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(filler, fill)
        asc.adv.rmsnorm(yt, xt, gt, eps, tiling)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, yt, B * S * H)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def run_rmsnorm(dtype=np.float32, tiling=None, use_tmp=True, fill=32, eps=1e-5, basic=False):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(B, S, H)).astype(dtype)
    x[..., H0:] = 0                                     # h padded to 32 bytes with zeros
    g = rng.uniform(0.5, 1.5, H).astype(dtype)
    y = np.zeros_like(x)
    size = np.dtype(dtype).itemsize
    tiling = tiling or at.get_rms_norm_tiling_info([B, S, H], [B, S, H0], RN_TMP, size)
    rmsnorm_kernel[1](x, g, y, tiling, eps, use_tmp, fill, basic, check="full")
    return x, g, y


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rmsnorm_against_float64(dtype):
    x, g, y = run_rmsnorm(dtype)
    x64 = x.astype(np.float64)
    ref = x64 * g.astype(np.float64) / np.sqrt((x64 ** 2).sum(axis=-1, keepdims=True) / H0 + 1e-5)
    rel = np.abs(y - ref).max() / np.abs(ref).max()
    assert rel <= (2e-7 if dtype == np.float32 else 6e-4)   # measured: 8e-8 (float32), 2.6e-4 (float16)


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(tiling=at.get_rms_norm_tiling_info([B, S, H], [B, S, H0], 2 * RN_TMP, 4)), errors.CapacityError,
     "16 rows per round, which needs 4160 bytes of scratch, but only 4096"),
    (dict(tiling="loop"), errors.ParamRangeError, "inconsistent"),
    (dict(tiling="h"), errors.ParamRangeError, "not a multiple of 32 bytes"),
    (dict(use_tmp=False, fill=196608 - (2 * B * S * H + H) * 4 - 1024), errors.CapacityError,
     "15 rows per round, which needs 3904 bytes of scratch, but only 1024"),
    (dict(tiling="orig"), errors.ParamRangeError, "original_h_length = 0 must be in"),
    (dict(tiling=at.get_rms_norm_tiling_info([B, 2 * S, H], [B, 2 * S, H], RN_TMP, 4)), errors.BoundsError,
     "src needs 2048 elements for the tiling's shape but holds 1024"),
    (dict(tiling=at.get_rms_norm_tiling_info([1, 12, H], [1, 12, H], RN_TMP, 4), basic=True),
     errors.ParamRangeError, "basic_block needs h % 64 == 0, h < 2048 and b \\* s % 8 == 0, got h = 64, b \\* s = 12"),
])
def test_rmsnorm_checks(kwargs, error, text):
    if kwargs.get("tiling") in ("loop", "h", "orig"):
        t = at.get_rms_norm_tiling_info([B, S, H], [B, S, H0], RN_TMP, 4)
        if kwargs["tiling"] == "loop":
            t.loop_round = 2
        elif kwargs["tiling"] == "h":
            t.h_length = 60
        else:
            t.original_h_length = 0
        kwargs = {**kwargs, "tiling": t}
    with pytest.raises(error, match=text):
        run_rmsnorm(**kwargs)


def test_rmsnorm_basic_block_with_a_basic_shape():
    x, g, y = run_rmsnorm(basic=True)
    x64 = x.astype(np.float64)
    ref = x64 * g / np.sqrt((x64 ** 2).sum(axis=-1, keepdims=True) / H0 + 1e-5)
    assert np.abs(y - ref).max() / np.abs(ref).max() <= 2e-7


def test_rmsnorm_without_temp_buffer_when_the_free_ub_suffices():
    x, g, y = run_rmsnorm(use_tmp=False)
    x64 = x.astype(np.float64)
    ref = x64 * g / np.sqrt((x64 ** 2).sum(axis=-1, keepdims=True) / H0 + 1e-5)
    assert np.abs(y - ref).max() / np.abs(ref).max() <= 2e-7


def test_the_pyasc_style_example_runs_through_the_compat_runner():
    """examples/adv_softmax.py, as a user runs it (debug mode: no kernel compile in the subprocess)."""
    script = Path(__file__).resolve().parent.parent / "examples" / "adv_softmax.py"
    env = {**os.environ, "NPUEMU_DEBUG": "1"}
    env.pop("NPUEMU_PLATFORM", None)
    res = subprocess.run([sys.executable, "-m", "npuemu.compat.pyasc", str(script)], capture_output=True, text=True,
                         env=env, timeout=600)
    assert res.returncode == 0, res.stderr
    assert "PYASC-COMPAT adv_softmax ok split_m=8 range_m=4" in res.stdout


@asc.jit
def refused_kernel(case: asc.ConstExpr, tiling: asc.adv.SoftmaxTiling):
    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, M * K)
    h = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 8192, M * 16)
    if case == 0:
        asc.adv.softmax(f, f, f, f, tiling, data_format_nz=True)
    elif case == 1:
        asc.adv.softmax(f, h, h, f, tiling)
    else:
        asc.adv.rmsnorm(f, f, h, 1e-5, tiling)


@pytest.mark.parametrize("case, text", [(0, "data_format_nz=True .* is not emulated"),
                                        (1, "sum and max are float16; they must be float32"),
                                        (2, "gamma is float16 but dst is float32")])
def test_refused_at_compile_time(case, text):
    with pytest.raises(errors.KernelTypeError, match=text):
        refused_kernel[1](case, at.softmax_tiling_func([M, K], 4, 4 * ROW))
