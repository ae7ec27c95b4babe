"""Vector-scalar instructions: every op and dtype in the count form, the level-0 forms, axpy, and misuse.

The scalar is converted to the element type first, as on hardware; NumPy
references do the same, then compute float16 in float32 with one rounding and
integers with wrap-around.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 256
COUNT = 200
# (instruction, scalar) per dtype; 40000 wraps to -25536 in int16, 0.1 rounds in float16
OPS = {
    "float16": ((asc.adds, 1.7), (asc.muls, 0.1), (asc.maxs, -0.5), (asc.mins, 2.25), (asc.leaky_relu, 0.01),
                (asc.axpy, 1.5)),
    "float32": ((asc.adds, 1.7), (asc.muls, 0.1), (asc.maxs, -0.5), (asc.mins, 2.25), (asc.leaky_relu, 0.01),
                (asc.axpy, -0.3)),
    "int16": ((asc.adds, 40000), (asc.muls, 7), (asc.maxs, -100), (asc.mins, 100), (asc.shift_left, 3),
              (asc.shift_right, 16)),
    "int32": ((asc.adds, -5), (asc.muls, 65537), (asc.maxs, 0), (asc.mins, -1), (asc.shift_left, 31),
              (asc.shift_right, 5)),
    "uint16": ((asc.shift_left, 16), (asc.shift_right, 3)),
    "uint32": ((asc.shift_left, 1), (asc.shift_right, 32)),
}


def reference(op, x: np.ndarray, scalar, old: np.ndarray) -> np.ndarray:
    """One instruction in NumPy; ``old`` is the destination before it (axpy accumulates into it)."""
    s = np.array(scalar).astype(np.int64).astype(x.dtype) if x.dtype.kind in "iu" else x.dtype.type(scalar)
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f":
            w, ws = x.astype(np.float32), np.float32(s)
            if op is asc.adds:
                r = w + ws
            elif op is asc.muls:
                r = w * ws
            elif op is asc.maxs:
                r = np.maximum(w, ws)
            elif op is asc.mins:
                r = np.minimum(w, ws)
            elif op is asc.leaky_relu:
                r = np.where(w >= 0, w, w * ws)
            else:       # a multiply then an add, each rounded to the destination type
                r = (w * ws).astype(old.dtype).astype(np.float32) + old.astype(np.float32)
            return r.astype(old.dtype)
        wide = x.astype(np.int64)
        r = {asc.adds: lambda: wide + int(s), asc.muls: lambda: wide * int(s),
             asc.maxs: lambda: np.maximum(wide, int(s)), asc.mins: lambda: np.minimum(wide, int(s)),
             asc.shift_left: lambda: wide << int(s), asc.shift_right: lambda: wide >> int(s)}[op]()
        return r.astype(x.dtype)


def bits(x: np.ndarray) -> np.ndarray:
    return x.view(f"u{x.dtype.itemsize}")


def inputs(rng: np.random.Generator, dtype: str, n: int) -> np.ndarray:
    if dtype.startswith("float"):
        return rng.uniform(-8, 8, n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)


# --------------------------------------------------------------------------- count form


@asc.jit
def _count_section(x: asc.GlobalAddress, z: asc.GlobalAddress, count: int, ops: asc.ConstExpr):
    total = len(ops) * N
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    zg.set_global_buffer(z, total)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, N)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 4096, total)
    asc.data_copy(a, xg, N)
    asc.data_copy(c, zg, total)
    for i in asc.static_range(len(ops)):
        ops[i][0](c[i * N:], a, ops[i][1], count)
    asc.data_copy(zg, c, total)


@asc.jit
def scalar_count_kernel(xh: asc.GlobalAddress, zh: asc.GlobalAddress, xf: asc.GlobalAddress,
                        zf: asc.GlobalAddress, xs: asc.GlobalAddress, zs: asc.GlobalAddress,
                        xi: asc.GlobalAddress, zi: asc.GlobalAddress, xu: asc.GlobalAddress,
                        zu: asc.GlobalAddress, xw: asc.GlobalAddress, zw: asc.GlobalAddress,
                        zm: asc.GlobalAddress, count: int, alpha: float):
    _count_section(xh, zh, count, OPS["float16"])
    _count_section(xf, zf, count, OPS["float32"])
    _count_section(xs, zs, count, OPS["int16"])
    _count_section(xi, zi, count, OPS["int32"])
    _count_section(xu, zu, count, OPS["uint16"])
    _count_section(xw, zw, count, OPS["uint32"])
    # axpy float16 -> float32, with a run-time scalar
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(xh, N)
    zg.set_global_buffer(zm, N)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, N)
    c = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 4096, N)
    asc.data_copy(a, xg, N)
    asc.data_copy(c, zg, N)
    asc.axpy(c, a, alpha, count)
    asc.data_copy(zg, c, N)


def test_count_form_every_op_and_dtype(rng):
    alpha = np.float32(0.37)        # a run-time float scalar arrives as float32
    args, expected = [], []
    for dtype, ops in OPS.items():
        x = inputs(rng, dtype, N)
        z = inputs(rng, dtype, len(ops) * N)
        want = z.copy()
        for i, (op, s) in enumerate(ops):
            want[i * N:i * N + COUNT] = reference(op, x[:COUNT], s, z[i * N:i * N + COUNT])
        args += [x, z]
        expected.append((dtype, ops, z, want))
    zm = inputs(rng, "float32", N)
    wantm = zm.copy()
    wantm[:COUNT] = reference(asc.axpy, args[0][:COUNT], np.float16(alpha), zm[:COUNT])
    scalar_count_kernel[1](*args, zm, COUNT, alpha, debug=True)     # debug mode: no kernel compile
    for dtype, ops, got, want in expected:
        for i, (op, s) in enumerate(ops):
            np.testing.assert_array_equal(bits(got[i * N:(i + 1) * N]), bits(want[i * N:(i + 1) * N]),
                                          err_msg=f"{op.__name__} {dtype} scalar {s}")
    np.testing.assert_array_equal(bits(zm), bits(wantm), err_msg="axpy float16 -> float32")


# --------------------------------------------------------------------------- level-0 forms

L0 = 1024
P = asc.UnaryRepeatParams
LO, HI = 0xF0F0_0000_FFFF_0001, 0x8000_0000_0000_00FF


def lane_index(r, e, blk, rep, epb):
    return r * rep * epb + (e // epb) * blk * epb + e % epb


def level0_reference(op, scalar, dst, src, lanes_on, repeats, strides, lanes=None):
    """``dst`` after a level-0 vector-scalar instruction; lanes follow the wider of the two types."""
    out = dst.copy()
    lanes = lanes or 256 // max(dst.itemsize, src.itemsize)
    dblk, sblk, drep, srep = strides
    for r in range(repeats):
        for e in range(lanes):
            if lanes_on(r, e):
                i = lane_index(r, e, dblk, drep, 32 // dst.itemsize)
                j = lane_index(r, e, sblk, srep, 32 // src.itemsize)
                out[i] = reference(op, src[j:j + 1], scalar, out[i:i + 1])[0]
    return out


def bit_on(lo, hi):
    return lambda r, e: bool((lo >> e) & 1) if e < 64 else bool((hi >> (e - 64)) & 1)


@asc.jit
def scalar_level0_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, zf: asc.GlobalAddress,
                         xs: asc.GlobalAddress, zs: asc.GlobalAddress, s: float, repeat: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, L0)
    zg.set_global_buffer(z, 6 * L0)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, L0)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 2048, 6 * L0)
    asc.data_copy(a, xg, L0)
    asc.data_copy(c, zg, 6 * L0)
    # one instruction (adds) for the call forms: they share the lane loop, not the op
    asc.adds(c, a, s, mask=100, repeat_times=repeat, repeat_params=P(1, 2, 16, 16))
    asc.adds(c[L0:], a, 0.2, [LO, HI], 2, P())
    asc.set_vector_mask(HI, LO, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
    asc.adds(c[2 * L0:], a, 1.0, asc.MASK_PLACEHOLDER, 2, P(), is_set_mask=False)
    asc.set_mask_count()
    asc.adds(c[3 * L0:], a, -2.0, 300, 1, P())
    # the count form with is_set_mask=False: count is ignored, the register holds the element count
    asc.set_vector_mask(150, dtype=asc.float16, mode=asc.MaskMode.COUNTER)
    asc.adds(c[4 * L0:], a, 0.5, 1, False)
    asc.set_mask_norm()
    asc.reset_mask()
    asc.adds(c[5 * L0:], a, 3.0, 128, 0, P())
    asc.data_copy(zg, c, 6 * L0)
    # axpy float16 -> float32: 64 lanes a repeat, the source advancing half as fast
    zfg = asc.GlobalTensor()
    zfg.set_global_buffer(zf, L0)
    cf = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 16384, L0)
    asc.data_copy(cf, zfg, L0)
    asc.axpy(cf, a, s, [LO], repeat, P(1, 1, 8, 4))
    asc.data_copy(zfg, cf, L0)
    xsg = asc.GlobalTensor()
    zsg = asc.GlobalTensor()
    xsg.set_global_buffer(xs, L0)
    zsg.set_global_buffer(zs, L0)
    b = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 24576, L0)
    d = asc.LocalTensor(asc.int16, asc.TPosition.VECCALC, 26624, L0)
    asc.data_copy(b, xsg, L0)
    asc.data_copy(d, zsg, L0)
    asc.shift_right(d, b, 2, 128, repeat, P(2, 1, 16, 8))
    asc.data_copy(zsg, d, L0)


def test_level0_forms(rng, mode):
    s, repeat = np.float32(0.75), 3
    x = inputs(rng, "float16", L0)
    z = inputs(rng, "float16", 6 * L0)
    zf = inputs(rng, "float32", L0)
    xs = inputs(rng, "int16", L0)
    zs = inputs(rng, "int16", L0)
    want = z.copy()
    region = [want[k * L0:(k + 1) * L0] for k in range(6)]
    region[0][:] = level0_reference(asc.adds, s, region[0], x, lambda r, e: e < 100, repeat, (1, 2, 16, 16))
    region[1][:] = level0_reference(asc.adds, 0.2, region[1], x, bit_on(LO, HI), 2, (1, 1, 8, 8))
    region[2][:] = level0_reference(asc.adds, 1.0, region[2], x, bit_on(LO, HI), 2, (1, 1, 8, 8))
    region[3][:] = level0_reference(asc.adds, -2.0, region[3], x, lambda r, e: r * 128 + e < 300, 3, (1, 1, 8, 8))
    region[4][:] = level0_reference(asc.adds, 0.5, region[4], x, lambda r, e: r * 128 + e < 150, 2, (1, 1, 8, 8))
    wantf = level0_reference(asc.axpy, np.float16(s), zf, x, bit_on(LO, 0), repeat, (1, 1, 8, 4))
    wants = level0_reference(asc.shift_right, 2, zs, xs, lambda r, e: True, repeat, (2, 1, 16, 8))
    scalar_level0_kernel[1](x, z, zf, xs, zs, s, repeat, **mode)
    for k, name in enumerate(("int mask + strides", "bit mask", "register", "counter", "count form, register",
                              "repeat 0")):
        np.testing.assert_array_equal(bits(z[k * L0:(k + 1) * L0]), bits(want[k * L0:(k + 1) * L0]),
                                      err_msg=name)
    np.testing.assert_array_equal(bits(zf), bits(wantf), err_msg="axpy float16 -> float32")
    np.testing.assert_array_equal(zs, wants, err_msg="shift_right int16")


# --------------------------------------------------------------------------- misuse


@asc.jit
def int16_leaky_relu_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    asc.leaky_relu(a, a, 2, 256)


@asc.jit
def float_shift_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    asc.shift_left(a, a, 1, 256)


@asc.jit
def axpy_narrowing_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 256)
    asc.axpy(c, a, 2.0, 256)


@asc.jit
def tensor_scalar_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 256)
    asc.adds(a, a, a, 256)


@pytest.mark.parametrize("kernel, message", [
    (int16_leaky_relu_kernel, "leaky_relu does not support int16"),
    (float_shift_kernel, "shift_left does not support float32"),
    (axpy_narrowing_kernel, "axpy does not support float32 -> float16"),
    (tensor_scalar_kernel, "scalar must be a number"),
])
def test_compile_time_errors(kernel, message):
    with pytest.raises(errors.KernelTypeError, match=message):
        kernel[1](np.zeros(8, np.float16))


@asc.jit
def scalar_fault_kernel(case: int, n: int):
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.int16, asc.TPosition.VECOUT, 1024, 256)
    if case == 0:
        asc.adds(c, a, 1, n)
    elif case == 1:
        asc.adds(c, a[1:], 1, n)
    elif case == 2:
        asc.shift_right(c, a, 1, 128, n, P())
    else:
        asc.shift_left(c, a, n, 256)


@pytest.mark.parametrize("case, n, error, message", [
    (0, 257, errors.BoundsError, "dst: the instruction touches 257 elements"),
    (1, 8, errors.AlignmentError, "src starts at UB byte 2"),
    (2, 300, errors.ParamRangeError, "repeat_times 300"),
    (3, 17, errors.ParamRangeError, r"shift count 17 is out of range \[0, 16\]"),
    (3, -1, errors.ParamRangeError, r"shift count -1 is out of range"),
])
def test_run_time_faults(case, n, error, message):
    with pytest.raises(error, match=message):
        scalar_fault_kernel[1](case, n, debug=True)      # the same faults as compiled code, without compiling
