"""AIPP image preprocessing: ``set_aipp_functions`` and ``load_image_to_local`` (GM -> L1).

Sources: the Ascend C SetAippFunctions and LoadImageToLocal pages (A2/A3),
the colour-space formulas of the ACL/ATC AIPP documentation; everything not
pinned down there is marked *assumed*.

``set_aipp_functions`` stores the source image(s) (region id + 1, byte offset,
size), the format and the configuration in the core's AIPP registers
(``state.AIPP``); ``load_image_to_local`` fails with ``AippError`` naming the
call (a ``NullPointerError``) when they were never set.  A pixel of the crop goes through, in order:

1. read: RGB888 three bytes ``(c0, c1, c2)``; XRGB8888 four bytes, of which
   the first three are kept, or with ``is_swap_ax`` (X first, XRGB -> RGBX)
   the last three; YUV420SP ``Y`` from src0 and ``(U, V)`` from the
   interleaved src1 at row ``y // 2``, column ``x // 2 * 2``; YUV400 the one
   byte ``Y`` (one channel).
2. swap: ``is_swap_rb`` exchanges channels 0 and 2 of RGB888/XRGB8888,
   ``is_swap_uv`` channels 1 and 2 of YUV420SP (before the conversion,
   *assumed* from the order of the ATC AIPP pipeline).
3. colour space (``is_enable_csc``; refused for the one-channel YUV400), in integers:
   YUV420SP -> RGB: ``out_k = (sum_j M[k][j] * (in_j - bias_in_j)) >> 8``;
   RGB888/XRGB8888 -> YUV: ``out_k = ((sum_j M[k][j] * in_j) >> 8) +
   bias_out_k``.  ``>>`` is an arithmetic shift (floor), and the result is
   saturated to 0..255 (*assumed*: the documents give the formulas, not the
   rounding of a negative sum or the clamping).  The biases follow the
   ACL/ATC formulas (input bias subtracted for YUV -> RGB, output bias added
   for RGB -> YUV); the Ascend C parameter table labels them the other way
   round, which npuemu reads as a documentation slip (*assumed*).
4. data type (to the config's ``dtype`` U): int8 ``saturate(x - mean_k)``
   to -128..127; float16 ``(x - mean_k - min_k) * var_k`` with each step
   rounded to float16 (``x - mean_k`` is exact; *assumed* two roundings).
   ``dtc_round_mode`` is only configurable on Atlas 200I/500 A2 and is
   ignored here.
5. border padding around the crop (``top/bot/left/right_pad_size``): mode 0
   fills every channel ``k < 4`` of a border pixel with
   ``padding_value_ch{k}`` (left and right only: top/bottom padding in mode 0
   is a ``ParamRangeError``, as the page says it is unsupported); mode 1 repeats
   the nearest pixel of the crop's row or column (corners: the corner
   pixel).  Modes 2 and 3 (block and mirrored-block copies) are refused
   when there is a border to pad: the page describes them only by figure,
   which does not fix which block is copied.
6. channel padding: each pixel has C0 channels, 32 bytes (mode 0: 32 int8 or
   16 float16) or 4 (mode 1); channels past the image's are
   ``c_padding_value`` (also in border pixels, *assumed*).

dst (L1) receives ``H x W`` pixels row by row, ``H = top + rows + bot``,
``W = left + horiz_size + right``, each pixel's C0 channels contiguous
(``rows`` is ``vert_size``, or 1 with ``is_single_line_copy``).

Checks: the documented ranges (sizes 2..4095, starts 0..4095, pads 0..32,
``horiz_start_pos`` even, for YUV420SP ``vert_start_pos`` and
``src_horiz_size`` even), the crop inside the image's width, every row read
inside the GM tensors, GM alignment (YUV420SP 2 bytes, XRGB8888 4), dst
32-byte aligned and large enough, dst's dtype equal to the config's.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from ..numerics import half as H
from . import state as S
from .fault import Fault, register
from .linkage import instruction

YUV420SP, XRGB8888, RGB888, YUV400 = 0, 1, 4, 9
L1 = 2                  # Hardware.L1
FORMAT_NAMES = {YUV420SP: "YUV420SP_U8", XRGB8888: "XRGB8888_U8", RGB888: "RGB888_U8", YUV400: "YUV400_U8"}

# integer configuration fields, in this order (after them the float fields)
INT_FIELDS = ("padding_mode", "is_swap_rb", "is_swap_uv", "is_swap_ax", "is_single_line_copy",
              "dtc_mean_ch0", "dtc_mean_ch1", "dtc_mean_ch2", "dtc_round_mode", "c_padding_mode", "is_enable_csc",
              *(f"csc_matrix_r{r}_c{c}" for r in range(3) for c in range(3)),
              *(f"csc_bias_in_{i}" for i in range(3)), *(f"csc_bias_out_{i}" for i in range(3)))
FLOAT_FIELDS = ("padding_value_ch0", "padding_value_ch1", "padding_value_ch2", "padding_value_ch3",
                "dtc_min_ch0", "dtc_min_ch1", "dtc_min_ch2", "dtc_var_ch0", "dtc_var_ch1", "dtc_var_ch2",
                "c_padding_value")
N_INT, N_FLOAT = len(INT_FIELDS), len(FLOAT_FIELDS)
assert 8 + N_INT + N_FLOAT == S.AIPP_N
_I = {n: 8 + i for i, n in enumerate(INT_FIELDS)}
_F = {n: 8 + N_INT + i for i, n in enumerate(FLOAT_FIELDS)}
PAD_MODE, SWAP_RB, SWAP_UV, SWAP_AX, SINGLE = (_I[n] for n in INT_FIELDS[:5])
MEAN, CPAD_MODE, CSC = _I["dtc_mean_ch0"], _I["c_padding_mode"], _I["is_enable_csc"]
MATRIX, BIAS_IN, BIAS_OUT = _I["csc_matrix_r0_c0"], _I["csc_bias_in_0"], _I["csc_bias_out_0"]
PAD_VALUE, DTC_MIN, DTC_VAR, CPAD_VALUE = (_F["padding_value_ch0"], _F["dtc_min_ch0"], _F["dtc_var_ch0"],
                                           _F["c_padding_value"])

F_UNSET = 1850
F_DTYPE = 1851
F_RANGE = 1852
F_ODD = 1853
F_CROP = 1854
F_GM = 1855
F_GM_ALIGN = 1856
F_DST_SIZE = 1857
F_DST_ALIGN = 1858
F_PAD_MODE = 1859
F_CONFIG = 1860

_PARAMS = ("horiz_size", "vert_size", "horiz_start_pos", "vert_start_pos", "src_horiz_size", "top_pad_size",
           "bot_pad_size", "left_pad_size", "right_pad_size")
_CONFIG = ("padding_mode", "c_padding_mode", "a csc matrix entry (int16)", "a csc bias (uint8)",
           "a dtc mean (uint8)", "an int8 padding value",
           "is_enable_csc for YUV400_U8 (one channel, no colour space to convert)")


def _fmt(code: int) -> str:
    return FORMAT_NAMES.get(code, str(code))


register({
    F_UNSET: (errors.NullPointerError,
              lambda a, b, c, env: "load_image_to_local before set_aipp_functions: the AIPP registers hold no "
                                   "source image (call set_aipp_functions(src0[, src1], format, config) first)"),
    F_DTYPE: (errors.ParamRangeError,
              lambda a, b, c, env: f"load_image_to_local: dst is {('int8', 'float16')[a]} but the AIPP config of "
                                   f"set_aipp_functions converts to {('int8', 'float16')[b]}"),
    F_RANGE: (errors.ParamRangeError,
              lambda a, b, c, env: f"load_image_to_local: LoadImageToLocalParams.{_PARAMS[c]} = {a} is outside "
                                   f"its documented range (up to {b})"),
    F_ODD: (errors.ParamRangeError,
            lambda a, b, c, env: f"load_image_to_local: LoadImageToLocalParams.{_PARAMS[c]} = {a} must be even "
                                 f"for {_fmt(b)}"),
    F_CROP: (errors.BoundsError,
             lambda a, b, c, env: f"load_image_to_local: the crop's columns [{a}, {a + b}) lie outside the "
                                  f"source image's {c} columns (horiz_start_pos + horiz_size > src_horiz_size)"),
    F_GM: (errors.BoundsError,
           lambda a, b, c, env: f"load_image_to_local: the crop reads GM bytes up to {a} of src{c}, which holds "
                                f"{b} (vert_start_pos + rows lies below the image in GM)"),
    F_GM_ALIGN: (errors.AlignmentError,
                 lambda a, b, c, env: f"set_aipp_functions: src{c} starts at GM byte {a}, not a multiple of {b} "
                                      f"as its format requires"),
    F_DST_SIZE: (errors.BoundsError,
                 lambda a, b, c, env: f"load_image_to_local: dst holds {b} elements; the padded image needs {a} "
                                      f"(rows x columns x C0)"),
    F_DST_ALIGN: (errors.AlignmentError,
                  lambda a, b, c, env: f"load_image_to_local: dst starts at L1 byte {a}, not 32-byte aligned"),
    F_PAD_MODE: (errors.ParamRangeError,
                 lambda a, b, c, env: (f"load_image_to_local: padding_mode {a} (block copy) is not modelled: the "
                                       f"LoadImageToLocal/SetAippFunctions pages do not pin down which block "
                                       f"is copied" if a in (2, 3) else
                                       "load_image_to_local: padding_mode 0 (constant) pads only left and right; "
                                       "top_pad_size and bot_pad_size must be 0")),
    F_CONFIG: (errors.ParamRangeError,
               lambda a, b, c, env: f"set_aipp_functions: {_CONFIG[c]} = {a} is out of range"),
})


@instruction
def set_aipp(st, fmt, out_f16, rid0, off0, size0, rid1, off1, size1, ints, floats, loc):
    """``set_aipp_functions``: the image pointers (region id + 1, byte offset, bytes or -1) and the config."""
    if fmt == YUV420SP and (off0 % 2 != 0 or off1 % 2 != 0):
        raise Fault(F_GM_ALIGN, loc, off0 if off0 % 2 else off1, 2, 0 if off0 % 2 else 1)
    if fmt == XRGB8888 and off0 % 4 != 0:
        raise Fault(F_GM_ALIGN, loc, off0, 4, 0)
    if fmt == YUV400 and ints[10] != 0:
        raise Fault(F_CONFIG, loc, ints[10], 0, 6)
    if ints[0] < 0 or ints[0] > 3:
        raise Fault(F_CONFIG, loc, ints[0], 0, 0)
    if ints[9] < 0 or ints[9] > 1:
        raise Fault(F_CONFIG, loc, ints[9], 0, 1)
    for k in range(9):
        if ints[11 + k] < -32768 or ints[11 + k] > 32767:
            raise Fault(F_CONFIG, loc, ints[11 + k], 0, 2)
    for k in range(6):
        if ints[20 + k] < 0 or ints[20 + k] > 255:
            raise Fault(F_CONFIG, loc, ints[20 + k], 0, 3)
    for k in range(3):
        if ints[5 + k] < 0 or ints[5 + k] > 255:
            raise Fault(F_CONFIG, loc, ints[5 + k], 0, 4)
    if not out_f16:
        for k in (0, 1, 2, 3, 10):
            if floats[k] != np.floor(floats[k]) or floats[k] < -128 or floats[k] > 127:
                raise Fault(F_CONFIG, loc, np.int64(floats[k]), 0, 5)
    st[S.AIPP] = fmt + 1
    st[S.AIPP + 1] = out_f16
    st[S.AIPP + 2] = rid0 + 1
    st[S.AIPP + 3] = off0
    st[S.AIPP + 4] = size0
    st[S.AIPP + 5] = rid1 + 1
    st[S.AIPP + 6] = off1
    st[S.AIPP + 7] = size1
    for k in range(N_INT):
        st[S.AIPP + 8 + k] = ints[k]
    for k in range(N_FLOAT):
        st[S.AIPP + 8 + N_INT + k] = np.float64(floats[k]).view(np.int64)


@njit(cache=True)
def _cfg(st, slot):
    return st[S.AIPP + slot]


@njit(cache=True)
def _cfg_f(st, slot):
    return np.int64(st[S.AIPP + slot]).view(np.float64)


@njit(cache=True)
def _range(value, lo, hi, which, loc):
    if value < lo or value > hi:
        raise Fault(F_RANGE, loc, value, hi, which)


@njit(cache=True)
def _rows_fit(g, size, off, need, which, loc):
    """``need`` bytes from ``off`` lie inside the GlobalTensor (``size`` bytes, -1 unbounded) and its region."""
    have = g.size - off if size < 0 else min(size, g.size - off)
    if need > have:
        raise Fault(F_GM, loc, need, have, which)


@njit(cache=True)
def _pixel(st, g0, o0, g1, o1, fmt, w, x, y, px):
    """Steps 1-3: the pixel at column ``x``, row ``y`` of the source as channel values in ``px``."""
    if fmt == RGB888:
        b = o0 + (y * w + x) * 3
        for k in range(3):
            px[k] = np.int64(g0[b + k])
    elif fmt == XRGB8888:
        b = o0 + (y * w + x) * 4 + (1 if _cfg(st, SWAP_AX) else 0)
        for k in range(3):
            px[k] = np.int64(g0[b + k])
    elif fmt == YUV400:
        px[0] = np.int64(g0[o0 + y * w + x])
        return 1
    else:
        px[0] = np.int64(g0[o0 + y * w + x])
        b = o1 + (y // 2) * w + (x // 2) * 2
        px[1] = np.int64(g1[b])
        px[2] = np.int64(g1[b + 1])
    if (fmt == YUV420SP and _cfg(st, SWAP_UV)) or (fmt != YUV420SP and _cfg(st, SWAP_RB)):
        lo, hi = (1, 2) if fmt == YUV420SP else (0, 2)
        t = px[lo]
        px[lo] = px[hi]
        px[hi] = t
    if _cfg(st, CSC):
        a0, a1, a2 = px[0], px[1], px[2]
        for k in range(3):
            m0, m1, m2 = _cfg(st, MATRIX + 3 * k), _cfg(st, MATRIX + 3 * k + 1), _cfg(st, MATRIX + 3 * k + 2)
            if fmt == YUV420SP:
                v = (m0 * (a0 - _cfg(st, BIAS_IN)) + m1 * (a1 - _cfg(st, BIAS_IN + 1))
                     + m2 * (a2 - _cfg(st, BIAS_IN + 2))) >> 8
            else:
                v = ((m0 * a0 + m1 * a1 + m2 * a2) >> 8) + _cfg(st, BIAS_OUT + k)
            px[k] = min(max(v, 0), 255)
    return 3


@njit(cache=True)
def _convert(st, out_f16, x, k):
    """Step 4: channel ``k``'s value ``x`` in the output type, as raw bits (int8 or float16)."""
    d = x - _cfg(st, MEAN + k)
    if not out_f16:
        return min(max(d, -128), 127)
    h = H.f16_to_f32(H.f32_to_f16(np.float32(d)))
    m = H.f16_to_f32(H.f32_to_f16(np.float32(_cfg_f(st, DTC_MIN + k))))
    v = H.f16_to_f32(H.f32_to_f16(np.float32(_cfg_f(st, DTC_VAR + k))))
    return np.int64(H.f32_to_f16(H.f16_to_f32(H.f32_to_f16(h - m)) * v))


