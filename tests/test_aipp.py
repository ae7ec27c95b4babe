"""AIPP (set_aipp_functions + load_image_to_local) against a NumPy model of the documented steps."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu import errors

ROWS, COLS = 4, 8                                   # the source images: 4 rows of 8 pixels
F = asc.AippInputFormat
BT601 = dict(csc_matrix_r0_c0=77, csc_matrix_r0_c1=150, csc_matrix_r0_c2=29, csc_matrix_r1_c0=-43,
             csc_matrix_r1_c1=-85, csc_matrix_r1_c2=128, csc_matrix_r2_c0=128, csc_matrix_r2_c1=-107,
             csc_matrix_r2_c2=-21, csc_bias_out_0=0, csc_bias_out_1=128, csc_bias_out_2=128)
JPEG = dict(csc_matrix_r0_c0=256, csc_matrix_r0_c1=0, csc_matrix_r0_c2=359, csc_matrix_r1_c0=256,
            csc_matrix_r1_c1=-88, csc_matrix_r1_c2=-183, csc_matrix_r2_c0=256, csc_matrix_r2_c1=454,
            csc_matrix_r2_c2=0, csc_bias_in_0=0, csc_bias_in_1=128, csc_bias_in_2=128)
CONFIGS = [
    # 0: RGB888 -> float16: R/B swap, RGB -> YUV, mean/min/var, constant left/right padding, 16 channels
    (F.RGB888_U8, asc.AippParams(
        asc.float16, padding_params=asc.AippPaddingParams(0, 1.5, -2.0, 3.0, 4.0),
        swap_params=asc.AippSwapParams(is_swap_rb=True),
        dtc_params=asc.AippDataTypeConvParams(10, 20, 30, 0.5, 1.0, -2.0, 0.0039, 0.5, 2.0),
        c_padding_params=asc.AippChannelPaddingParams(0, 7.0),
        csc_params=asc.AippColorSpaceConvParams(True, **BT601))),
    # 1: XRGB8888 -> int8: X first (shifted out), nearest-pixel padding on all sides, 4 channels
    (F.XRGB8888_U8, asc.AippParams(
        asc.int8, padding_params=asc.AippPaddingParams(1), swap_params=asc.AippSwapParams(is_swap_ax=True),
        dtc_params=asc.AippDataTypeConvParams(100, 0, 50), c_padding_params=asc.AippChannelPaddingParams(1, -5))),
    # 2: YUV420SP -> int8: U/V swap, YUV -> RGB (JPEG), saturating mean, 32 channels
    (F.YUV420SP_U8, asc.AippParams(
        asc.int8, swap_params=asc.AippSwapParams(is_swap_uv=True), dtc_params=asc.AippDataTypeConvParams(60, 0, 200),
        c_padding_params=asc.AippChannelPaddingParams(0, 3), csc_params=asc.AippColorSpaceConvParams(True, **JPEG))),
    # 3: RGB888 -> float16, one line only (vert_size ignored), padding mode 2 (refused when padded)
    (F.RGB888_U8, asc.AippParams(asc.float16, padding_params=asc.AippPaddingParams(2),
                                 single_line_params=asc.AippSingleLineParams(True))),
    # 4: YUV400 -> float16: one channel normalised, nearest-pixel padding, the rest channel padding
    (F.YUV400_U8, asc.AippParams(asc.float16, padding_params=asc.AippPaddingParams(1),
                                 dtc_params=asc.AippDataTypeConvParams(16, dtc_min_ch0=-0.25, dtc_var_ch0=1 / 219),
                                 c_padding_params=asc.AippChannelPaddingParams(0, -1.0))),
]


@asc.jit
def aipp_run(img: asc.GlobalAddress, out: asc.GlobalAddress, which: asc.ConstExpr[int], do_set: asc.ConstExpr[bool],
             hstart: int, hsize: int, vstart: int, vsize: int, srcw: int, top: int, bot: int, left: int, right: int,
             n_out: int, uv_at: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(img, uv_at * 3 // 2 if CONFIGS[which][0] == asc.AippInputFormat.YUV420SP_U8 else uv_at)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, n_out)
    if do_set:
        if CONFIGS[which][0] == asc.AippInputFormat.YUV420SP_U8:
            asc.set_aipp_functions(g, g[uv_at:], CONFIGS[which][0], CONFIGS[which][1])
        else:
            asc.set_aipp_functions(g, CONFIGS[which][0], CONFIGS[which][1])
    a1 = asc.LocalTensor(out.dtype, asc.TPosition.A1, 0, n_out)
    asc.load_image_to_local(a1, asc.LoadImageToLocalParams(hsize, vsize, hstart, vstart, srcw, top, bot, left,
                                                             right))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_out):
        go.set_value(i, a1.get_value(i))


def f16(x):
    return np.float16(x)


def model(which, img, uv, hstart, hsize, vstart, vsize, top, bot, left, right):
    """The documented steps on NumPy arrays: crop, swap, csc, dtc, border and channel padding."""
    fmt, cfg = CONFIGS[which]
    sw, dtc, csc, pad, cp = cfg.swap_params, cfg.dtc_params, cfg.csc_params, cfg.padding_params, cfg.c_padding_params
    rows = 1 if cfg.single_line_params.is_single_line_copy else vsize
    ys, xs = np.arange(vstart, vstart + rows), np.arange(hstart, hstart + hsize)
    if fmt == F.RGB888_U8:
        px = img.reshape(ROWS, COLS, 3)[np.ix_(ys, xs)].astype(np.int64)
    elif fmt == F.XRGB8888_U8:
        px = img.reshape(ROWS, COLS, 4)[np.ix_(ys, xs)].astype(np.int64)
        px = px[..., 1:4] if sw.is_swap_ax else px[..., 0:3]
    elif fmt == F.YUV400_U8:
        px = img.reshape(ROWS, COLS)[np.ix_(ys, xs)].astype(np.int64)[..., None]
    else:
        y = img.reshape(ROWS, COLS)[np.ix_(ys, xs)].astype(np.int64)
        uvp = uv.reshape(ROWS // 2, COLS // 2, 2)[np.ix_(ys // 2, xs // 2)].astype(np.int64)
        px = np.concatenate([y[..., None], uvp], axis=-1)
    if fmt == F.YUV420SP_U8 and sw.is_swap_uv:
        px = px[..., [0, 2, 1]]
    if fmt != F.YUV420SP_U8 and sw.is_swap_rb:
        px = px[..., [2, 1, 0]]
    if csc.is_enable_csc:
        m = np.array([[getattr(csc, f"csc_matrix_r{r}_c{c}") for c in range(3)] for r in range(3)])
        if fmt == F.YUV420SP_U8:
            bias = np.array([csc.csc_bias_in_0, csc.csc_bias_in_1, csc.csc_bias_in_2])
            px = np.floor_divide((px - bias) @ m.T, 256)
        else:
            bias = np.array([csc.csc_bias_out_0, csc.csc_bias_out_1, csc.csc_bias_out_2])
            px = np.floor_divide(px @ m.T, 256) + bias
        px = np.clip(px, 0, 255)
    nch = px.shape[-1]
    mean = np.array([dtc.dtc_mean_ch0, dtc.dtc_mean_ch1, dtc.dtc_mean_ch2])[:nch]
    if cfg.dtype is asc.float16:
        mn = np.array([dtc.dtc_min_ch0, dtc.dtc_min_ch1, dtc.dtc_min_ch2], np.float16)[:nch]
        var = np.array([dtc.dtc_var_ch0, dtc.dtc_var_ch1, dtc.dtc_var_ch2], np.float16)[:nch]
        out = ((px - mean).astype(np.float16) - mn) * var
        dtype, c0 = np.float16, 16
    else:
        out = np.clip(px - mean, -128, 127).astype(np.int8)
        dtype, c0 = np.int8, 32
    c0 = 4 if cp.c_padding_mode == 1 else c0
    full = np.full(out.shape[:2] + (c0,), cp.c_padding_value, dtype)
    full[..., :nch] = out
    if pad.padding_mode == 1:
        full = np.pad(full, ((top, bot), (left, right), (0, 0)), mode="edge")
    else:
        border = np.full(c0, cp.c_padding_value, dtype)
        border[:4] = [pad.padding_value_ch0, pad.padding_value_ch1, pad.padding_value_ch2, pad.padding_value_ch3]
        full = np.concatenate([np.tile(border, (rows, left, 1)), full, np.tile(border, (rows, right, 1))], axis=1)
    return full.reshape(-1)


def images(rng, which):
    fmt = CONFIGS[which][0]
    bpp = {F.RGB888_U8: 3, F.XRGB8888_U8: 4, F.YUV420SP_U8: 1, F.YUV400_U8: 1}[fmt]
    img = rng.integers(0, 256, ROWS * COLS * bpp).astype(np.uint8)
    uv = rng.integers(0, 256, ROWS * COLS // 2).astype(np.uint8) if fmt == F.YUV420SP_U8 else None
    return img, uv


def run(which, img, uv, hstart, hsize, vstart, vsize, top=0, bot=0, left=0, right=0, n_out=None, do_set=True,
        srcw=COLS, debug=False):
    fmt, cfg = CONFIGS[which]
    rows = 1 if cfg.single_line_params.is_single_line_copy else vsize
    c0 = 4 if cfg.c_padding_params.c_padding_mode == 1 else 32 // cfg.dtype.sizeof()
    n = (top + rows + bot) * (left + hsize + right) * c0 if n_out is None else n_out
    dtype = np.float16 if cfg.dtype is asc.float16 else np.int8
    out = np.zeros(n, dtype)
    data = img if uv is None else np.concatenate([img, uv])
    aipp_run[1](data, out, which, do_set, hstart, hsize, vstart, vsize, srcw, top, bot, left, right, n, img.size,
                kernel_type=asc.KernelType.AIC_ONLY, debug=debug)
    return out


CASES = [  # which, hstart, hsize, vstart, vsize, top, bot, left, right
    (0, 2, 4, 1, 2, 0, 0, 2, 1),
    (1, 4, 3, 0, 3, 1, 2, 1, 2),
    (2, 2, 4, 2, 2, 0, 0, 0, 0),
    (3, 0, 6, 3, 2, 0, 0, 0, 0),
    (4, 0, 8, 1, 3, 2, 1, 3, 0),
]


@pytest.mark.parametrize("case", CASES, ids=["rgb-csc-f16", "xrgb-edge-int8", "yuv420sp-csc-int8", "single-line",
                                             "yuv400-f16"])
def test_matches_the_documented_steps(case, rng):
    which, hstart, hsize, vstart, vsize, top, bot, left, right = case
    img, uv = images(rng, which)
    want = model(which, img, uv, hstart, hsize, vstart, vsize, top, bot, left, right)
    got = run(which, img, uv, hstart, hsize, vstart, vsize, top, bot, left, right)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    if which == 2:
        assert (got.reshape(-1, 32)[:, :3] == 127).any()        # the mean saturates some channels to int8


def test_debug_mode_agrees(rng):
    img, uv = images(rng, 0)
    a = run(0, img, uv, 2, 4, 1, 2, 0, 0, 2, 1)
    b = run(0, img, uv, 2, 4, 1, 2, 0, 0, 2, 1, debug=True)
    np.testing.assert_array_equal(a.view(np.uint16), b.view(np.uint16))


def test_broken_loads_are_caught(rng):
    img, uv = images(rng, 0)
    with pytest.raises(errors.NullPointerError, match="load_image_to_local before set_aipp_functions"):
        run(0, img, uv, 2, 4, 1, 2, do_set=False)
    with pytest.raises(npuemu.BoundsError, match=r"columns \[6, 10\) lie outside the source image's 8 columns"):
        run(0, img, uv, 6, 4, 1, 2)
    with pytest.raises(npuemu.BoundsError, match="below the image in GM"):
        run(0, img, uv, 2, 4, 3, 2)
    with pytest.raises(npuemu.BoundsError, match="dst holds 100 elements; the padded image needs 224"):
        run(0, img, uv, 2, 4, 1, 2, 0, 0, 2, 1, n_out=100)
    with pytest.raises(npuemu.ParamRangeError, match="horiz_start_pos = 1 must be even"):
        run(0, img, uv, 1, 4, 1, 2)
    with pytest.raises(npuemu.ParamRangeError, match="constant.*pads only left and right"):
        run(0, img, uv, 2, 4, 1, 2, top=1)
    with pytest.raises(npuemu.ParamRangeError, match="padding_mode 2 .block copy. is not modelled"):
        run(3, img, uv, 0, 6, 3, 2, left=1)
    with pytest.raises(npuemu.ParamRangeError, match="horiz_size = 1 is outside its documented range"):
        run(0, img, uv, 2, 1, 1, 2)
    with pytest.raises(npuemu.ParamRangeError, match="left_pad_size = 33 is outside"):
        run(0, img, uv, 2, 4, 1, 2, left=33)
    yimg, yuv = images(rng, 2)
    with pytest.raises(npuemu.ParamRangeError, match="vert_start_pos = 1 must be even for YUV420SP_U8"):
        run(2, yimg, yuv, 2, 4, 1, 2)
    with pytest.raises(npuemu.BoundsError, match="of src1"):
        run(2, yimg, yuv[:8], 2, 4, 2, 2)                # the UV plane ends before the crop's second UV row
    run(0, img, uv, 2, 4, 1, 2)                          # in range: not flagged


@asc.jit
def load_into_ub(img: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, asc.AippParams(asc.float16))
    t = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 1024)
    asc.load_image_to_local(t, asc.LoadImageToLocalParams(4, 2, 0, 0, 8))


@asc.jit
def yuv_without_uv(img: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    asc.set_aipp_functions(g, asc.AippInputFormat.YUV420SP_U8, asc.AippParams(asc.int8))


@asc.jit
def int8_dst_for_f16_config(img: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    cfg = asc.AippParams(asc.float16, csc_params=asc.AippColorSpaceConvParams(True, csc_matrix_r0_c0=77),
                         dtc_params=asc.AippDataTypeConvParams(dtc_mean_ch0=3, dtc_var_ch1=0.5))
    asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, cfg)
    t = asc.LocalTensor(asc.int8, asc.TPosition.A1, 0, 1024)
    asc.load_image_to_local(t, asc.LoadImageToLocalParams(4, 2, 0, 0, 8))


def test_wrong_calls_are_refused():
    img = np.zeros(ROWS * COLS * 3, np.uint8)
    with pytest.raises(npuemu.KernelTypeError, match="position VECIN; this instruction accepts A1, B1"):
        load_into_ub[1](img, kernel_type=asc.KernelType.AIC_ONLY)
    with pytest.raises(npuemu.KernelTypeError, match="YUV420SP_U8 needs src1"):
        yuv_without_uv[1](img, kernel_type=asc.KernelType.AIC_ONLY)
    with pytest.raises(npuemu.ParamRangeError, match="dst is int8 but the AIPP config .* converts to float16"):
        int8_dst_for_f16_config[1](img, kernel_type=asc.KernelType.AIC_ONLY)


@asc.jit
def aipp_inline(img: asc.GlobalAddress, out: asc.GlobalAddress, mean0: int, var2: float, n_out: int):
    """CONFIGS[0] built inside the kernel, two of its fields from run-time arguments."""
    g = asc.GlobalTensor()
    g.set_global_buffer(img, ROWS * COLS * 3)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, n_out)
    csc = asc.AippColorSpaceConvParams(True, 77, 150, 29, -43, -85, 128, 128, -107, -21, 0, 0, 0, 0, 128, 128)
    cfg = asc.AippParams(asc.float16, asc.AippPaddingParams(0, 1.5, -2.0, 3.0, 4.0), asc.AippSwapParams(True),
                         None, asc.AippDataTypeConvParams(mean0, 20, 30, 0.5, 1.0, -2.0, 0.0039, 0.5, var2),
                         asc.AippChannelPaddingParams(0, 7.0), csc)
    asc.set_aipp_functions(g, asc.AippInputFormat.RGB888_U8, cfg)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.B1, 0, n_out)
    asc.load_image_to_local(a1, asc.LoadImageToLocalParams(4, 2, 2, 1, 8, 0, 0, 2, 1))
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    for i in range(n_out):
        go.set_value(i, a1.get_value(i))


def test_a_config_built_in_the_kernel(rng):
    img, uv = images(rng, 0)
    want = model(0, img, uv, 2, 4, 1, 2, 0, 0, 2, 1)
    out = np.zeros(want.size, np.float16)
    aipp_inline[1](img, out, 10, 2.0, want.size, kernel_type=asc.KernelType.AIC_ONLY, check="full")
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


@asc.jit
def bad_set_xrgb(img: asc.GlobalAddress, off: int, bias: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    cfg = asc.AippParams(asc.int8, csc_params=asc.AippColorSpaceConvParams(True, csc_bias_out_1=bias))
    asc.set_aipp_functions(g[off:], asc.AippInputFormat.XRGB8888_U8, cfg)


@asc.jit
def bad_set_yuv400(img: asc.GlobalAddress, csc: bool):
    g = asc.GlobalTensor()
    g.set_global_buffer(img)
    cfg = asc.AippParams(asc.int8, csc_params=asc.AippColorSpaceConvParams(csc))
    asc.set_aipp_functions(g, asc.AippInputFormat.YUV400_U8, cfg)


def test_set_aipp_functions_checks_its_arguments():
    img = np.zeros(256, np.uint8)
    aic = dict(kernel_type=asc.KernelType.AIC_ONLY)
    with pytest.raises(npuemu.AlignmentError, match="src0 starts at GM byte 2, not a multiple of 4"):
        bad_set_xrgb[1](img, 2, 128, **aic)
    with pytest.raises(npuemu.ParamRangeError, match=r"a csc bias \(uint8\) = 300 is out of range"):
        bad_set_xrgb[1](img, 4, 300, **aic)
    bad_set_xrgb[1](img, 4, 128, **aic)
    with pytest.raises(npuemu.ParamRangeError, match="is_enable_csc for YUV400_U8"):
        bad_set_yuv400[1](img, True, **aic)
    bad_set_yuv400[1](img, False, **aic)
