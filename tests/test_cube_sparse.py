"""4:2 sparse matmul (load_data_with_sparse + mmad_with_sparse) against a NumPy product of the sparse matrices,
the documented index encoding written out here, and the refused forms (LoadData2dTransposeParamsV2 among them).
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import sparse as sp
from npuemu.isa import state as S
from npuemu.language.enums import Hardware
from npuemu.platform import default_platform
from npuemu.runtime.cores import AIC, CoreSpec, cube_scratch_bytes, new_core_state

AIC_K = asc.KernelType.AIC_ONLY


def sparse_b(rng, k, n):
    """A K x N int8 matrix with at most 2 non-zeros in every group of 4 along K (every pattern occurs)."""
    b = np.zeros((k, n), np.int8)
    for g in range(k // 4):
        for j in range(n):
            keep = rng.choice(4, size=rng.integers(0, 3), replace=False)
            b[4 * g + keep, j] = rng.integers(-100, 101, keep.size)
    return b


def densify(b):
    """The documented 4:2 densification: (K/2 x N dense values, K/2 x N 2-bit indices).

    Two non-zeros at p0 < p1: values (B[p0], B[p1]), indices (p0, p1 - 1); one at p: (B[p], 0) with (p, 0),
    or (0, B[3]) with (0, 2) when p = 3; none: (0, 0) with (0, 0).
    """
    k, n = b.shape
    vals = np.zeros((k // 2, n), np.int8)
    codes = np.zeros((k // 2, n), np.uint8)
    for g in range(k // 4):
        for j in range(n):
            nz = [p for p in range(4) if b[4 * g + p, j] != 0]
            if len(nz) == 2:
                pick, code = nz, (nz[0], nz[1] - 1)
            elif nz == [3]:
                pick, code = [None, 3], (0, 2)
            elif nz:
                pick, code = [nz[0], None], (nz[0], 0)
            else:
                pick, code = [None, None], (0, 0)
            for t in range(2):
                vals[2 * g + t, j] = 0 if pick[t] is None else b[4 * g + pick[t], j]
                codes[2 * g + t, j] = code[t]
    return vals, codes


def pack_indices(codes):
    """Index bytes per 32 x 16 dense L0B fractal (k-block major, then n-block), 128 bytes each: the index of
    fractal element (k, n) at position n * 32 + k, four per byte, the first in the lowest bits."""
    kd, n = codes.shape
    out = []
    for kb in range(kd // 32):
        for nb in range(n // 16):
            frac = codes[kb * 32:(kb + 1) * 32, nb * 16:(nb + 1) * 16].T.ravel()      # (n, k) order
            q = frac.reshape(128, 4).astype(np.uint16)
            out.append((q[:, 0] | q[:, 1] << 2 | q[:, 2] << 4 | q[:, 3] << 6).astype(np.uint8))
    return np.concatenate(out)


def test_load_sparse_keeps_indices_with_the_destination_fractal(rng):
    plat = default_platform()
    st, lm = new_core_state(CoreSpec(AIC, 0, 1), plat, cube_scratch_bytes(plat))
    l1, l0b = int(st[S.SEG_BASE + Hardware.L1]), int(st[S.SEG_BASE + Hardware.L0B])
    fr = rng.integers(-128, 128, (6, 512), dtype=np.int8)
    ix = rng.integers(0, 256, (6, 128), dtype=np.uint8)
    lm[l1:l1 + fr.nbytes] = fr.view(np.uint8).ravel()
    lm[l1 + 4096:l1 + 4096 + ix.nbytes] = ix.ravel()
    # fractals 1, 3, 5 into L0B fractals 2, 4, 6 (the tensor starts at fractal 2; dst_gap 1)
    sp.load_sparse(st, lm, l0b + 1024, 4096, l1, 3072, l1 + 4096, 768, 1, 3, 2, 1, 0)
    kept = lm[-S.SPARSE_TABLE_BYTES:].reshape(-1, 128)         # the end of the AIC's cube scratch
    for r, (s_, d) in enumerate(zip((1, 3, 5), (2, 4, 6))):
        np.testing.assert_array_equal(lm[l0b + d * 512:l0b + (d + 1) * 512].view(np.int8), fr[s_])
        np.testing.assert_array_equal(kept[d], ix[s_])


@asc.jit(kernel_type=AIC_K)
def sparse_kernel(a: asc.GlobalAddress, bdt: asc.GlobalAddress, ix: asc.GlobalAddress, c: asc.GlobalAddress,
                  k: int, twice: int):
    """C (16 x 32 int32) = A (16 x 128 int8) x B (sparse 128 x 32, given densified), twice: accumulated again."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bdt)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(ix)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    a1 = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 16 * 128)
    b1 = asc.LocalTensor(asc.int8, asc.TPosition.B1, 65536, 64 * 32)
    i1 = asc.LocalTensor(asc.uint8, asc.TPosition.B1, 131072, 512)
    a2 = asc.LocalTensor(asc.int8, asc.TPosition.A2, 0, 16 * 128)
    b2 = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, 64 * 32)
    c1 = asc.LocalTensor(asc.int32, asc.TPosition.CO1, 0, 512)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, 16, 128, 0, 128, 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, 32, 64, 0, 64, 32, 1, 0))     # dense B^T (32 x 64) -> NZ
    asc.data_copy(i1, xg, asc.DataCopyParams(1, 16, 0, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, 4, 1, 0, 0, False, 0))
    asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, 4, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad_with_sparse(c1, a2, b2, asc.MmadParams(16, 32, k, False, 0, False, False, False))
    if twice:
        asc.mmad_with_sparse(c1, a2, b2, asc.MmadParams(16, 32, k, True, 0, False, False, False))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(32, 16, 16, 32))


