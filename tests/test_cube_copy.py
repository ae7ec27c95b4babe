"""Cube-side data_copy forms: Nz2NdParamsFull (UB NZ -> GM ND), DataCopyCO12DstParams (L0C -> GM through the
fixpipe) and DataCopyEnhancedParams (default modes only), with their errors.

References are NumPy models of the documented layouts: NZ with 16-element columns for Nz2NdParamsFull, the
fixpipe conversions for DataCopyCO12DstParams.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import cube_common as cc
from npuemu.isa import cube_move as cm
from npuemu.isa import state as S
from npuemu.isa.fault import Fault
from npuemu.language.enums import Hardware
from npuemu.platform import default_platform
from npuemu.runtime.cores import AIV, CoreSpec, new_core_state

AIC = asc.KernelType.AIC_ONLY
Q = asc.QuantModes


def to_nz16(x: np.ndarray, nstride: int) -> np.ndarray:
    """(R, C) -> flat NZ with 16-element columns ``nstride`` rows of 16 apart (C a multiple of 16)."""
    r, c = x.shape
    out = np.zeros(((c // 16 - 1) * nstride + r) * 16, x.dtype)
    for j in range(c // 16):
        for i in range(r):
            at = (j * nstride + i) * 16
            out[at:at + 16] = x[i, j * 16:(j + 1) * 16]
    return out


# ---------------------------------------------------------------------------- Nz2NdParamsFull, instruction


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
def test_nz2nd_two_matrices_with_strides(dtype, rng):
    st, lm = new_core_state(CoreSpec(AIV, 0, 1), default_platform())
    ub = int(st[S.SEG_BASE + Hardware.UB])
    n, d, nstride = 5, 32, 7                    # 5 x 32 matrices; columns 7 rows apart in UB
    mats = (rng.standard_normal((2, n, d)) * 100).astype(dtype)
    src = np.full(2 * 256 * 2, 0, dtype)        # matrices 2 * 256 elements apart (src_nd_matrix_stride 2)
    for i in range(2):
        z = to_nz16(mats[i], nstride)
        src[i * 512:i * 512 + z.size] = z
    lm[ub:ub + src.nbytes] = src.view(np.uint8)
    dst_stride, dst_mstride = 40, 6 * 40        # rows 40 elements apart, matrices 6 rows apart
    g = np.full(2 * 6 * 40, -1, dtype)
    gb = g.view(np.uint8)
    cm.nz2nd(st, lm, gb, 0, 0, -1, ub, src.size, 2, n, d, 2, nstride, dst_stride, dst_mstride, g.itemsize, -1, 0)
    got = g.reshape(2, 6, 40)
    for i in range(2):
        np.testing.assert_array_equal(got[i, :n, :d], mats[i])
        assert (got[i, :n, d:] == -1).all() and (got[i, n:] == -1).all()   # nothing else written


def test_nz2nd_rejects_d_value_and_stride_out_of_range():
    st, lm = new_core_state(CoreSpec(AIV, 0, 1), default_platform())
    ub = int(st[S.SEG_BASE + Hardware.UB])
    g = np.zeros(4096, np.uint8)
    with pytest.raises(Fault) as info:
        cm.nz2nd(st, lm, g, 0, 0, -1, ub, 1024, 1, 4, 24, 1, 4, 24, 100, 2, -1, 0)
    assert info.value.args[0] == cm.F_NZ2ND_D
    with pytest.raises(Fault) as info:          # src_nd_matrix_stride is documented in [1, 512]
        cm.nz2nd(st, lm, g, 0, 0, -1, ub, 1024, 1, 4, 16, 0, 4, 16, 100, 2, -1, 0)
    assert info.value.args[0] == cc.F_PARAM and info.value.args[4] == 3


# ---------------------------------------------------------------------------- Nz2NdParamsFull + enhanced, kernel


@asc.jit
def nz2nd_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, size: int, nd: int, n: int, d: int, sms: int,
                 sns: int, dds: int, dms: int, atomic: int = 0):
    """GM -> UB with DataCopyEnhancedParams (default modes), then UB (NZ) -> GM (ND), atomically adding when
    ``atomic``."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, size * 2)
    t = buf.get(asc.float16)
    asc.data_copy(t, xg, asc.DataCopyParams(1, size // 16, 0, 0), asc.DataCopyEnhancedParams())
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if atomic:
        asc.set_atomic_add(asc.float16)
    asc.data_copy(yg, t, asc.Nz2NdParamsFull(nd, n, d, sms, sns, dds, dms))
    asc.set_atomic_none()


def test_nz2nd_and_enhanced_copy_in_a_kernel(rng):
    x = rng.standard_normal((20, 48)).astype(np.float16)
    z = to_nz16(x, 32)                          # columns 32 rows apart (rows 20..31 padding)
    src = np.zeros(1536, np.float16)
    src[:z.size] = z
    for debug in (False, True):
        y = np.zeros((20, 48), np.float16)
        nz2nd_kernel[1](src, y, 1536, 1, 20, 48, 1, 32, 48, 1, check="full", debug=debug)
        np.testing.assert_array_equal(y, x)
    y = np.ones((20, 48), np.float16)          # with the atomic mode on, MTE3 adds to what GM holds
    nz2nd_kernel[1](src, y, 1536, 1, 20, 48, 1, 32, 48, 1, 1)
    np.testing.assert_array_equal(y, (x.astype(np.float32) + 1).astype(np.float16))
    with pytest.raises(errors.ParamRangeError, match=r"d_value = 40 must be a multiple of 16"):
        nz2nd_kernel[1](src, y, 1536, 1, 20, 40, 1, 32, 48, 1)
    with pytest.raises(errors.ParamRangeError, match=r"dst_d_stride = 0 is outside its range \[1, 65535\]"):
        nz2nd_kernel[1](src, y, 1536, 1, 20, 48, 1, 32, 0, 1)
    with pytest.raises(errors.BoundsError):     # 21 rows of 48 do not fit the 20 x 48 GM output
        nz2nd_kernel[1](src, y, 1536, 1, 21, 48, 1, 32, 48, 1)


# ---------------------------------------------------------------------------- DataCopyCO12DstParams


@asc.jit(kernel_type=AIC)
def co12_kernel(a: asc.GlobalAddress, bt: asc.GlobalAddress, out: asc.GlobalAddress, M: int, N: int,
                dst_stride: int, word: int, q: asc.ConstExpr, relu: int, nd: int):
    """L0C = A @ I (float32, exact), then data_copy(out, L0C, DataCopyCO12DstParams(...)); relu_pre and nz2nd_en
    are run-time values (checked and chosen at run time)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    og = asc.GlobalTensor()
    og.set_global_buffer(out)
    m1 = (M + 15) // 16
    n1 = (N + 15) // 16
    k1 = (N + 7) // 8
    a1 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, m1 * 16 * k1 * 8)
    b1 = asc.LocalTensor(asc.float32, asc.TPosition.B1, 131072, n1 * 16 * k1 * 8)
    a2 = asc.LocalTensor(asc.float32, asc.TPosition.A2, 0, m1 * 16 * k1 * 8)
    b2 = asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, n1 * 16 * k1 * 8)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, m1 * n1 * 256)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, M, N, 0, N, m1 * 16, 1, 0))
    asc.data_copy(b1, bg, asc.Nd2NzParams(1, N, N, 0, N, n1 * 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * k1 * 128:], a1[i * 128:], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(M, N, N))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.set_fix_pipe_pre_quant_flag(word)
    asc.data_copy(og, c1, asc.DataCopyCO12DstParams(N, M, dst_stride, m1 * 16, q, relu, False, nd))


def _word(scale: float, offset: int = 0) -> int:
    return int(np.float32(scale).view(np.uint32)) | ((offset & 0x1FF) << 37)


def test_co12_nd_f16_with_relu(rng):
    M, N = 20, 32
    a = (rng.standard_normal((M, N)) * 300).astype(np.float32)
    for debug in (False, True):
        out = np.full((M, 40), 7, np.float16)
        co12_kernel[1](a, np.eye(N, dtype=np.float32), out, M, N, 40, 0, Q.F322F16, 1, True, check="full",
                       debug=debug)
        np.testing.assert_array_equal(out[:, :N], np.maximum(a, 0).astype(np.float16))
        assert (out[:, N:] == 7).all()


def test_co12_nz_output_and_scalar_quantisation_register(rng):
    M, N = 20, 32
    a = (rng.standard_normal((M, N)) * 300).astype(np.float32)
    out = np.zeros((2, 64, 16), np.float32)     # NZ: fractal columns 64 rows (of 16 x 4 bytes = 2 blocks) apart
    co12_kernel[1](a, np.eye(N, dtype=np.float32), out, M, N, 128, 0, Q.NoQuant, 0, False)
    for j in range(2):
        np.testing.assert_array_equal(out[j, :M], a[:, j * 16:(j + 1) * 16])
    with pytest.raises(errors.ParamRangeError, match=r"DataCopyCO12DstParams\.relu_pre = 2 is not emulated"):
        co12_kernel[1](a, np.eye(N, dtype=np.float32), out, M, N, 128, 0, Q.NoQuant, 2, False)
    q8 = np.zeros((M, N), np.int8)
    word = _word(0.25, -3)
    co12_kernel[1](a, np.eye(N, dtype=np.float32), q8, M, N, N, word, Q.QF322B8_PRE, 0, True)
    scale = (np.float32(0.25).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    want = np.clip(np.rint((a * scale + np.float32(-3)).astype(np.float64)), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(q8, want)


# ---------------------------------------------------------------------------- compile-time refusals


def _compile_error(fn, *args, match, kernel_type=AIC):
    k = asc.jit(kernel_type=kernel_type)(fn)
    with pytest.raises(errors.KernelTypeError, match=match) as info:
        k[1](*args)
    assert "test_cube_copy.py" in str(info.value)


def test_co12_into_ub_names_the_platform():
    def bad(c: asc.GlobalAddress):
        c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        ub = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 0, 256)
        asc.data_copy(ub, c1, asc.DataCopyCO12DstParams(16, 16, 16, 16))
    _compile_error(bad, np.zeros(4, np.float32), match=r"Atlas A2/A3\) L0C data goes to GM or L1 .* no L0C -> UB")


def _co12_bad(c: asc.GlobalAddress, which: asc.ConstExpr[int]):
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    if which == 0:
        asc.data_copy(cg, c1, asc.DataCopyCO12DstParams(16, 16, 16, 16, channel_split=True))
    elif which == 1:
        asc.data_copy(cg, c1, asc.DataCopyCO12DstParams(16, 16, 16, 16, relu_pre=2))
    else:
        asc.data_copy(cg, c1, asc.DataCopyCO12DstParams(16, 16, 16, 16, eltwise_op=1))


@pytest.mark.parametrize("which, field", [(0, "channel_split"), (1, "relu_pre"), (2, "eltwise_op")])
def test_co12_unknown_modes_are_refused(which, field):
    _compile_error(_co12_bad, np.zeros(256, np.float32), which,
                   match=rf"DataCopyCO12DstParams\.{field} = .* not emulated")


def test_co12_correct_call_is_not_refused():
    def good(c: asc.GlobalAddress):
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.data_copy(cg, c1, asc.DataCopyCO12DstParams(16, 16, 16, 16, relu_pre=1, nz2nd_en=True))
    asc.jit(kernel_type=AIC)(good)[1](np.zeros(256, np.float32), debug=True)


def test_nz2nd_from_l1_names_the_platform():
    def bad(c: asc.GlobalAddress):
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
        asc.data_copy(cg, a1, asc.Nz2NdParamsFull(1, 16, 16, 1, 16, 16, 1))
    _compile_error(bad, np.zeros(256, np.float16), match=r"source is in A1; on .*Atlas A2/A3\) the NZ -> ND copy "
                                                       r"reads UB")


def test_enhanced_non_default_mode_is_refused():
    def bad(c: asc.GlobalAddress):
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        ub = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
        asc.data_copy(ub, cg, asc.DataCopyParams(1, 8, 0, 0),
                      asc.DataCopyEnhancedParams(asc.BlockMode.BLOCK_MODE_MATRIX))
    _compile_error(bad, np.zeros(256, np.float16), match=r"DataCopyEnhancedParams\.block_mode = .* not emulated",
                   kernel_type=asc.KernelType.AIV_ONLY)


def _held(c: asc.GlobalAddress, q: int, block_mode: int):
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    l1 = asc.LocalTensor(asc.float32, asc.TPosition.C1, 0, 256)
    p = asc.DataCopyCO12DstParams(16, 16, 16, 16, q, 1, False, True)     # fields held in a variable: run time
    asc.data_copy(cg, c1, p)
    e = asc.DataCopyEnhancedParams(block_mode)
    asc.data_copy(l1, cg, asc.DataCopyParams(1, 8, 0, 0), e)


@pytest.mark.parametrize("q, block_mode, match", [
    (0, 0, None),
    (int(Q.VDEQF16), 0, r"DataCopyCO12DstParams\.quant_pre \(a vector mode\) = 4 is not emulated"),
    (0, 1, r"DataCopyEnhancedParams\.block_mode = 1 is not emulated"),
])
def test_params_held_in_variables_are_checked_at_run_time(q, block_mode, match):
    k = asc.jit(kernel_type=AIC)(_held)
    if match is None:
        k[1](np.zeros(256, np.float32), q, block_mode, debug=True)
        return
    with pytest.raises(errors.ParamRangeError, match=match):
        k[1](np.zeros(256, np.float32), q, block_mode, debug=True)