@njit(cache=True)
def _raw(out_f16, x):
    """A float configuration value as raw output bits."""
    if out_f16:
        return np.int64(H.f32_to_f16(np.float32(x)))
    return np.int64(x)


@njit(cache=True)
def _store(lm, dst, out_f16, index, bits):
    if out_f16:
        v = np.uint16(bits & 0xFFFF)
        lm[dst + 2 * index] = np.uint8(v & 0xFF)
        lm[dst + 2 * index + 1] = np.uint8(v >> 8)
    else:
        lm[dst + index] = np.uint8(bits & 0xFF)


@instruction
def load_image(st, lm, gm, dst, dst_len, dst_f16, hsize, vsize, hstart, vstart, srcw, top, bot, left, right, loc):
    """``load_image_to_local``: the configured image's crop into dst (steps in the module doc)."""
    if st[S.AIPP] == 0:
        raise Fault(F_UNSET, loc, 0, 0, 0)
    fmt = st[S.AIPP] - 1
    out_f16 = st[S.AIPP + 1]
    if dst_f16 != out_f16:
        raise Fault(F_DTYPE, loc, dst_f16, out_f16, 0)
    for i, (v, lo, hi) in enumerate(((hsize, 2, 4095), (vsize, 2, 4095), (hstart, 0, 4095), (vstart, 0, 4095),
                                     (srcw, 2, 4095), (top, 0, 32), (bot, 0, 32), (left, 0, 32), (right, 0, 32))):
        _range(v, lo, hi, i, loc)
    if hstart % 2 != 0:
        raise Fault(F_ODD, loc, hstart, fmt, 2)
    if fmt == YUV420SP and vstart % 2 != 0:
        raise Fault(F_ODD, loc, vstart, fmt, 3)
    if fmt == YUV420SP and srcw % 2 != 0:
        raise Fault(F_ODD, loc, srcw, fmt, 4)
    if hstart + hsize > srcw:
        raise Fault(F_CROP, loc, hstart, hsize, srcw)
    mode = _cfg(st, PAD_MODE)
    if (mode >= 2 and top + bot + left + right > 0) or (mode == 0 and (top > 0 or bot > 0)):
        raise Fault(F_PAD_MODE, loc, mode, 0, 0)
    rows = 1 if _cfg(st, SINGLE) else vsize
    bpp = 3 if fmt == RGB888 else (4 if fmt == XRGB8888 else 1)
    g0 = gm[st[S.AIPP + 2] - 1]
    o0 = st[S.AIPP + 3]
    _rows_fit(g0, st[S.AIPP + 4], o0, (vstart + rows) * srcw * bpp, 0, loc)
    g1 = g0
    o1 = np.int64(0)
    if fmt == YUV420SP:
        g1 = gm[st[S.AIPP + 5] - 1]
        o1 = st[S.AIPP + 6]
        _rows_fit(g1, st[S.AIPP + 7], o1, ((vstart + rows - 1) // 2 + 1) * srcw, 1, loc)
    esize = 2 if out_f16 else 1
    c0 = 4 if _cfg(st, CPAD_MODE) == 1 else 32 // esize
    hh, ww = top + rows + bot, left + hsize + right
    if (dst - st[S.SEG_BASE + L1]) % 32 != 0:
        raise Fault(F_DST_ALIGN, loc, dst - st[S.SEG_BASE + L1], 0, 0)
    if hh * ww * c0 > dst_len:
        raise Fault(F_DST_SIZE, loc, hh * ww * c0, dst_len, 0)
    cpad = _raw(out_f16, _cfg_f(st, CPAD_VALUE))
    px = np.zeros(3, np.int64)
    for r in range(hh):
        for c in range(ww):
            base = (r * ww + c) * c0
            inside_c = left <= c < left + hsize
            if mode == 0 and not inside_c:
                for k in range(c0):
                    v = _raw(out_f16, _cfg_f(st, PAD_VALUE + k)) if k < 4 else cpad
                    _store(lm, dst, out_f16, base + k, v)
                continue
            # mode 1 (and the crop itself): the nearest pixel of the crop
            y = vstart + min(max(r - top, 0), rows - 1)
            x = hstart + min(max(c - left, 0), hsize - 1)
            n = _pixel(st, g0, o0, g1, o1, fmt, srcw, x, y, px)
            for k in range(c0):
                v = _convert(st, out_f16, px[k], k) if k < n else cpad
                _store(lm, dst, out_f16, base + k, v)
