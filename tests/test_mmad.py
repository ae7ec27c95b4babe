"""mmad end to end (GM -ND2NZ-> L1 -load_data-> L0A/L0B -mmad-> L0C -fixpipe-> GM) against NumPy.

The references are computed independently: plain ``A @ B`` in float64 /
int64 on the (upcast) inputs.  Accuracy: int8 is exact; float16/bfloat16
products are exact in float32, so the result differs from the float64
reference only by float32 summation rounding; float32 compares within
float32 summation error.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu import errors

from cube_helpers import bf16_bits, from_bf16, hf32_ref

AIC = asc.KernelType.AIC_ONLY


@asc.jit(kernel_type=AIC)
def gemm_bt(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, M: int, N: int, K: int, KC: int,
            q: int, deq: int, relu: int, C0: asc.ConstExpr[int], acc: asc.ConstExpr):
    """C = A (M x K) @ B, B given transposed (N x K), K in chunks of KC accumulated in L0C."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    d = ag.dtype
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    kc1 = (KC + C0 - 1) // C0
    a1 = asc.LocalTensor(d, asc.TPosition.A1, 0, m1 * 16 * kc1 * C0)
    b1 = asc.LocalTensor(d, asc.TPosition.B1, 262144, n1 * 16 * kc1 * C0)
    a2 = asc.LocalTensor(d, asc.TPosition.A2, 0, m1 * 16 * kc1 * C0)
    b2 = asc.LocalTensor(d, asc.TPosition.B2, 0, n1 * 16 * kc1 * C0)
    c1 = asc.LocalTensor(acc, asc.TPosition.CO1, 0, m1 * n1 * 256)
    nk = (K + KC - 1) // KC
    for kc in range(nk):
        kh = min(KC, K - kc * KC)
        kf = (kh + C0 - 1) // C0
        asc.data_copy(a1, ag[kc * KC:], asc.Nd2NzParams(1, M, kh, 0, K, m1 * 16, 1, 0))
        asc.data_copy(b1, bg[kc * KC:], asc.Nd2NzParams(1, N, kh, 0, K, n1 * 16, 1, 0))
        asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
        for i in range(m1):
            asc.load_data(a2[i * kf * 16 * C0:], a1[i * 16 * C0:], asc.LoadData2DParams(0, kf, m1, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, kf * n1, 1, 0, 0, False, 0))
        asc.set_flag(asc.HardEvent.MTE1_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, 0)
        asc.set_flag(asc.HardEvent.MTE1_M, 0)
        asc.wait_flag(asc.HardEvent.MTE1_M, 0)
        asc.mmad(c1, a2, b2, asc.MmadParams(M, N, kh, 0, False, kc == 0))
        asc.set_flag(asc.HardEvent.M_MTE1, 0)
        asc.wait_flag(asc.HardEvent.M_MTE1, 0)
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N, q, deq, 1, 0, 0, relu))


