"""Tiling-data structs: C layout against ``ctypes``/``struct``, serialisation, unassigned fields, arrays in kernels."""
from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import npuemu.asc as asc
from npuemu.errors import BoundsError, KernelTypeError, LaunchError, UnsupportedSyntaxError
from npuemu.language.struct import ArrayField, Field, Struct, StructField, StructLayoutError, UnassignedFieldError


class Inner(Struct):
    flag = Field(asc.uint8, 0)
    value = Field(asc.int64, 0)


class Mixed(Struct):
    count = Field(asc.int32)
    small = Field(asc.uint8, 3)
    halves = ArrayField(asc.uint16, 3, default=0)
    inner = StructField(Inner)
    scale = Field(asc.float32, 1.5)
    tail = Field(asc.int16, -2)


class CInner(ctypes.Structure):
    _fields_ = [("flag", ctypes.c_uint8), ("value", ctypes.c_int64)]


class CMixed(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int32), ("small", ctypes.c_uint8), ("halves", ctypes.c_uint16 * 3),
                ("inner", CInner), ("scale", ctypes.c_float), ("tail", ctypes.c_int16)]


class Packed(Struct):
    """No padding needed: int64, uint32, uint32, float32, int32."""

    a = Field(asc.int64, 0)
    b = Field(asc.uint32, 0)
    c = Field(asc.uint32, 0)
    d = Field(asc.float32, 0.0)
    e = Field(asc.int32, 0)


def test_layout_matches_ctypes():
    assert Mixed.sizeof() == ctypes.sizeof(CMixed) == 40
    assert Mixed.alignof() == ctypes.alignment(CMixed) == 8
    for name in ("count", "small", "halves", "inner", "scale", "tail"):
        assert Mixed.offsetof(name) == getattr(CMixed, name).offset, name
    assert Mixed.offsetof("inner.value") == CMixed.inner.offset + CInner.value.offset
    assert Inner.sizeof() == ctypes.sizeof(CInner) == 16
    assert [(".".join(e.path), e.offset, e.count) for e in Mixed.layout()] == [
        ("count", 0, 0), ("small", 4, 0), ("halves", 6, 3), ("inner.flag", 16, 0), ("inner.value", 24, 0),
        ("scale", 32, 0), ("tail", 36, 0)]


def test_bytes_match_ctypes_and_struct_packing():
    m = Mixed(count=-7)
    m.halves[1] = 65535
    m.inner.value = -(1 << 40)
    c = CMixed(count=-7, small=3, scale=1.5, tail=-2)
    c.halves[1] = 65535
    c.inner.value = -(1 << 40)
    assert m.to_bytes() == bytes(c)
    # explicit padding with the struct module: '<' has no implicit alignment
    want = struct.pack("<iBx3H4xB7xqfh2x", -7, 3, 0, 65535, 0, 0, -(1 << 40), 1.5, -2)
    assert m.to_bytes() == want
    p = Packed(a=1 << 40, b=0xFFFFFFFF, c=2, d=-0.25, e=-1)
    assert Packed.sizeof() == 24 and p.to_bytes() == struct.pack("<qIIfi", 1 << 40, 0xFFFFFFFF, 2, -0.25, -1)


def test_from_bytes_round_trips():
    m = Mixed(count=12, halves=[1, 2, 3], scale=0.1)
    m.inner.flag = 255
    back = Mixed.from_bytes(m.to_bytes())
    assert back.to_bytes() == m.to_bytes()
    assert back.halves.tolist() == [1, 2, 3] and back.inner.flag == 255
    assert back.scale == np.float32(0.1)                      # float fields hold float32 values
    assert Mixed.from_bytes(m.to_bytes() + b"\xAA" * 16).count == 12   # a larger tiling buffer
    with pytest.raises(StructLayoutError, match="needs 40 bytes"):
        Mixed.from_bytes(b"\0" * 32)


def test_unassigned_required_fields_are_errors():
    m = Mixed()
    with pytest.raises(UnassignedFieldError, match="Mixed.count"):
        m.count
    with pytest.raises(UnassignedFieldError, match="count"):
        m.to_bytes()
    assert m.unassigned() == ["count"] and "count=<unassigned>" in repr(m)
    assert m.small == 3 and m.tail == -2                      # fields with a default are explicitly that value

    class Needs(Struct):
        arr = ArrayField(asc.int32, 2)
        inner = StructField(Mixed)
    n = Needs()
    assert n.unassigned() == ["arr", "inner.count"]



@given(count=st.integers(-2**31, 2**31 - 1), small=st.integers(0, 255), halves=st.lists(st.integers(0, 65535),
       min_size=3, max_size=3), flag=st.integers(0, 255), value=st.integers(-2**63, 2**63 - 1),
       scale=st.floats(width=32, allow_nan=False), tail=st.integers(-2**15, 2**15 - 1))
