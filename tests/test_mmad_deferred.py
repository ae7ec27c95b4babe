"""Deferred L0C accumulation (isa/mmad.py): every way of using L0C sees the accumulated C.

Float mmads that accumulate into one C add their products to a dense copy of
C outside L0C, which is written back when L0C is next used; int8 mmads
collect their operands and multiply once.  These kernels use L0C between
accumulations in each of the ways that must write C back first (a scalar
read or write of a CO1 tensor, an mmad into another C, int8 panels that fill
up) and compare with float64 / int64 NumPy products of the same inputs.  A
fixpipe may read C straight from the dense copy, which then stands in for
L0C: the kernels after that accumulate onto C, read it by scalar, overwrite
part of it or read it again.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.isa import mmad as mm_isa
from npuemu.isa import state as S
from npuemu.language.enums import Hardware
from npuemu.runtime.cores import AIC as AIC_CORE, CoreSpec, cube_scratch_bytes, new_core_state
from npuemu.platform import default_platform

from cube_helpers import hf32_ref

AIC = asc.KernelType.AIC_ONLY


@asc.jit
def _chunk(c1: asc.LocalTensor, a1: asc.LocalTensor, b1: asc.LocalTensor, a2: asc.LocalTensor,
           b2: asc.LocalTensor, ag: asc.GlobalTensor, bg: asc.GlobalTensor, M: int, N: int, K: int, KC: int,
           kc: int, C0: asc.ConstExpr[int], fresh: bool = True):
    """Stage K chunk ``kc`` of A (M x K) and B^T (N x K) in L0A/L0B and accumulate it into ``c1``
    (chunk 0 starts C from 0 when ``fresh``)."""
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    kh = min(KC, K - kc * KC)
    kf = (kh + C0 - 1) // C0
    asc.data_copy(a1, ag[kc * KC:], asc.Nd2NzParams(1, M, kh, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg[kc * KC:], asc.Nd2NzParams(1, N, kh, 0, K, n1 * 16, 1, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(m1):
        asc.load_data(a2[i * kf * 16 * C0:], a1[i * 16 * C0:], asc.LoadData2DParams(0, kf, m1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, kf * n1, 1, 0, 0, False, 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.mmad(c1, a2, b2, asc.MmadParams(M, N, kh, 0, False, fresh and kc == 0))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)


@asc.jit(kernel_type=AIC)
def gemm_touching_l0c(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, c2: asc.GlobalAddress,
                      M: int, N: int, K: int, KC: int, peek: int, C0: asc.ConstExpr[int], acc: asc.ConstExpr):
    """C = A @ B accumulated over K chunks, and a second C' = A @ B in another L0C tile, interleaved.

    After the first chunk, element ``peek`` of C is read and written back
    doubled by the scalar unit (so C ends as A @ B plus the first chunk's
    product at ``peek``); the chunks alternate between C and C'.
    """
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    cg2 = asc.GlobalTensor()
    cg2.set_global_buffer(c2)
    d = ag.dtype
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    kc1 = (KC + C0 - 1) // C0
    a1 = asc.LocalTensor(d, asc.TPosition.A1, 0, m1 * 16 * kc1 * C0)
    b1 = asc.LocalTensor(d, asc.TPosition.B1, 262144, n1 * 16 * kc1 * C0)
    a2 = asc.LocalTensor(d, asc.TPosition.A2, 0, m1 * 16 * kc1 * C0)
    b2 = asc.LocalTensor(d, asc.TPosition.B2, 0, n1 * 16 * kc1 * C0)
    c1 = asc.LocalTensor(acc, asc.TPosition.CO1, 0, m1 * n1 * 256)
    c1b = asc.LocalTensor(acc, asc.TPosition.CO1, 65536, m1 * n1 * 256)
    nk = (K + KC - 1) // KC
    for kc in range(nk):
        _chunk(c1, a1, b1, a2, b2, ag, bg, M, N, K, KC, kc, C0)
        if kc == 0 and peek >= 0:
            x = c1.get_value(peek)
            c1.set_value(peek, x + x)
        _chunk(c1b, a1, b1, a2, b2, ag, bg, M, N, K, KC, kc, C0)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N))
    asc.fixpipe(cg2, c1b, asc.FixpipeParamsV220(N, M, m1 * 16, N))


def _operands(dtype: str, M: int, N: int, K: int, rng):
    if dtype == "int8":
        a = rng.integers(-128, 128, (M, K), dtype=np.int8)
        b = rng.integers(-128, 128, (K, N), dtype=np.int8)
        return a, b, a.astype(np.int64), b.astype(np.int64)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    return a, b, a.astype(np.float64), b.astype(np.float64)


def _nz_index(r: int, col: int, m1: int) -> int:
    """Element index of C[r, col] in an NZ L0C tile of m1 row fractals."""
    return (col // 16 * m1 + r // 16) * 256 + r % 16 * 16 + col % 16


CASES = {"float16": (16, asc.float32), "float32": (8, asc.float32), "int8": (32, asc.int32)}


def _check(got: np.ndarray, ref: np.ndarray, dtype: str, k: int) -> float:
    """int8: exact; floats: within float32 summation error over ``k`` terms (the tolerance is returned)."""
    if dtype == "int8":
        np.testing.assert_array_equal(got, ref)
        return 0.0
    tol = 1e-5 * np.sqrt(k) * np.abs(ref).max()
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol)
    return tol


@pytest.mark.parametrize("dtype", list(CASES))
def test_scalar_access_and_other_tiles_see_the_pending_product(dtype, rng):
    M, N, K, KC = 35, 40, 130, 32
    c0, acc = CASES[dtype]
    a, b, a_ref, b_ref = _operands(dtype, M, N, K, rng)
    out_dtype = np.int32 if dtype == "int8" else np.float32
    c, c2 = np.zeros((M, N), out_dtype), np.zeros((M, N), out_dtype)
    r, col = 17, 33
    gemm_touching_l0c[1](a, np.ascontiguousarray(b.T), c, c2, M, N, K, KC, _nz_index(r, col, (M + 15) // 16), c0,
                         acc)
    ref = a_ref @ b_ref
    ref_peeked = ref.copy()
    ref_peeked[r, col] += a_ref[r, :KC] @ b_ref[:KC, col]       # doubled after the first chunk
    tol = _check(c, ref_peeked, dtype, K)
    _check(c2, ref, dtype, K)
    assert abs(c[r, col] - ref[r, col]) > 10 * tol              # the doubling shows


@asc.jit(kernel_type=AIC)
def gemm_then_l0c(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, c2: asc.GlobalAddress,
                  M: int, N: int, K: int, KC: int, then: int, peek: int, C0: asc.ConstExpr[int],
                  acc: asc.ConstExpr):
    """C = A @ B over K chunks to ``c`` by fixpipe, then (``then``) 0: C += A @ B; 1: element ``peek``
    doubled by the scalar unit; 2: rows 0-15 of A times B into the same L0C address (one row of fractals,
    so only the first N1 fractals of C change); 3: nothing; then C to ``c2`` (3: with ReLU)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    cg2 = asc.GlobalTensor()
    cg2.set_global_buffer(c2)
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
        _chunk(c1, a1, b1, a2, b2, ag, bg, M, N, K, KC, kc, C0)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(N, M, m1 * 16, N))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if then == 0:
        for kc in range(nk):
            _chunk(c1, a1, b1, a2, b2, ag, bg, M, N, K, KC, kc, C0, False)
    elif then == 1:
        x = c1.get_value(peek)
        c1.set_value(peek, x + x)
    elif then == 2:
        for kc in range(nk):
            _chunk(c1, a1, b1, a2, b2, ag, bg, 16, N, K, KC, kc, C0)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.fixpipe(cg2, c1, asc.FixpipeParamsV220(n_size=N, m_size=M, src_stride=m1 * 16, dst_stride=N,
                                                quant_pre=asc.QuantModes.NoQuant, deq_scalar=0, nd_num=1,
                                                src_nd_stride=0, dst_nd_stride=0, relu_en=then == 3, unit_flag=0,
                                                is_channel_split=False))