@asc.jit(kernel_type=AIC)
def gemm_f16_transposed_load(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, M: int, N: int,
                             K: int, fix_sync: asc.ConstExpr[bool]):
    """C = A @ B with B in ND (K x N): B1 holds B as NZ, load_data(if_transpose=True) builds ZN."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    m1 = (M + 15) // 16
    k1 = (K + 15) // 16
    n1 = (N + 15) // 16
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, m1 * k1 * 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, k1 * n1 * 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, m1 * k1 * 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, k1 * n1 * 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, m1 * n1 * 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, K, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg, intri_params=asc.Nd2NzParams(1, K, N, 0, N, k1 * 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * k1 * 256:], a1[i * 256:], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    for i in range(k1):
        asc.load_data(b2[i * n1 * 256:], b1[i * 256:],
                      asc.LoadData2DParams(start_index=0, repeat_times=n1, src_stride=k1, if_transpose=True))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(m=M, n=N, k=K))
    if fix_sync:
        asc.set_flag(asc.HardEvent.M_FIX, 0)
        asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N, asc.QuantModes.F322F16))


CASES = {
    # dtype: (C0, L0C dtype, quant)
    "float16": (16, asc.float32, int(asc.QuantModes.NoQuant)),
    "bfloat16": (16, asc.float32, int(asc.QuantModes.NoQuant)),
    "float32": (8, asc.float32, int(asc.QuantModes.NoQuant)),
    "int8": (32, asc.int32, int(asc.QuantModes.NoQuant)),
}


def _inputs(rng, dtype: str, M: int, N: int, K: int):
    if dtype == "int8":
        a = rng.integers(-128, 128, (M, K), dtype=np.int8)
        b = rng.integers(-128, 128, (K, N), dtype=np.int8)
        return a, b, a.astype(np.int64), b.astype(np.int64)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    if dtype == "float16":
        a16, b16 = a.astype(np.float16), b.astype(np.float16)
        return a16, b16, a16.astype(np.float64), b16.astype(np.float64)
    if dtype == "bfloat16":
        ab, bb = bf16_bits(a), bf16_bits(b)
        return ab, bb, from_bf16(ab).astype(np.float64), from_bf16(bb).astype(np.float64)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def _run_gemm(dtype, M, N, K, KC, rng, **launch):
    a, b, a_ref, b_ref = _inputs(rng, dtype, M, N, K)
    c0, acc, q = CASES[dtype]
    out = np.zeros((M, N), np.int32 if dtype == "int8" else np.float32)
    bt = np.ascontiguousarray(b.T)
    if dtype == "bfloat16":
        kernel_args = (npuemu.gm_buffer(a, asc.bfloat16), npuemu.gm_buffer(bt, asc.bfloat16))
    else:
        kernel_args = (a, bt)
    gemm_bt[1](*kernel_args, out, M, N, K, KC, q, 0, 0, c0, acc, **launch)
    return out, a_ref @ b_ref, K


@pytest.mark.parametrize("dtype", list(CASES))
def test_gemm_all_dtypes_odd_shapes(dtype, rng):
    """Odd M, N, K (tails in every direction) and K split into chunks accumulated in L0C."""
    M, N, K, KC = 37, 45, 150, 64
    out, ref, K = _run_gemm(dtype, M, N, K, KC, rng)
    if dtype == "int8":
        np.testing.assert_array_equal(out, ref)
    else:
        tol = 1e-5 * np.sqrt(K) * np.abs(ref).max()
        np.testing.assert_allclose(out, ref, rtol=0, atol=tol)


def test_gemm_debug_mode_matches_compiled(rng):
    """Both execution modes give identical bits."""
    M, N, K, KC = 20, 33, 40, 32
    outs = []
    for dbg in (False, True):
        r = np.random.default_rng(5)
        out, ref, _ = _run_gemm("float16", M, N, K, KC, r, debug=dbg)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_allclose(outs[0], ref, rtol=0, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("mode_", ["compiled", "debug"])
def test_transposed_b_load_and_f16_output(mode_, rng):
    """B in ND through load_data(if_transpose=True); fixpipe F322F16 rounds to nearest even."""
    M, N, K = 30, 40, 70
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    out = np.zeros((M, N), np.float16)
    gemm_f16_transposed_load[1](a, b, out, M, N, K, True, debug=mode_ == "debug", check="full")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3, atol=2e-3 * np.abs(ref).max())


def test_missing_m_fix_sync_is_a_race(rng):
    M, N, K = 16, 16, 16
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    out = np.zeros((M, N), np.float16)
    with pytest.raises(errors.RaceError, match="M_FIX"):
        gemm_f16_transposed_load[1](a, b, out, M, N, K, False, check="full")


def test_gemv_reads_a_as_nd(rng):
    M, N, K = 1, 48, 100
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    out = np.zeros((M, N), np.float32)
    gemv_kernel[1](a, np.ascontiguousarray(b.T), out, N, K)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-5 * np.sqrt(K) * np.abs(ref).max())


@asc.jit(kernel_type=AIC)
def gemv_kernel(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, N: int, K: int):
    """m = 1: the vector goes to L0A in ND (Nd2Nz with dst_nz_c0_stride = 1 keeps the row contiguous)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    k1 = (K + 15) // 16
    n1 = (N + 15) // 16
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 4096)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, k1 * n1 * 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 4096)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, k1 * n1 * 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, n1 * 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, 1, K, 0, K, 1, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, N, K, 0, K, n1 * 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, (K * 2 + 511) // 512, 1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(1, N, K, 0, False, True))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, 1, 16, N, asc.QuantModes.NoQuant))


