"""Scalar bit operations and scalar_cast against plain-Python references and the Ascend C documents' examples."""
from __future__ import annotations

import math

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import KernelTypeError

MASK = (1 << 64) - 1


def u64(x: int) -> int:
    return x & MASK


def s64(x: int) -> int:
    x &= MASK
    return x - (1 << 64) if x >> 63 else x


# references written from the definitions, independently of the implementation
def ref_clz(x):
    return 64 - u64(x).bit_length()


def ref_count(x, v):
    ones = bin(u64(x)).count("1")
    return ones if v else 64 - ones


def ref_sff(x, v):
    bits = u64(x) if v else u64(~x)
    return (bits & -bits).bit_length() - 1 if bits else -1


def ref_sign_bits(x):
    x = s64(x)
    sign = (x >> 63) & 1
    n = 0
    for b in range(62, -1, -1):
        if (x >> b) & 1 != sign:
            return n
        n += 1
    return -1                              # every bit equals the sign: 0 and -1


@asc.jit
def bits_kernel(out: asc.GlobalAddress, x: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_count_leading_zero(x))
    res.set_value(1, asc.scalar_get_count_of_value(x, 1))
    res.set_value(2, asc.scalar_get_count_of_value(x, 0))
    res.set_value(3, asc.scalar_get_sff_value(x, 1))
    res.set_value(4, asc.scalar_get_sff_value(value_in=x, count_value=0))
    res.set_value(5, asc.count_bits_cnt_same_as_sign_bit(x))


VALUES = [0, 1, -1, -2, 0xFF00, 0x00FF, 0x1000000000000100, 0x0100000000000020, 0x0F00000000000000,
          s64(0x8000000000000000), 0x7FFFFFFFFFFFFFFF, s64(0xFFFFFFFFFFFF0000), 12345678901234]


def expected_bits(x):
    return [ref_clz(x), ref_count(x, 1), ref_count(x, 0), ref_sff(x, 1), ref_sff(x, 0), ref_sign_bits(x)]


def test_bit_operations_match_the_definitions(mode, rng):
    """Runtime arguments: every operation on edge values and random int64s, in compiled and debug mode."""
    values = VALUES + [int(v) for v in rng.integers(-(1 << 63), (1 << 63) - 1, 20, dtype=np.int64)]
    for x in values:
        out = np.full(8, 99, np.int64)
        bits_kernel[1](out, x, **mode)
        assert out[:6].tolist() == expected_bits(x), hex(u64(x))


def test_the_documented_examples():
    out = np.zeros(8, np.int64)
    bits_kernel[1](out, 0x1000000000000100)
    assert out[3] == 8                              # GetSFFValue<1>(0x1000000000000100ULL) returns 8
    bits_kernel[1](out, 0x0100000000000020)
    assert out[5] == 6                              # CountBitsCntSameAsSignBit(0x0100000000000020) returns 6
    bits_kernel[1](out, 0x0F00000000000000)
    assert out[5] == 3
    bits_kernel[1](out, -1)
    assert out[4] == -1 and out[5] == -1            # GetSFFValue<0>(all ones) returns -1
    bits_kernel[1](out, 0)
    assert out[0] == 64 and out[3] == -1 and out[5] == -1
    bits_kernel[1](out, 0xFF00)
    assert (out[3], out[4]) == (8, 0)


@asc.jit
def folded_kernel(out: asc.GlobalAddress):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_count_leading_zero(0xFFFFFFFFFFFFFFFF))   # a uint64 constant above 2**63
    res.set_value(1, asc.scalar_get_count_of_value(0xF0F0, 1))
    res.set_value(2, asc.scalar_get_sff_value(0x00FF, 0))
    res.set_value(3, asc.count_bits_cnt_same_as_sign_bit(0x0100000000000020))
    res.set_value(4, asc.scalar_cast(2.5, asc.int32, asc.RoundMode.CAST_ROUND))


def test_constant_arguments_fold_at_compile_time():
    out = np.zeros(8, np.int64)
    folded_kernel[1](out)
    assert out[:5].tolist() == [0, 8, 8, 6, 3]
    (binary,) = folded_kernel.binaries()
    assert "npuemu.isa.scalar_ops" not in binary.source


# --------------------------------------------------------------------------- scalar_cast

