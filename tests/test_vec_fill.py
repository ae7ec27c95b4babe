"""``asc.duplicate`` and ``asc.brcb``: both forms, scalar conversion per dtype, strides, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import state as S
from npuemu.isa import vec_fill as isa

DUP_MASK = [0x8000_0000_0000_00FF, 0x1]        # lanes 0-7, 63 and 64


def _lanes(repeats, lanes, active, blk, rep, epb):
    """Element indices of the enabled lanes of a level-0 operand (the documented layout)."""
    return np.array([(r * rep + (e // epb) * blk) * epb + e % epb
                     for r in range(repeats) for e in range(lanes) if active(e)])


@asc.jit
def fill_f16(y: asc.GlobalAddress, z: asc.GlobalAddress, v: float):
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 3072)
    t = buf.get_with_offset(512, 0, asc.float16)
    u = buf.get_with_offset(1024, 1024, asc.float16)
    asc.data_copy(t, yg, 512)
    asc.data_copy(u, zg, 1024)
    asc.duplicate(t, v, 100)
    asc.duplicate(t[128:], 2.5, DUP_MASK, 2, 2, 12)
    asc.brcb(u, t, 4, asc.BrcbRepeatParams(2, 16))
    asc.data_copy(yg, t, 512)
    asc.data_copy(zg, u, 1024)


def test_duplicate_and_brcb(mode):
    y = np.full(512, -1.0, np.float16)
    z = np.full(1024, -2.0, np.float16)
    y[100:128] = np.arange(28)
    fill_f16[1](y, z, 0.1, **mode)

    want = np.full(512, -1.0, np.float16)
    want[100:128] = np.arange(28)
    want[:100] = np.float16(np.float32(0.1))                       # float32 scalar, rounded to nearest even
    on = lambda e: (DUP_MASK[e // 64] >> (e % 64)) & 1 == 1
    want[128 + _lanes(2, 128, on, 2, 12, 16)] = 2.5
    np.testing.assert_array_equal(y, want)

    zwant = np.full(1024, -2.0, np.float16)
    for i in range(4):
        for j in range(8):
            b = (i * 16 + j * 2) * 16
            zwant[b:b + 16] = want[8 * i + j]
    np.testing.assert_array_equal(z, zwant)


@asc.jit
def fill_i32(y: asc.GlobalAddress, v: int, n: int):
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECOUT)
    pipe.init_buffer(buf, 256)
    t = buf.get(asc.int32)
    asc.duplicate(t, -3, 64)
    asc.duplicate(t, v, n)
    asc.data_copy(yg, t, 64)


def test_duplicate_int32_and_bounds():
    y = np.zeros(64, np.int32)
    fill_i32[1](y, 1 << 20, 24)
    np.testing.assert_array_equal(y, [1 << 20] * 24 + [-3] * 40)
    with pytest.raises(errors.BoundsError, match="touches 65 elements"):
        fill_i32[1](y, 5, 65)


@pytest.mark.parametrize("dtype, kind, fvalue, ivalue, want", [
    (np.uint32, isa.KIND_F32, 0.1, 0, np.float32(0.1).view(np.uint32)),
    (np.uint16, isa.KIND_F16, 65519.0, 0, 0x7BFF),                 # below the rounding boundary
    (np.uint16, isa.KIND_F16, 65520.0, 0, 0x7C00),                 # ties to even: infinity
    (np.uint16, isa.KIND_BF16, 1.00390625, 0, 0x3F80),             # tie to even (down)
    (np.uint16, isa.KIND_BF16, 1.01171875, 0, 0x3F82),             # tie to even (up)
    (np.int16, isa.KIND_INT, 0.0, 70000, 70000 - 65536),           # integers wrap like a C++ conversion
    (np.uint16, isa.KIND_INT, 0.0, -1, 0xFFFF),
    (np.int32, isa.KIND_INT, 0.0, (1 << 31) + 5, -(1 << 31) + 5),
    (np.uint32, isa.KIND_INT, 0.0, -1, 0xFFFFFFFF),
])
def test_scalar_conversion(dtype, kind, fvalue, ivalue, want):
    size = np.dtype(dtype).itemsize
    lm = np.zeros(64, np.uint8)
    st = np.zeros(S.STATE_SIZE, np.int64)
    isa.duplicate(st, lm, 0, 64 // size, size, kind, np.float32(fvalue), ivalue, 3, 0)
    got = lm.view(dtype)
    assert got[0] == got[2] == np.array(want).astype(dtype) and got[3] == 0


@asc.jit
def brcb_checked(x: asc.GlobalAddress, doff: int, soff: int, repeat: int, blk: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 2048)
    t = buf.get(asc.float16)
    asc.data_copy(t, xg, 1024)
    asc.brcb(t[doff:], t[soff:], repeat, asc.BrcbRepeatParams(blk, 8))
    asc.data_copy(xg, t, 1024)


def test_brcb_faults():
    x = np.arange(1024).astype(np.float16)
    brcb_checked[1](x, 0, 512, 2, 1)                               # disjoint: fine
    np.testing.assert_array_equal(x[:256], np.repeat(np.arange(512, 528), 16).astype(np.float16))
    with pytest.raises(errors.OverlapError, match="overlaps the destination block"):
        brcb_checked[1](x, 0, 16, 2, 1)
    with pytest.raises(errors.KernelFault, match="operand overlap"):
        brcb_checked[1](x, 256, 240, 3, 2)                         # src runs into the first written block
    before = x.copy()
    brcb_checked[1](x, 0, 16, 1, 2)                                # src inside a gap between written blocks
    blocks = x[:256].reshape(16, 16)
    np.testing.assert_array_equal(blocks[0::2], np.repeat(before[16:24], 16).reshape(8, 16))
    np.testing.assert_array_equal(blocks[1::2], before[:256].reshape(16, 16)[1::2])
    with pytest.raises(errors.ParamRangeError, match="dst_blk_stride is 0"):
        brcb_checked[1](x, 0, 512, 2, 0)
    with pytest.raises(errors.AlignmentError):
        brcb_checked[1](x, 1, 512, 2, 1)
    with pytest.raises(errors.BoundsError):
        brcb_checked[1](x, 512, 0, 5, 1)                           # dst needs 640 of 512 elements
    with pytest.raises(errors.ParamRangeError, match="repeat_times 300"):
        brcb_checked[1](x, 0, 512, 300, 1)


def _type_error(body) -> str:
    @asc.jit
    def k(x: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 1024)
        i8 = buf.get_with_offset(64, 0, asc.int8)
        i32 = buf.get_with_offset(64, 256, asc.int32)
        f16 = buf.get_with_offset(64, 512, asc.float16)
        body(i8, i32, f16)

    with pytest.raises(errors.KernelTypeError) as info:
        k[1](np.zeros(8, np.float32))
    return str(info.value)


@asc.jit
def _dup_int8(i8, i32, f16):
    asc.duplicate(i8, 1, 64)


@asc.jit
def _dup_float_into_int(i8, i32, f16):
    asc.duplicate(i32, 1.5, 64)


@asc.jit
def _brcb_mixed(i8, i32, f16):
    asc.brcb(f16, i32, 1, asc.BrcbRepeatParams(1, 8))


def test_type_errors():
    assert "duplicate does not support int8" in _type_error(_dup_int8)
    assert "must be an integer" in _type_error(_dup_float_into_int)
    assert "brcb: src is int32 but dst is float16" in _type_error(_brcb_mixed)