@asc.jit(kernel_type=AIC)
def gemm_queues(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, M: int, N: int, K: int):
    """float16 C = A @ B with TQue on A1/B1/A2/B2/CO1 (double-buffered A2/B2) over K chunks of 32."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    qa1 = asc.TQue(asc.TPosition.A1, 1)
    qb1 = asc.TQue(asc.TPosition.B1, 1)
    qa2 = asc.TQue(asc.TPosition.A2, 2)
    qb2 = asc.TQue(asc.TPosition.B2, 2)
    qc = asc.TQue(asc.TPosition.CO1, 1)
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    pipe.init_buffer(qa1, 1, m1 * 16 * 32 * 2)
    pipe.init_buffer(qb1, 1, n1 * 16 * 32 * 2)
    pipe.init_buffer(qa2, 2, m1 * 16 * 32 * 2)
    pipe.init_buffer(qb2, 2, n1 * 16 * 32 * 2)
    pipe.init_buffer(qc, 1, m1 * n1 * 1024)
    c1 = qc.alloc_tensor(asc.float32)
    for kc in range(K // 32):
        a1 = qa1.alloc_tensor(asc.float16)
        b1 = qb1.alloc_tensor(asc.float16)
        asc.data_copy(a1, ag[kc * 32:], asc.Nd2NzParams(1, M, 32, 0, K, m1 * 16, 1, 0))
        asc.data_copy(b1, bg[kc * 32:], asc.Nd2NzParams(1, N, 32, 0, K, n1 * 16, 1, 0))
        qa1.enque(a1)
        qb1.enque(b1)
        a1 = qa1.deque(asc.float16)
        b1 = qb1.deque(asc.float16)
        a2 = qa2.alloc_tensor(asc.float16)
        b2 = qb2.alloc_tensor(asc.float16)
        for i in range(m1):
            asc.load_data(a2[i * 512:], a1[i * 256:], asc.LoadData2DParams(0, 2, m1, 0, 0, False, 0))
        asc.load_data(b2, b1, asc.LoadData2DParams(0, 2 * n1, 1, 0, 0, False, 0))
        qa1.free_tensor(a1)
        qb1.free_tensor(b1)
        qa2.enque(a2)
        qb2.enque(b2)
        a2 = qa2.deque(asc.float16)
        b2 = qb2.deque(asc.float16)
        asc.mmad(c1, a2, b2, asc.MmadParams(M, N, 32, 0, False, kc == 0))
        qa2.free_tensor(a2)
        qb2.free_tensor(b2)
    qc.enque(c1)
    c1 = qc.deque(asc.float32)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N))
    qc.free_tensor(c1)


def test_gemm_through_queues_is_race_free(rng):
    """TQue on every cube position; the queues' implicit syncs order MTE2, MTE1, M and FIX at check=full."""
    M, N, K = 40, 24, 96
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    out = np.zeros((M, N), np.float32)
    gemm_queues[1](a, np.ascontiguousarray(b.T), out, M, N, K, check="full")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-5 * np.sqrt(K) * np.abs(ref).max())


