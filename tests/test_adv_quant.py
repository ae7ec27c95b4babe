"""asc.adv.quant (with QuantConfig) and the sort helpers asc.adv.concat / extract, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 512
SCALE, OFFSET = 37.3, -2.6
TOPK = 64                                   # two sort32 groups


@asc.jit
def _quant_section(x: asc.GlobalAddress, q: asc.GlobalAddress, scale: float, offset: float):
    xg, qg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    qg.set_global_buffer(q, N)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, N)
    d = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 4096, N)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 8192, 512)
    asc.data_copy(a, xg, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adv.quant(d, a, scale, offset, temp_buffer=t, config=asc.adv.QuantConfig(calc_count=N))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(qg, d, N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


@asc.jit
def quant_sort_kernel(xh: asc.GlobalAddress, qh: asc.GlobalAddress, xf: asc.GlobalAddress, qf: asc.GlobalAddress,
                      s: asc.GlobalAddress, idx: asc.GlobalAddress, vals: asc.GlobalAddress,
                      inds: asc.GlobalAddress, scale: float, offset: float):
    _quant_section(xh, qh, scale, offset)
    _quant_section(xf, qf, scale, offset)
    sg, ig, vg, og = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    sg.set_global_buffer(s, TOPK)
    ig.set_global_buffer(idx, TOPK)
    vg.set_global_buffer(vals, TOPK)
    og.set_global_buffer(inds, TOPK)
    src = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 16384, TOPK)
    ind = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 17408, TOPK)
    cat = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 18432, TOPK)
    tmp = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 19456, 2 * TOPK)
    srt = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 20480, 2 * TOPK)
    val = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 21504, TOPK)
    out = asc.LocalTensor(asc.uint32, asc.TPosition.VECOUT, 22528, TOPK)
    asc.data_copy(src, sg, TOPK)
    asc.data_copy(ind, ig, TOPK)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adv.concat(cat, src, tmp, TOPK // 16)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.sort(srt, cat, ind, tmp, TOPK // 32, is_full_sort=True)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.adv.extract(val, out, srt, TOPK // 32)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(vg, val, TOPK)
    asc.data_copy(og, out, TOPK)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


def quant_reference(x: np.ndarray, scale: float, offset: float) -> np.ndarray:
    """Each step rounded to float16 as the library's instructions do; round half to even, saturate."""
    h = x.astype(np.float16)
    t = (h * np.float16(scale)).astype(np.float16)
    t = (t + np.float16(offset)).astype(np.float16)
    r = np.rint(t.astype(np.float64))
    return np.where(np.isnan(r), 0, np.clip(r, -128, 127)).astype(np.int8)


def test_quant_and_sort_helpers():
    rng = np.random.default_rng(11)
    xf = rng.uniform(-5, 5, N).astype(np.float32)
    xf[:6] = [0.0, 1 / 74.6, 3 / 74.6, 100.0, -100.0, np.nan]       # ties after the float16 steps, saturation
    xh = xf.astype(np.float16)
    qh, qf = np.zeros(N, np.int8), np.zeros(N, np.int8)
    scores = rng.permutation(TOPK).astype(np.float32)
    idx = np.arange(TOPK, dtype=np.uint32) + 1000
    vals, inds = np.zeros(TOPK, np.float32), np.zeros(TOPK, np.uint32)
    quant_sort_kernel[1](xh, qh, xf, qf, scores, idx, vals, inds, SCALE, OFFSET, check="full")
    np.testing.assert_array_equal(qh, quant_reference(xh, SCALE, OFFSET))
    np.testing.assert_array_equal(qf, quant_reference(xf, SCALE, OFFSET))
    assert qf[3] == 127 and qf[4] == -128 and qf[5] == 0
    order = np.argsort(-scores, kind="stable")
    np.testing.assert_array_equal(vals, scores[order])
    np.testing.assert_array_equal(inds, idx[order])


@asc.jit
def misuse_kernel(case: asc.ConstExpr, n: int, tmp_len: int, repeat: int):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, N)
    d = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 4096, N)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, 8192, tmp_len)
    f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 16384, 64)
    u = asc.LocalTensor(asc.uint32, asc.TPosition.VECIN, 17408, 64)
    asc.duplicate(a, 1.0, N)
    asc.duplicate(f, 1.0, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if case == 0:
        asc.adv.quant(d, a, 2.0, 0.0, n, t)
    elif case == 1:
        asc.adv.concat(f, f[32:], f, repeat)
    elif case == 2:
        asc.adv.extract(f, u, f, repeat)
    elif case == 3:
        asc.adv.quant(a, a, 2.0, 0.0, n, t)


@pytest.mark.parametrize("case, n, tmp_len, repeat, error, text", [
    (0, N, 256, 1, errors.CapacityError, "holds 256 bytes but this call needs at least 512"),
    (0, N + 32, 512, 1, errors.BoundsError, "touches 544 elements"),
    (1, N, 512, 3, errors.BoundsError, "src: repeat_time needs 48 elements but the tensor holds 32"),
    (2, N, 512, 300, errors.ParamRangeError, "repeat_time 300 out of range"),
    (2, N, 512, 2, errors.BoundsError, "src: repeat_time needs 128 elements but the tensor holds 64"),
])
def test_each_check_catches_its_broken_call(case, n, tmp_len, repeat, error, text):
    with pytest.raises(error, match=text):
        misuse_kernel[1](case, n, tmp_len, repeat, check="full")


def test_correct_calls_are_not_flagged():
    misuse_kernel[1](0, N, 512, 1, check="full")
    misuse_kernel[1](1, N, 512, 2, check="full")
    misuse_kernel[1](2, N, 512, 1, check="full")


def test_quant_needs_an_int8_dst():
    with pytest.raises(errors.KernelTypeError, match="dst must be int8"):
        misuse_kernel[1](3, N, 512, 1)
