"""fixpipe: NZ -> ND/NZ, strides, nd_num, quantisation modes and ReLU, to GM and to L1.

L0C is filled by an exact mmad: A @ I (float32, or int8 times 127 * I), so
L0C holds known values and every output is compared bit for bit with a NumPy
model of the documented conversion.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu import errors

from cube_helpers import bf16_bits

AIC = asc.KernelType.AIC_ONLY
Q = asc.QuantModes


@asc.jit(kernel_type=AIC)
def fix_kernel(a: asc.GlobalAddress, bt: asc.GlobalAddress, ws: asc.GlobalAddress, out: asc.GlobalAddress,
               M: int, N: int, K: int, n_size: int, m_size: int, dst_stride: int, q: int, deq: int, relu: int,
               nd_num: int, src_nd: int, dst_nd: int, C0: asc.ConstExpr[int], acc: asc.ConstExpr,
               vec: asc.ConstExpr[bool], nz: asc.ConstExpr[bool]):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    wg = asc.GlobalTensor()
    wg.set_global_buffer(ws)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    d = ag.dtype
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    k1 = (K + C0 - 1) // C0
    a1 = asc.LocalTensor(d, asc.TPosition.A1, 0, m1 * 16 * k1 * C0)
    b1 = asc.LocalTensor(d, asc.TPosition.B1, 131072, n1 * 16 * k1 * C0)
    w1 = asc.LocalTensor(asc.uint64, asc.TPosition.C1, 262144, 512)
    a2 = asc.LocalTensor(d, asc.TPosition.A2, 0, m1 * 16 * k1 * C0)
    b2 = asc.LocalTensor(d, asc.TPosition.B2, 0, n1 * 16 * k1 * C0)
    c1 = asc.LocalTensor(acc, asc.TPosition.CO1, 0, m1 * n1 * 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, K, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, N, K, 0, K, n1 * 16, 1, 0))
    if vec:
        asc.data_copy(w1, wg, 512)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * k1 * 16 * C0:], a1[i * 16 * C0:], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(M, N, K, 0, False, True))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    p = asc.FixpipeParamsV220(n_size, m_size, m1 * 16, dst_stride, q, deq, nd_num, src_nd, dst_nd, relu)
    if nz:
        asc.fixpipe(og, c1, p, asc.FixpipeConfig.cfg_nz)
    elif vec:
        asc.fixpipe(og, c1, w1, p)
    else:
        asc.fixpipe(og, c1, p, config=asc.CFG_ROW_MAJOR)


def _word(scale: float, offset: int = 0) -> int:
    return int(np.float32(scale).view(np.uint32)) | ((offset & 0x1FF) << 37)


def _scale(scale: float) -> np.float32:
    return (np.uint32(np.float32(scale).view(np.uint32)) & np.uint32(0xFFFFE000)).view(np.float32)


def _b8(x: np.ndarray, signed: bool) -> np.ndarray:
    lo, hi = (-128, 127) if signed else (0, 255)
    return np.clip(np.rint(x.astype(np.float64)), lo, hi).astype(np.int8 if signed else np.uint8)


def _float_case(rng, M=20, N=40):
    a = (rng.standard_normal((M, N)) * 300).astype(np.float32)
    return a, np.eye(N, dtype=np.float32)        # A @ I (B^T = I): L0C holds A exactly


def _run(a, bt, out, M, N, K, q=0, deq=0, relu=0, n_size=None, m_size=None, dst_stride=None, nd=(1, 0, 0),
         ws=None, c0=8, acc=asc.float32, vec=False, nz=False, **launch):
    ws = np.zeros(512, np.uint64) if ws is None else ws
    fix_kernel[1](a, bt, ws, out, M, N, K, N if n_size is None else n_size, M if m_size is None else m_size,
                  N if dst_stride is None else dst_stride, int(q), deq, relu, *nd, c0, acc, vec, nz, **launch)
    return out


@pytest.mark.parametrize("relu", [0, 1])
def test_f322f16_and_f322bf16_round_to_nearest_even(relu, rng):
    a, bt = _float_case(rng)
    M, N = a.shape
    want = np.maximum(a, 0) if relu else a
    out = _run(a, bt, np.zeros((M, N), np.float16), M, N, N, Q.F322F16, relu=relu)
    np.testing.assert_array_equal(out, want.astype(np.float16))
    raw = np.zeros((M, N), np.uint16)
    _run(a, bt, npuemu.gm_buffer(raw, asc.bfloat16), M, N, N, Q.F322BF16, relu=relu)
    np.testing.assert_array_equal(raw, bf16_bits(want))


def test_qf322b8_scalar_scale_offset_and_saturation(rng):
    a, bt = _float_case(rng)
    M, N = a.shape
    out = _run(a, bt, np.zeros((M, N), np.int8), M, N, N, Q.QF322B8_PRE, deq=_word(0.3, -5))
    want = _b8(a * _scale(0.3) + np.float32(-5), True)
    np.testing.assert_array_equal(out, want)
    out = _run(a, bt, np.zeros((M, N), np.uint8), M, N, N, Q.QF322B8_PRE, deq=_word(0.3, 7))
    np.testing.assert_array_equal(out, _b8(a * _scale(0.3) + np.float32(7), False))


def _int_case(rng, M=18, N=48):
    a = rng.integers(-128, 128, (M, N), dtype=np.int8)
    bt = (np.eye(N) * 127).astype(np.int8)       # L0C = 127 * A, int32
    return a, bt, a.astype(np.int64) * 127


def test_int32_outputs_noquant_deqf16_req8(rng):
    a, bt, c = _int_case(rng)
    M, N = a.shape
    kw = dict(c0=32, acc=asc.int32)
    out = _run(a, bt, np.zeros((M, N), np.int32), M, N, N, Q.NoQuant, relu=1, **kw)
    np.testing.assert_array_equal(out, np.maximum(c, 0))
    out = _run(a, bt, np.zeros((M, N), np.float16), M, N, N, Q.DEQF16, deq=_word(0.01), **kw)
    np.testing.assert_array_equal(out, (c.astype(np.float32) * _scale(0.01)).astype(np.float16))
    out = _run(a, bt, np.zeros((M, N), np.int8), M, N, N, Q.REQ8, deq=_word(1 / 64, 3), **kw)
    np.testing.assert_array_equal(out, _b8(c.astype(np.float32) * _scale(1 / 64) + np.float32(3), True))


def test_vector_deq_and_req_use_per_column_scales(rng):
    a, bt, c = _int_case(rng)
    M, N = a.shape
    scales = rng.uniform(0.001, 0.05, N).astype(np.float32)
    ws = np.zeros(512, np.uint64)
    ws[:N] = [_word(s, 2) for s in scales]
    kw = dict(c0=32, acc=asc.int32, vec=True, ws=ws)
    col = np.array([_scale(s) for s in scales], np.float32)
    out = _run(a, bt, np.zeros((M, N), np.float16), M, N, N, Q.VDEQF16, **kw)
    np.testing.assert_array_equal(out, (c.astype(np.float32) * col).astype(np.float16))
    out = _run(a, bt, np.zeros((M, N), np.int8), M, N, N, Q.VREQ8, **kw)
    np.testing.assert_array_equal(out, _b8(c.astype(np.float32) * col + np.float32(2), True))


def test_strides_sub_block_and_nd_num(rng):
    a, bt = _float_case(rng, M=32, N=32)
    # a 10 x 20 corner into rows 40 elements apart
    out = np.full((10, 40), -1.0, np.float32)
    _run(a, bt, out, 32, 32, 32, n_size=20, m_size=10, dst_stride=40)
    np.testing.assert_array_equal(out[:, :20], a[:10, :20])
    assert (out[:, 20:] == -1).all()
    # two 16-column matrices (fractal columns 0 and 1, m1 = 2 fractals apart) -> two stacked ND blocks
    out = np.zeros((2, 32, 16), np.float32)
    _run(a, bt, out, 32, 32, 32, n_size=16, m_size=32, dst_stride=16, nd=(2, 2, 512))
    np.testing.assert_array_equal(out[0], a[:, :16])
    np.testing.assert_array_equal(out[1], a[:, 16:])


def test_nz_output_keeps_fractals(rng):
    a, bt = _float_case(rng, M=20, N=32)
    M, N = a.shape
    m1 = 2
    # fractal columns 64 blocks apart (32 rows of 16 halves = 32 blocks of data + 32 spare)
    out = np.zeros((2, 64, 16), np.float16)
    _run(a, bt, out, M, N, N, Q.F322F16, dst_stride=64, nz=True)
    for j in range(m1):
        np.testing.assert_array_equal(out[j, :M], a[:, j * 16:(j + 1) * 16].astype(np.float16))


def test_wrong_quant_combination_is_reported():
    a = np.zeros((16, 16), np.float32)
    with pytest.raises(errors.ParamRangeError, match=r"quant_pre DEQF16 cannot convert float32 in L0C to float16"):
        _run(a, np.eye(16, dtype=np.float32), np.zeros((16, 16), np.float16), 16, 16, 16, Q.DEQF16)


@asc.jit(kernel_type=AIC)
def l1_roundtrip(a: asc.GlobalAddress, bt: asc.GlobalAddress, eye: asc.GlobalAddress, out: asc.GlobalAddress,
                 M: int, N: int, K: int):
    """C1 = A @ B to L1 as float16 NZ (fixpipe L0C -> L1), then C1 @ I back to GM: equals f16(A @ B)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    eg = asc.GlobalTensor()
    eg.set_global_buffer(eye)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    k1 = (K + 15) // 16
    e1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 196608, n1 * n1 * 256)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, m1 * k1 * 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, n1 * k1 * 256)
    t1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 131072, m1 * n1 * 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, m1 * k1 * 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, n1 * k1 * 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, m1 * n1 * 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, K, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, N, K, 0, K, n1 * 16, 1, 0))
    asc.data_copy(e1, eg, asc.Nd2NzParams(1, n1 * 16, n1 * 16, 0, n1 * 16, n1 * 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * k1 * 256:], a1[i * 256:], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(M, N, K))
    asc.set_flag(asc.HardEvent.M_MTE1, 0)
    asc.wait_flag(asc.HardEvent.M_MTE1, 0)
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    # NZ in L1: fractal columns m1 * 16 rows (of 32 bytes) apart, as ND2NZ would lay out C
    asc.fixpipe(t1, c1, asc.FixpipeParamsV220(n1 * 16, M, m1 * 16, m1 * 16, asc.QuantModes.F322F16))
    asc.set_flag(asc.HardEvent.FIX_MTE1, 0)
    asc.wait_flag(asc.HardEvent.FIX_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * n1 * 256:], t1[i * 256:], asc.LoadData2DParams(0, n1, m1, 0, 0, False, 0))
    asc.load_data(b2, e1, asc.LoadData2DParams(0, n1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 1)
    asc.wait_flag(asc.HardEvent.MTE1_M, 1)
    asc.set_flag(asc.HardEvent.FIX_M, 0)
    asc.wait_flag(asc.HardEvent.FIX_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(M, n1 * 16, n1 * 16))
    asc.set_flag(asc.HardEvent.M_FIX, 1)
    asc.wait_flag(asc.HardEvent.M_FIX, 1)
    asc.fixpipe(og, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N))


def test_fixpipe_to_l1_feeds_the_next_mmad(rng):
    M, N, K = 20, 32, 24
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    out = np.zeros((M, N), np.float32)
    l1_roundtrip[1](a, np.ascontiguousarray(b.T), np.eye(32, dtype=np.float16), out, M, N, K, check="full")
    c = (a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_allclose(out, c.astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-3)


def test_a_config_held_in_a_variable_stays_a_compile_time_choice():
    """An enum field of a struct kept in a variable is still the constant it was (not a run-time number)."""
    @asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
    def cfg_kernel(out: asc.GlobalAddress):
        cfg = asc.FixpipeConfig(asc.CO2Layout.NZ)
        og = asc.GlobalTensor()
        og.set_global_buffer(out, 256)
        c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.fixpipe(og, c, asc.FixpipeParamsV220(16, 16, 16, 16), cfg)

    out = np.zeros(256, np.float32)
    cfg_kernel.compile([out])          # compiles: the layout is known at compile time