@asc.jit(kernel_type=AIC)
def gemm_bias(a: asc.GlobalAddress, bt: asc.GlobalAddress, bias: asc.GlobalAddress, c: asc.GlobalAddress,
              M: int, N: int, K: int, how: asc.ConstExpr[int]):
    """float16 A @ B plus: 0 the C2 bias overload, 1 cmatrix_source=True (C from the bias table),
    2 the CO1 bias overload with the same product (2 A @ B)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(bias)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    k1 = (K + 15) // 16
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, m1 * k1 * 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, n1 * k1 * 256)
    z1 = asc.LocalTensor(asc.float32, asc.TPosition.C1, 131072, n1 * 16)
    z2 = asc.LocalTensor(asc.float32, asc.TPosition.C2, 0, n1 * 16)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, m1 * k1 * 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, n1 * k1 * 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, m1 * n1 * 256)
    cb = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 65536, m1 * n1 * 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, K, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, N, K, 0, K, n1 * 16, 1, 0))
    asc.data_copy(z1, zg, n1 * 16)
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.data_copy(z2, z1, asc.DataCopyParams(1, n1, 0, 0))
    for i in range(m1):
        asc.load_data(a2[i * k1 * 256:], a1[i * 256:], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    if how == 0:
        asc.mmad(c1, a2, b2, z2, asc.MmadParams(M, N, K))
    elif how == 1:
        asc.mmad(c1, a2, b2, asc.MmadParams(M, N, K, 0, True, False))
    else:
        asc.mmad(cb, a2, b2, asc.MmadParams(M, N, K))
        asc.mmad(c1, a2, b2, cb, asc.MmadParams(M, N, K))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N))


@pytest.mark.parametrize("how", [0, 1, 2], ids=["c2-bias", "cmatrix-source", "co1-bias"])
def test_bias_sources(how, rng):
    M, N, K = 20, 40, 48
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    bias = np.zeros(48, np.float32)
    bias[:N] = rng.standard_normal(N)
    out = np.zeros((M, N), np.float32)
    gemm_bias[1](a, np.ascontiguousarray(b.T), bias, out, M, N, K, how, check="full")
    prod = a.astype(np.float64) @ b.astype(np.float64)
    ref = 2 * prod if how == 2 else prod + bias[:N]
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-5 * np.sqrt(K) * np.abs(ref).max())


@pytest.mark.parametrize("away", [False, True])
def test_hf32_mode_rounds_float32_inputs(away, rng):
    """The instruction on a bare AIC core: 16 x 16 x 8 float32, inputs rounded to HF32 when the mode is on."""
    from npuemu.isa import mmad as mm_isa
    from npuemu.language.enums import Hardware
    from npuemu.runtime.cores import AIC as AIC_CORE, CoreSpec, new_core_state
    from npuemu.platform import default_platform
    from npuemu.isa import state as S
    st, lm = new_core_state(CoreSpec(AIC_CORE, 0, 1), default_platform())
    a = (1 + rng.random((16, 8))).astype(np.float32)
    b = (1 + rng.random((8, 16))).astype(np.float32)
    l0a, l0b, l0c = (int(st[S.SEG_BASE + h]) for h in (Hardware.L0A, Hardware.L0B, Hardware.L0C))
    lm[l0a:l0a + 512] = a.view(np.uint8).ravel()              # one 16 x 8 ZZ fractal
    lm[l0b:l0b + 512] = b.T.copy().view(np.uint8).ravel()     # one 8 x 16 ZN fractal (column-major)
    mm_isa.set_hf32_mode(st, True, 0)
    mm_isa.set_hf32_trans_mode(st, away, 0)
    mm_isa.mmad(st, lm, l0c, 256, l0a, 128, l0b, 128, 0, 0, 0, 16, 16, 8, 0, False, True, mm_isa.IN_F32, 0)
    got = lm[l0c:l0c + 1024].view(np.float32).reshape(16, 16)
    ref = hf32_ref(a, away).astype(np.float64) @ hf32_ref(b, away).astype(np.float64)
    np.testing.assert_allclose(got, ref, rtol=2e-7)
    assert np.abs(got - a.astype(np.float64) @ b.astype(np.float64)).max() > 1e-5     # the rounding shows
    mm_isa.set_hf32_mode(st, False, 0)
    mm_isa.mmad(st, lm, l0c, 256, l0a, 128, l0b, 128, 0, 0, 0, 16, 16, 8, 0, False, True, mm_isa.IN_F32, 0)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=2e-7)


def test_legacy_mmad_params_constructor():
    p = asc.MmadParams(16, 32, 48, True, 0, False, False, False)
    assert (p.m, p.n, p.k, p.cmatrix_init_val) == (16, 32, 48, False)
    q = asc.MmadParams(16, 32, 48, 0, False, True)
    assert q.cmatrix_init_val and not q.cmatrix_source


def test_mm_layout_transform_is_a_cube_setting():
    """set_mm_layout_transform (the order mmad walks M and N, which leaves every output element as it is) runs on
    cube cores with a constant or run-time flag and is refused on vector cores."""
    @asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
    def walk(flag: bool):
        asc.set_mm_layout_transform(flag)
        asc.set_mm_layout_transform(True)

    walk[1](False)

    @asc.jit
    def on_a_vector_core():
        asc.set_mm_layout_transform(True)

    with pytest.raises(errors.KernelTypeError, match="cube instruction"):
        on_a_vector_core[1]()