def _first_fractals_replaced(c: np.ndarray, top: np.ndarray) -> np.ndarray:
    """C (M x N, an NZ tile of M1 x N1 fractals) after its first N1 fractals are overwritten by the NZ tile
    of ``top`` (16 x N: one row of fractals), read back in C's layout."""
    m, n = c.shape
    m1, n1 = -(-m // 16), -(-n // 16)
    nz = np.zeros(m1 * n1 * 256, c.dtype)
    for r in range(m):
        for col in range(n):
            nz[_nz_index(r, col, m1)] = c[r, col]
    for r in range(16):
        for col in range(n):
            nz[_nz_index(r, col, 1)] = top[r, col]
    return np.array([[nz[_nz_index(r, col, m1)] for col in range(n)] for r in range(m)])


@pytest.mark.parametrize("then", ["accumulate", "scalar", "partial overwrite", "relu"])
@pytest.mark.parametrize("dtype", list(CASES))
def test_l0c_after_a_fixpipe_from_the_product(dtype, then, rng):
    M, N, K, KC = 35, 48, 100, 32        # N whole fractals: the partial overwrite moves no padding columns
    c0, acc = CASES[dtype]
    a, b, a_ref, b_ref = _operands(dtype, M, N, K, rng)
    out_dtype = np.int32 if dtype == "int8" else np.float32
    c, c2 = np.zeros((M, N), out_dtype), np.zeros((M, N), out_dtype)
    r, col = 33, 21
    code = ["accumulate", "scalar", "partial overwrite", "relu"].index(then)
    gemm_then_l0c[1](a, np.ascontiguousarray(b.T), c, c2, M, N, K, KC, code, _nz_index(r, col, (M + 15) // 16), c0,
                     acc)
    ref = a_ref @ b_ref
    _check(c, ref, dtype, K)
    if then == "accumulate":
        want = 2 * ref
    elif then == "scalar":
        want = ref.copy()
        want[r, col] *= 2
    elif then == "partial overwrite":
        want = _first_fractals_replaced(ref, a_ref[:16] @ b_ref)
    else:
        want = np.maximum(ref, 0)
    _check(c2, want, dtype, K)
    if then == "partial overwrite":           # column block 0 changed; the rest of C is left
        assert not np.allclose(want[:, :16], ref[:, :16]) and np.array_equal(want[:, 16:], ref[:, 16:])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_accumulation_longer_than_the_panels(dtype, rng):
    """A K loop whose operands overflow the cube scratch: the product is carried out in parts."""
    c0, acc = CASES[dtype]
    M, N = 20, 256
    KC = 64 if dtype == "float32" else 256                       # a full 64 KiB L0B per chunk
    platform = default_platform()
    panels = cube_scratch_bytes(platform) - platform.l0c_size
    panel_columns = panels // 2 // (N * (4 if dtype == "float32" else 1))
    K = 2 * panel_columns + KC + 5
    a, b, a_ref, b_ref = _operands(dtype, M, N, K, rng)
    out_dtype = np.int32 if dtype == "int8" else np.float32
    c, c2 = np.zeros((M, N), out_dtype), np.zeros((M, N), out_dtype)
    gemm_touching_l0c[1](a, np.ascontiguousarray(b.T), c, c2, M, N, K, KC, -1, c0, acc)
    ref = a_ref @ b_ref
    _check(c, ref, dtype, K)
    _check(c2, ref, dtype, K)


@pytest.mark.parametrize("scratch", [False, True], ids=["at-once", "deferred"])
def test_hf32_rounding_on_both_paths(scratch, rng):
    """HF32 input rounding applies whether the product runs at once or when L0C is settled."""
    platform = default_platform()
    st, lm = new_core_state(CoreSpec(AIC_CORE, 0, 1), platform, cube_scratch_bytes(platform) if scratch else 0)
    a = (1 + rng.random((16, 8))).astype(np.float32)
    b = (1 + rng.random((8, 16))).astype(np.float32)
    l0a, l0b, l0c = (int(st[S.SEG_BASE + h]) for h in (Hardware.L0A, Hardware.L0B, Hardware.L0C))
    lm[l0a:l0a + 512] = a.view(np.uint8).ravel()
    lm[l0b:l0b + 512] = b.T.copy().view(np.uint8).ravel()
    mm_isa.set_hf32_mode(st, True, 0)
    mm_isa.mmad(st, lm, l0c, 256, l0a, 128, l0b, 128, 0, 0, 0, 16, 16, 8, 0, False, True, mm_isa.IN_F32, 0)
    assert (st[S.PEND_MODE] != 0) == scratch
    mm_isa.settle_l0c(st, lm, 0)
    got = lm[l0c:l0c + 1024].view(np.float32).reshape(16, 16)
    ra, rb = (hf32_ref(x, False).astype(np.float64) for x in (a, b))
    np.testing.assert_allclose(got, ra @ rb, rtol=2e-7)
    assert np.abs(got - a.astype(np.float64) @ b.astype(np.float64)).max() > 1e-5
