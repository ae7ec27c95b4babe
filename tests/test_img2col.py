"""Load3Dv2 (img2col): load_data with LoadData3DParamsV2, set_load_data_padding_value / boundary / repeat.

The instruction-level tests call the compiled instruction on a fresh AIC core and compare L0A with a NumPy
image-to-column reference written here from the documented layouts; the kernel test is a convolution (img2col
+ mmad) against a NumPy convolution; the broken kernels check every refused form and range.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import img2col as ic
from npuemu.isa import state as S
from npuemu.isa.fault import Fault
from npuemu.language.enums import Hardware
from npuemu.platform import default_platform
from npuemu.runtime.cores import AIC, CoreSpec, new_core_state

AIC_K = asc.KernelType.AIC_ONLY


def im2col(fmap, pads, stride, filt, dil, pad_value, rows=None):
    """(C1, H, W, C0) -> (rows, C1 * fh * fw * C0), columns ordered (c1, kh, kw, c0); row m is output position
    (m // Wo, m % Wo), also past Ho * Wo (the window keeps moving down; rows = Ho * Wo by default)."""
    c1n, h, w, c0 = fmap.shape
    pl, pr, pt, pb = pads
    sw, sh = stride
    fw, fh = filt
    dw, dh = dil
    wo = (w + pl + pr - dw * (fw - 1) - 1) // sw + 1
    ho = (h + pt + pb - dh * (fh - 1) - 1) // sh + 1
    rows = ho * wo if rows is None else rows
    out = np.full((rows, c1n, fh, fw, c0), pad_value, fmap.dtype)
    for m in range(rows):
        oh, ow = divmod(m, wo)
        for kh in range(fh):
            for kw in range(fw):
                ih, iw = oh * sh - pt + kh * dh, ow * sw - pl + kw * dw
                if 0 <= ih < h and 0 <= iw < w:
                    out[m, :, kh, kw] = fmap[:, ih, iw]
    return out.reshape(rows, -1)


def zz(block, c0):
    """(M, K) -> ZZ fractals: (M / 16) x (K / C0) fractals of 16 x C0, row-major."""
    m, k = block.shape
    return block.reshape(m // 16, 16, k // c0, c0).transpose(0, 2, 1, 3).ravel()


def _core():
    st, lm = new_core_state(CoreSpec(AIC, 0, 1), default_platform())
    return st, lm, int(st[S.SEG_BASE + Hardware.L1]), int(st[S.SEG_BASE + Hardware.L0A])


def _load(st, lm, dst, src, fmap_len, pads, hw, ch, k_ext, m_ext, k_start, m_start, stride, filt, dil, es=2,
          kind=ic.K_F16, dst_len=1 << 14):
    ic.load3d_v2(st, lm, dst, dst_len, src, fmap_len, *pads, *hw, ch, k_ext, m_ext, k_start, m_start, *stride,
                 *filt, *dil, kind, es, 0)


def test_load3d_block_with_strides_dilation_and_padding_value(rng):
    st, lm, l1, l0a = _core()
    fmap = rng.standard_normal((2, 5, 6, 16)).astype(np.float16)      # 32 channels, 5 x 6
    lm[l1:l1 + fmap.nbytes] = fmap.view(np.uint8).ravel()
    pads, stride, filt, dil = (1, 2, 1, 0), (1, 2), (3, 2), (2, 1)
    ic.set_padding(st, int(np.float32(3.5).view(np.uint32)), True, 0)
    # the block of rows 16..47 and columns 32..127 of the 32 x 192 matrix
    _load(st, lm, l0a, l1, fmap.size, pads, (5, 6), 32, 96, 32, 32, 16, stride, filt, dil)
    want = im2col(fmap, pads, stride, filt, dil, np.float16(3.5), rows=48)    # Ho * Wo = 15
    got = lm[l0a:l0a + 32 * 96 * 2].view(np.float16)
    np.testing.assert_array_equal(got, zz(want[16:48, 32:128], 16))


def test_load3d_int8_float32_and_repeat(rng):
    st, lm, l1, l0a = _core()
    for dtype, kind in ((np.int8, ic.K_INT), (np.float32, ic.K_F32)):
        c0 = 32 // np.dtype(dtype).itemsize
        fmap = (rng.standard_normal((1, 4, 4, c0)) * 50).astype(dtype)
        lm[l1:l1 + fmap.nbytes] = fmap.view(np.uint8).ravel()
        ic.set_padding(st, 7, False, 0)
        ic.set_repeat(st, 2, 1, 0, 0)          # two windows 16 rows apart, blocks one after the other
        _load(st, lm, l0a, l1, fmap.size, (1, 1, 1, 1), (4, 4), c0, 9 * c0, 16, 0, 0, (1, 1), (3, 3), (1, 1),
              es=np.dtype(dtype).itemsize, kind=kind)
        rows = im2col(fmap, (1, 1, 1, 1), (1, 1), (3, 3), (1, 1), dtype(7), rows=32)
        got = lm[l0a:l0a + rows.nbytes].view(dtype)
        np.testing.assert_array_equal(got, np.concatenate([zz(rows[:16], c0), zz(rows[16:], c0)]))
        ic.set_repeat(st, 1, 0, 0, 0)


def test_load3d_boundary_wraps_reads_to_the_start_of_l1(rng):
    st, lm, l1, l0a = _core()
    fmap = rng.standard_normal((1, 4, 4, 16)).astype(np.float16)     # 512 bytes
    lm[l1 + 768:l1 + 1024] = fmap.view(np.uint8).ravel()[:256]       # rows 0-1 before the boundary
    lm[l1:l1 + 256] = fmap.view(np.uint8).ravel()[256:]              # rows 2-3 wrapped to the start
    ic.set_boundary(st, 1024, 0)
    _load(st, lm, l0a, l1 + 768, 1 << 12, (0, 0, 0, 0), (4, 4), 16, 16, 16, 0, 0, (1, 1), (1, 1), (1, 1))
    got = lm[l0a:l0a + 512].view(np.float16)
    np.testing.assert_array_equal(got, zz(fmap.reshape(16, 16), 16))
    with pytest.raises(Fault) as info:                               # the start lies past the boundary
        _load(st, lm, l0a, l1 + 1024, 1 << 12, (0, 0, 0, 0), (4, 4), 16, 16, 16, 0, 0, (1, 1), (1, 1), (1, 1))
    assert info.value.args[0] == ic.F_BOUNDARY_START
    with pytest.raises(Fault):                                       # below the documented minimum of 1024
        ic.set_boundary(st, 512, 0)


# ---------------------------------------------------------------------------- convolution in a kernel


@asc.jit(kernel_type=AIC_K)
def conv_kernel(x: asc.GlobalAddress, wt: asc.GlobalAddress, y: asc.GlobalAddress, pv: float, ch: int, m_ext: int,
                boundary: int, rmode: int):
    """y (16 x 16 float) = img2col(x: 16 channels, 4 x 4, 3 x 3 window, stride 1, pad 1) @ W."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    wg = asc.GlobalTensor()
    wg.set_global_buffer(wt)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 65536, 144 * 16)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 16 * 144)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 144 * 16)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
    asc.data_copy(a1, xg, asc.DataCopyParams(1, 16, 0, 0))                  # C1HWC0: 16 pixels of 32 bytes
    asc.data_copy(b1, wg, asc.Nd2NzParams(1, 16, 144, 0, 144, 16, 1, 0))    # W^T (16 x 144) -> NZ
    asc.set_load_data_boundary(boundary)
    asc.set_load_data_repeat(asc.LoadDataRepeatParam(1, 0, rmode))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData3DParamsV2((1, 1, 1, 1), 4, 4, ch, 144, m_ext, 0, 0, 1, 1, 3, 3, 1, 1,
                                                 False, pv))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, 9, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 144))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(yg, c1, asc.FixpipeParamsV220(16, 16, 16, 16))


def _conv(rng, pv=0.0, ch=16, m_ext=16, boundary=0, rmode=0, **launch):
    x = rng.standard_normal((16, 4, 4)).astype(np.float16)          # C, H, W
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float16)      # Cout, C, kh, kw
    wt = w.transpose(0, 2, 3, 1).reshape(16, 144)                   # columns (kh, kw, c): C1 = 1
    y = np.zeros((16, 16), np.float32)
    conv_kernel[1](np.ascontiguousarray(x.transpose(1, 2, 0)), np.ascontiguousarray(wt), y, pv, ch, m_ext,
                   boundary, rmode, **launch)
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1)), constant_values=np.float64(np.float16(pv)))
    ref = np.zeros((16, 16))
    for oh in range(4):
        for ow in range(4):
            ref[oh * 4 + ow] = np.einsum("chw,ochw->o", xp[:, oh:oh + 3, ow:ow + 3], w.astype(np.float64))
    return y, ref


@pytest.mark.parametrize("pv, boundary, debug", [(0.0, 0, False), (1.5, 4096, False), (1.5, 0, True)])
def test_convolution_by_img2col_and_mmad(pv, boundary, debug, rng):
    y, ref = _conv(rng, pv=pv, boundary=boundary, check="full", debug=debug)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * 12 * np.abs(ref).max())


@pytest.mark.parametrize("kw, error, match", [
    (dict(ch=8), errors.ParamRangeError, r"channel_size = 8 must be a multiple of 16"),
    (dict(m_ext=24), errors.ParamRangeError, r"m_extension = 24 must be a multiple of 16"),
    (dict(m_ext=32), errors.BoundsError, r"reaches byte 9216 of the destination tensor, which holds only 4608"),
    (dict(boundary=512), errors.ParamRangeError, r"boundary = 512 is outside its range \[1024,"),
    (dict(rmode=2), errors.ParamRangeError, r"repeat_mode = 2 is outside its range \[0, 1\]"),
])
def test_load3d_runtime_checks(kw, error, match, rng):
    with pytest.raises(error, match=match):
        _conv(rng, **kw)


# ---------------------------------------------------------------------------- compile-time refusals


def _bad(which: asc.ConstExpr[int]):
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    b1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 0, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    if which == 0:
        asc.load_data(a2, a1, asc.LoadData3DParamsV1((0, 0, 0, 0), 4, 4))
    elif which == 1:
        asc.load_data(a2, a1, asc.LoadData3DParamsV2Pro(16))
    elif which == 2:
        asc.load_data(b2, b1, asc.LoadData3DParamsV2((0, 0, 0, 0), 4, 4, 16, 16, 16))
    elif which == 3:
        asc.load_data(a2, a1, asc.LoadData3DParamsV2((0, 0, 0, 0), 4, 4, 16, 16, 16, en_transpose=True))
    elif which == 4:
        asc.load_data(a2, a1, asc.LoadData3DParamsV2((0, 0, 0), 4, 4, 16, 16, 16))
    else:
        asc.set_load_data_padding_value(2.0)
        asc.set_load_data_padding_value(3)
        asc.load_data(a2, a1, asc.LoadData3DParamsV2((0, 0, 0, 0), 4, 4, 16, 16, 16))


@pytest.mark.parametrize("which, match", [
    (0, r"LoadData3DParamsV1 \(Load3Dv1\) is not available on .*Atlas A2/A3"),
    (1, r"LoadData3DParamsV2Pro is not emulated: the bit layout"),
    (2, r"A1 -> A2 path only \(got B1 -> B2\)"),
    (3, r"en_transpose = True is not emulated"),
    (4, r"pad_list must be four ints"),
])
def test_load3d_refused_forms(which, match):
    with pytest.raises(errors.KernelTypeError, match=match):
        asc.jit(kernel_type=AIC_K)(_bad)[1](which)


def test_load3d_plain_form_is_accepted():
    asc.jit(kernel_type=AIC_K)(_bad)[1](5, debug=True)