@asc.jit
def cast_kernel(ints: asc.GlobalAddress, halves: asc.GlobalAddress, x: float):
    r = asc.GlobalTensor()
    r.set_global_buffer(ints, 4)
    h = asc.GlobalTensor()
    h.set_global_buffer(halves, 16)
    r.set_value(0, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_RINT))
    r.set_value(1, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_ROUND))
    r.set_value(2, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_FLOOR))
    r.set_value(3, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_CEIL))
    h.set_value(0, asc.scalar_cast(x, asc.half, asc.RoundMode.CAST_ODD))


def ref_int(x, how):
    x = float(x)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        r = x
    elif how == "rint":
        r = float(np.rint(x))
    elif how == "round":
        r = math.copysign(math.floor(abs(x) + 0.5), x)
    elif how == "floor":
        r = math.floor(x)
    else:
        r = math.ceil(x)
    return int(min(max(r, -2 ** 31), 2 ** 31 - 1))


def ref_f16_odd(x: np.float32) -> int:
    """float32 -> float16 bits, round to odd: truncate toward zero, then set the last bit if inexact."""
    x64 = float(x)
    if math.isnan(x64):
        return 0x7E00
    with np.errstate(over="ignore"):
        h = np.float16(x64)                                   # nearest (ties to even)
    if math.isinf(x64) or float(h) == x64:
        return int(h.view(np.uint16))
    if abs(float(h)) > abs(x64):                              # rounded away from zero: step back
        h = np.nextafter(h, np.float16(0))
    return int(h.view(np.uint16)) | 1                         # inexact: the last kept bit becomes 1


def test_scalar_cast_matches_numpy(mode, rng):
    xs = [2.5, -2.5, 3.5, 0.5, -0.5, 1.49999988, -7.75, 3e10, -3e10, 2147483520.0, float("inf"), float("-inf"),
          float("nan"), 65504.0, 65520.0, 1e6, -1e6, 1.0 + 2 ** -12, 1.0 + 2 ** -11 + 2 ** -20, 6e-8, 1e-10, -0.0]
    xs += list(rng.uniform(-70000, 70000, 30).astype(np.float32)) + list(rng.normal(0, 1e-3, 10).astype(np.float32))
    for x in map(np.float32, xs):
        ints = np.zeros(4, np.int32)
        halves = np.zeros(16, np.float16)
        cast_kernel[1](ints, halves, float(x), **mode)
        assert ints.tolist() == [ref_int(x, h) for h in ("rint", "round", "floor", "ceil")], x
        assert int(halves.view(np.uint16)[0]) == ref_f16_odd(x), (x, hex(int(halves.view(np.uint16)[0])))


def test_scalar_cast_documented_example():
    ints = np.zeros(4, np.int32)
    cast_kernel[1](ints, np.zeros(16, np.float16), 2.5)
    assert ints[1] == 3                   # ScalarCast<float, int32_t, CAST_ROUND>(2.5) is 3


# --------------------------------------------------------------------------- broken kernels

@asc.jit
def bad_count_value(out: asc.GlobalAddress, x: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_get_sff_value(x, 2))


@asc.jit
def runtime_count_value(out: asc.GlobalAddress, x: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_get_count_of_value(x, x))


@asc.jit
def cast_half_rint(out: asc.GlobalAddress, x: float):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_cast(x, asc.float16, asc.RoundMode.CAST_RINT))


@asc.jit
def cast_to_int8(out: asc.GlobalAddress, x: float):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_cast(x, asc.int8, asc.RoundMode.CAST_RINT))


@asc.jit
def cast_int32_trunc(out: asc.GlobalAddress, x: float):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.scalar_cast(x, asc.int32, asc.RoundMode.CAST_TRUNC))


@pytest.mark.parametrize("kernel, arg, message", [
    (bad_count_value, 5, r"scalar_get_sff_value: count_value must be 0 or 1, got 2"),
    (runtime_count_value, 5, r"count_value must be a compile-time constant"),
    (cast_half_rint, 1.0, r"float32 -> float16 does not support CAST_RINT \(supported: CAST_ODD\)"),
    (cast_to_int8, 1.0, r"to int32 or float16 on this platform, not to int8"),
    (cast_int32_trunc, 1.0, r"float32 -> int32 does not support CAST_TRUNC"),
])
def test_broken_kernels_are_compile_errors(kernel, arg, message):
    with pytest.raises(KernelTypeError, match=message) as info:
        kernel[1](np.zeros(8, np.int64), arg)
    assert info.value.loc.function == kernel.__name__ and "asc.scalar_" in info.value.loc.line_text
