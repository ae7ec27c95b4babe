"""Unary vector instructions: every op and dtype in the count form, the level-0 forms, and misuse.

References are NumPy: abs, relu, sqrt and reciprocal must match bit for bit
(they are correctly rounded); exp, ln and rsqrt, which the hardware does not
round correctly either, may differ by one unit in the last place.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 256
COUNT = 200
FLOAT_OPS = (asc.abs, asc.exp, asc.ln, asc.sqrt, asc.rsqrt, asc.reciprocal, asc.relu)
OPS = {
    "float16": FLOAT_OPS,
    "float32": FLOAT_OPS,
    "int32": (asc.relu,),
    "int16": (asc.bitwise_not,),
    "uint16": (asc.bitwise_not,),
}
TRANSCENDENTAL = (asc.exp, asc.ln, asc.rsqrt)


def _relu(x):
    return np.where((x > 0) | np.isnan(x), x, x.dtype.type(0)) if x.dtype.kind == "f" else np.maximum(x, 0)


NP_OPS = {
    asc.abs: np.abs, asc.exp: np.exp, asc.ln: np.log, asc.sqrt: np.sqrt, asc.rsqrt: lambda x: 1 / np.sqrt(x),
    asc.reciprocal: lambda x: 1 / x, asc.relu: _relu, asc.bitwise_not: np.invert,
}


def reference(op, x: np.ndarray) -> np.ndarray:
    """Computed in float64 (exact or nearly so for these functions) and rounded once."""
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f":
            return NP_OPS[op](x.astype(np.float64)).astype(x.dtype)
        return NP_OPS[op](x).astype(x.dtype)


def assert_close(got: np.ndarray, want: np.ndarray, ulps: int = 0, msg: str = "") -> None:
    """Same NaN positions; elsewhere bit patterns at most ``ulps`` apart (0: identical)."""
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=msg)
        return
    nan = np.isnan(got)
    np.testing.assert_array_equal(nan, np.isnan(want), err_msg=f"{msg}: NaN positions")
    signed = f"i{got.dtype.itemsize}"
    diff = np.abs(got[~nan].view(signed).astype(np.int64) - want[~nan].view(signed).astype(np.int64))
    assert diff.max(initial=0) <= ulps, f"{msg}: {int(diff.max())} ulps apart"


def inputs(rng: np.random.Generator, dtype: str, n: int) -> np.ndarray:
    if dtype.startswith("float"):
        x = rng.uniform(-8, 8, n).astype(dtype)
        x[:8] = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-3]
        return x
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
        ops[i](c[i * N:], a, count)
    asc.data_copy(zg, c, total)


@asc.jit
def unary_count_kernel(xh: asc.GlobalAddress, zh: asc.GlobalAddress, xf: asc.GlobalAddress,
                       zf: asc.GlobalAddress, xi: asc.GlobalAddress, zi: asc.GlobalAddress,
                       xs: asc.GlobalAddress, zs: asc.GlobalAddress, xu: asc.GlobalAddress,
                       zu: asc.GlobalAddress, count: int):
    _count_section(xh, zh, count, OPS["float16"])
    _count_section(xf, zf, count, OPS["float32"])
    _count_section(xi, zi, count, OPS["int32"])
    _count_section(xs, zs, count, OPS["int16"])
    _count_section(xu, zu, count, OPS["uint16"])


def test_count_form_every_op_and_dtype(rng):
    args, expected = [], []
    for dtype, ops in OPS.items():
        x = inputs(rng, dtype, N)
        z = inputs(rng, dtype, len(ops) * N)
        want = z.copy()
        for i, op in enumerate(ops):
            want[i * N:i * N + COUNT] = reference(op, x[:COUNT])
        args += [x, z]
        expected.append((dtype, ops, z, want))
    unary_count_kernel[1](*args, COUNT, debug=True)       # debug mode: no kernel compile for 17 instructions
    for dtype, ops, got, want in expected:
        for i, op in enumerate(ops):
            assert_close(got[i * N:(i + 1) * N], want[i * N:(i + 1) * N], 1 if op in TRANSCENDENTAL else 0,
                         f"{op.__name__} {dtype}")


# --------------------------------------------------------------------------- level-0 forms

L0 = 1024
P = asc.UnaryRepeatParams
LO, HI = 0xF0F0_0000_FFFF_0001, 0x8000_0000_0000_00FF


def lane_index(r, e, blk, rep, epb):
    return r * rep * epb + (e // epb) * blk * epb + e % epb


def level0_reference(op, dst, src, lanes_on, repeats, strides):
    out = dst.copy()
    epb, lanes = 32 // dst.itemsize, 256 // dst.itemsize
    dblk, sblk, drep, srep = strides
    for r in range(repeats):
        for e in range(lanes):
            if lanes_on(r, e):
                j = lane_index(r, e, sblk, srep, epb)
                out[lane_index(r, e, dblk, drep, epb)] = reference(op, src[j:j + 1])[0]
    return out


def bit_on(lo, hi):
    return lambda r, e: bool((lo >> e) & 1) if e < 64 else bool((hi >> (e - 64)) & 1)


@asc.jit
def unary_level0_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, xs: asc.GlobalAddress,
                        zs: asc.GlobalAddress, repeat: int):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, L0)
    zg.set_global_buffer(z, 5 * L0)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, L0)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 2048, 5 * L0)
    asc.data_copy(a, xg, L0)
    asc.data_copy(c, zg, 5 * L0)
    # one instruction (exp) for every form: the forms share the lane loop, not the op
    asc.exp(c, a, mask=100, repeat_times=repeat, repeat_params=P(1, 2, 16, 16))
    asc.exp(c[L0:], a, [LO, HI], 2, P())
    asc.set_vector_mask(HI, LO, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
    asc.exp(c[2 * L0:], a, asc.MASK_PLACEHOLDER, 2, P(), is_set_mask=False)
    asc.set_mask_count()
    asc.exp(c[3 * L0:], a, 300, 1, P())
    asc.set_mask_norm()
    asc.reset_mask()
    asc.exp(c[4 * L0:], a, 128, 0, P())
    asc.data_copy(zg, c, 5 * L0)
    xsg = asc.GlobalTensor()
    zsg = asc.GlobalTensor()
    xsg.set_global_buffer(xs, L0)
    zsg.set_global_buffer(zs, L0)
    b = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 16384, L0)
    d = asc.LocalTensor(asc.int16, asc.TPosition.VECCALC, 18432, L0)
    asc.data_copy(b, xsg, L0)
    asc.data_copy(d, zsg, L0)
    asc.bitwise_not(d, b, [LO, HI], 3, P(2, 1, 16, 8))
    asc.data_copy(zsg, d, L0)


def test_level0_forms(rng, mode):
    repeat = 3
    x = inputs(rng, "float16", L0)
    z = inputs(rng, "float16", 5 * L0)
    xs = inputs(rng, "int16", L0)
    zs = inputs(rng, "int16", L0)
    want = z.copy()
    region = [want[k * L0:(k + 1) * L0] for k in range(5)]
    region[0][:] = level0_reference(asc.exp, region[0], x, lambda r, e: e < 100, repeat, (1, 2, 16, 16))
    region[1][:] = level0_reference(asc.exp, region[1], x, bit_on(LO, HI), 2, (1, 1, 8, 8))
    region[2][:] = level0_reference(asc.exp, region[2], x, bit_on(LO, HI), 2, (1, 1, 8, 8))
    region[3][:] = level0_reference(asc.exp, region[3], x, lambda r, e: r * 128 + e < 300, 3, (1, 1, 8, 8))
    wants = level0_reference(asc.bitwise_not, zs, xs, bit_on(LO, HI), 3, (2, 1, 16, 8))
    unary_level0_kernel[1](x, z, xs, zs, repeat, **mode)
    for k, name in enumerate(("int mask + strides", "bit mask", "register", "counter", "repeat 0")):
        assert_close(z[k * L0:(k + 1) * L0], want[k * L0:(k + 1) * L0], 1, name)
    np.testing.assert_array_equal(zs, wants)


# --------------------------------------------------------------------------- misuse


@asc.jit
def int16_exp_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    asc.exp(a, a, 256)


@asc.jit
def float16_not_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    asc.bitwise_not(a, a, 256)


@asc.jit
def int16_relu_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    asc.relu(a, a, 128, 1, P())


@asc.jit
def count_with_is_set_mask_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    asc.abs(a, a, 256, is_set_mask=False)


@pytest.mark.parametrize("kernel, error, message", [
    (int16_exp_kernel, errors.KernelTypeError, "exp does not support int16"),
    (float16_not_kernel, errors.KernelTypeError, "bitwise_not does not support float16"),
    (int16_relu_kernel, errors.KernelTypeError, "relu does not support int16"),
    (count_with_is_set_mask_kernel, errors.KernelCompileError, "unexpected keyword argument 'is_set_mask'"),
])
def test_compile_time_errors(kernel, error, message):
    with pytest.raises(error, match=message):
        kernel[1](np.zeros(8, np.float16))


@asc.jit
def unary_fault_kernel(case: int, n: int):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 256)
    if case == 0:
        asc.exp(c, a, n)
    elif case == 1:
        asc.exp(c[1:], a, n)
    elif case == 2:
        asc.exp(c, a, 128, n, P())
    else:
        asc.exp(c, a, 128, 1, P(src_blk_stride=n))


@pytest.mark.parametrize("case, n, error, message", [
    (0, 300, errors.BoundsError, "dst: the instruction touches 300 elements of a tensor that holds only 256"),
    (1, 8, errors.AlignmentError, "dst starts at UB byte 1026"),
    (2, 300, errors.ParamRangeError, "repeat_times 300"),
    (3, 65536, errors.ParamRangeError, "src_blk_stride = 65536 is out of range"),
])
def test_run_time_faults(case, n, error, message):
    with pytest.raises(error, match=message):
        unary_fault_kernel[1](case, n, debug=True)       # the same faults as compiled code, without compiling