def test_any_values_round_trip_with_the_c_layout(count, small, halves, flag, value, scale, tail):
    m = Mixed(count=count, small=small, halves=halves, scale=scale, tail=tail)
    m.inner.flag, m.inner.value = flag, value
    c = CMixed(count=count, small=small, scale=scale, tail=tail, inner=CInner(flag=flag, value=value))
    c.halves[:] = halves
    data = m.to_bytes()
    assert data == bytes(c)                                   # what a C compiler lays out
    back = Mixed.from_bytes(data)
    assert back.to_bytes() == data
    assert (back.count, back.small, back.halves.tolist(), back.inner.flag, back.inner.value, back.tail) == \
        (count, small, halves, flag, value, tail)
    assert np.float32(back.scale).tobytes() == np.float32(scale).tobytes()

@pytest.mark.parametrize("field, value, error", [
    (Field(asc.uint8), 256, ValueError),
    (Field(asc.uint32), -1, ValueError),
    (Field(asc.int16), 1 << 15, ValueError),
    (Field(asc.int32), 1.5, TypeError),
    (Field(asc.float32), "x", TypeError),
])
def test_values_are_checked_against_the_field_type(field, value, error):
    class S(Struct):
        f = field
    with pytest.raises(error):
        S(f=value)


def test_array_fields():
    class A(Struct):
        w = ArrayField(asc.float32, 4, default=[1, 2, 3, 4])
        z = ArrayField(asc.int8, 2, default=0)
    a, b = A(), A()
    a.w[0] = 9.0
    assert b.w.tolist() == [1, 2, 3, 4]                       # each instance edits its own copy
    a.z = (-128, 127)
    assert a.z.tolist() == [-128, 127]
    with pytest.raises(ValueError, match="needs 2 values"):
        a.z = [1, 2, 3]
    with pytest.raises(ValueError):
        a.z = [0, 128]
    with pytest.raises(TypeError):
        ArrayField(asc.int32, 0)
    with pytest.raises(TypeError):
        Field(asc.void)


def test_unsupported_layout_dtype():
    class Odd(Struct):
        x = Field(asc.int32, 0)

    class Bad(Struct):
        v = Field(asc.float64, 0.0)
        o = StructField(Odd)
    assert Bad.sizeof() == 16                                  # float64 has a layout
    if asc.bfloat16.host is None:                              # bfloat16 needs ml_dtypes on the host
        class B16(Struct):
            h = Field(asc.bfloat16, 0.0)
        with pytest.raises(StructLayoutError):
            B16.layout()


# ---------------------------------------------------------------------------- arrays in kernels


class Weights(Struct):
    bias = Field(asc.int32, 0)
    w = ArrayField(asc.float32, 4, default=[1.0, 2.0, 3.0, 4.0])
    idx = ArrayField(asc.uint32, 3, default=0)


class Outer(Struct):
    n = Field(asc.int32)
    weights = StructField(Weights)


@asc.jit
def gather_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, c: Outer):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, 8)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    w = c.weights.w                                   # a variable bound to an array field
    for i in range(len(c.weights.idx)):
        zg.set_value(i, xg.get_value(c.weights.idx[i]) * w[i] + c.weights.bias)
    zg.set_value(4, w[3] + c.n)                       # constant index


def test_kernels_read_array_fields(mode):
    x = np.arange(8, dtype=np.float32) * 10
    z = np.zeros(8, np.float32)
    c = Outer(n=100)
    c.weights.idx[:] = [7, 0, 3]
    c.weights.bias = -1
    gather_kernel[1](x, z, c, **mode)
    assert z[:5].tolist() == [69.0, -1.0, 89.0, 0.0, 104.0]


def test_runtime_array_index_is_bounds_checked(mode):
    @asc.jit
    def k(z: asc.GlobalAddress, c: Weights, i: int):
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, 8)
        zg.set_value(0, c.w[i])
    z = np.zeros(8, np.float32)
    k[1](z, Weights(), 2, **mode)
    assert z[0] == 3.0
    with pytest.raises(BoundsError, match="index 4 of a tiling-data array of 4 elements"):
        k[1](z, Weights(), 4, **mode)


def test_constant_index_and_misuse_are_compile_errors():
    z = np.zeros(8, np.float32)

    @asc.jit
    def past_end(z: asc.GlobalAddress, c: Weights):
        zg = asc.GlobalTensor()
        zg.set_global_buffer(z, 8)
        zg.set_value(0, c.w[4])
    with pytest.raises(KernelTypeError, match="out of range"):
        past_end[1](z, Weights())

    @asc.jit
    def sliced(z: asc.GlobalAddress, c: Weights):
        v = c.w[1:]
    with pytest.raises(UnsupportedSyntaxError, match="one element at a time"):
        sliced[1](z, Weights())

    @asc.jit
    def written(z: asc.GlobalAddress, c: Weights):
        c.w[0] = 1.0
    with pytest.raises(UnsupportedSyntaxError):
        written[1](z, Weights())


def test_launch_with_unassigned_field_is_a_launch_error():
    x = np.zeros(8, np.float32)
    with pytest.raises(LaunchError, match="Outer.n"):
        gather_kernel[1](x, x.copy(), Outer())