def _case(rng):
    a = rng.integers(-128, 128, (16, 128), dtype=np.int8)
    b = sparse_b(rng, 128, 32)
    vals, codes = densify(b)
    return a, b, np.ascontiguousarray(vals.T), pack_indices(codes)


@pytest.mark.parametrize("twice, debug", [(0, False), (1, False), (1, True)])
def test_sparse_matmul_matches_the_sparse_product(twice, debug, rng):
    a, b, bdt, ix = _case(rng)
    c = np.zeros((16, 32), np.int32)
    sparse_kernel[1](a, bdt, ix, c, 128, twice, check="full", debug=debug)
    want = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(c, want * (1 + twice))


def test_sparse_index_3_and_k_not_a_multiple_of_4_are_reported(rng):
    a, b, bdt, ix = _case(rng)
    c = np.zeros((16, 32), np.int32)
    with pytest.raises(errors.ParamRangeError, match=r"mmad_with_sparse k = 126 must be a multiple of 4"):
        sparse_kernel[1](a, bdt, ix, c, 126, 0)
    bad = ix.copy()
    bad[5] |= 0b11 << 4                 # fractal 0, element 22: index 3
    with pytest.raises(errors.ParamRangeError, match=r"sparse index 3 \(L0B fractal 0, element 22\) is outside"):
        sparse_kernel[1](a, bdt, bad, c, 128, 0)


def _refused(which: asc.ConstExpr[int]):
    b1 = asc.LocalTensor(asc.int8, asc.TPosition.B1, 0, 512)
    i1 = asc.LocalTensor(asc.uint8, asc.TPosition.B1, 1024, 128)
    b2 = asc.LocalTensor(asc.int8, asc.TPosition.B2, 0, 512)
    a2h = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2h = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    b1h = asc.LocalTensor(asc.float16, asc.TPosition.B1, 0, 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    if which == 0:
        asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, 1, 0, 0, 0, True, 0))
    elif which == 1:
        asc.mmad_with_sparse(c1, a2h, b2h, asc.MmadParams(16, 16, 16))
    elif which == 2:
        asc.load_data_with_transpose(b2h, b1h, asc.LoadData2dTransposeParamsV2(0, 1, 0, 0, 0, 0, 0))
    else:
        asc.load_data_with_sparse(b2, b1, i1, asc.LoadData2DParams(0, 1, 0, 0, 0, False, 0))


@pytest.mark.parametrize("which, match", [
    (0, r"load_data_with_sparse does not transpose"),
    (1, r"mmad_with_sparse: dst must be int32 .* not float32"),
    (2, r"LoadData2dTransposeParamsV2 is not available on .*Atlas A2/A3\): .*950 series only"),
])
def test_refused_forms(which, match):
    with pytest.raises(errors.KernelTypeError, match=match):
        asc.jit(kernel_type=AIC_K)(_refused)[1](which)


def test_plain_sparse_load_is_accepted():
    asc.jit(kernel_type=AIC_K)(_refused)[1](3, debug=True)
