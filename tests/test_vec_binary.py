"""Binary vector instructions: every op and dtype in the count form, the level-0 forms, and misuse.

Kernels run several instructions per launch (each writing its own region of
the output) to keep the number of kernel specialisations, and so the Numba
compile time, small.  References are plain NumPy: float16 computed in float32
and rounded once, integers wrapping, results compared bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors

N = 256            # elements per operand tile
COUNT = 200        # count-form length: not a multiple of any repeat size

ARITH = (asc.add, asc.sub, asc.mul, asc.max, asc.min)
OPS = {
    "float16": ARITH + (asc.div, asc.add_relu, asc.sub_relu),
    "float32": ARITH + (asc.div, asc.add_relu, asc.sub_relu),
    "int16": ARITH + (asc.add_relu, asc.sub_relu, asc.bitwise_and, asc.bitwise_or),
    "int32": ARITH,
    "uint16": (asc.bitwise_and, asc.bitwise_or),
}
NP_OPS = {
    asc.add: np.add, asc.sub: np.subtract, asc.mul: np.multiply, asc.div: np.divide, asc.max: np.maximum,
    asc.min: np.minimum, asc.bitwise_and: np.bitwise_and, asc.bitwise_or: np.bitwise_or,
    asc.add_relu: lambda a, b: np.maximum(a + b, a.dtype.type(0)),
    asc.sub_relu: lambda a, b: np.maximum(a - b, a.dtype.type(0)),
}


def reference(op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One instruction in NumPy: float16 through float32 with one final rounding, integers wrap."""
    fn = NP_OPS[op]
    with np.errstate(all="ignore"):
        if a.dtype == np.float16:
            return fn(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
        return fn(a, b).astype(a.dtype)


def bits(x: np.ndarray) -> np.ndarray:
    return x.view(f"u{x.dtype.itemsize}")


def inputs(rng: np.random.Generator, dtype: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    if dtype.startswith("float"):
        a = rng.uniform(-8, 8, n).astype(dtype)
        b = rng.uniform(0.25, 4, n).astype(dtype) * rng.choice([-1, 1], n).astype(dtype)
        return a, b
    info = np.iinfo(dtype)
    return (rng.integers(info.min, info.max, n, endpoint=True).astype(dtype),
            rng.integers(info.min, info.max, n, endpoint=True).astype(dtype))


# --------------------------------------------------------------------------- count form


@asc.jit
def _count_section(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, count: int,
                   ops: asc.ConstExpr):
    """Every op of ``ops`` on the same inputs; op i writes elements [i*N, i*N + count) of z."""
    total = len(ops) * N
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, N)
    yg.set_global_buffer(y, N)
    zg.set_global_buffer(z, total)
    a = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, N)
    b = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 4096, N)
    c = asc.LocalTensor(x.dtype, asc.TPosition.VECOUT, 8192, total)
    asc.data_copy(a, xg, N)
    asc.data_copy(b, yg, N)
    asc.data_copy(c, zg, total)
    for i in asc.static_range(len(ops)):
        ops[i](c[i * N:], a, b, count)
    asc.data_copy(zg, c, total)


@asc.jit
def binary_count_kernel(xh: asc.GlobalAddress, yh: asc.GlobalAddress, zh: asc.GlobalAddress,
                        xf: asc.GlobalAddress, yf: asc.GlobalAddress, zf: asc.GlobalAddress,
                        xs: asc.GlobalAddress, ys: asc.GlobalAddress, zs: asc.GlobalAddress,
                        xi: asc.GlobalAddress, yi: asc.GlobalAddress, zi: asc.GlobalAddress,
                        xu: asc.GlobalAddress, yu: asc.GlobalAddress, zu: asc.GlobalAddress, count: int):
    _count_section(xh, yh, zh, count, OPS["float16"])
    _count_section(xf, yf, zf, count, OPS["float32"])
    _count_section(xs, ys, zs, count, OPS["int16"])
    _count_section(xi, yi, zi, count, OPS["int32"])
    _count_section(xu, yu, zu, count, OPS["uint16"])


def test_count_form_every_op_and_dtype(rng):
    args, expected = [], []
    for dtype, ops in OPS.items():
        a, b = inputs(rng, dtype, N)
        z = inputs(rng, dtype, len(ops) * N)[0]          # background: lanes past count keep it
        want = z.copy()
        for i, op in enumerate(ops):
            want[i * N:i * N + COUNT] = reference(op, a[:COUNT], b[:COUNT])
        args += [a, b, z]
        expected.append((dtype, ops, z, want))
    binary_count_kernel[1](*args, COUNT, debug=True)    # debug mode: no kernel compile for 32 instructions
    for dtype, ops, got, want in expected:
        for i, op in enumerate(ops):
            np.testing.assert_array_equal(bits(got[i * N:(i + 1) * N]), bits(want[i * N:(i + 1) * N]),
                                          err_msg=f"{op.__name__} {dtype}")


# --------------------------------------------------------------------------- level-0 forms

L0 = 1024          # elements per level-0 operand
P = asc.BinaryRepeatParams
LO, HI = 0xF0F0_0000_FFFF_0001, 0x8000_0000_0000_00FF     # a bit mask: lanes 0, 16-31, 52-55, 60-63, 64-71, 127


def lane_index(r, e, blk, rep, epb):
    """Element of lane ``e`` in repeat ``r`` (strides in 32-byte blocks), written out independently."""
    return r * rep * epb + (e // epb) * blk * epb + e % epb


def level0_reference(op, dst, a, b, lanes_on, repeats, strides):
    """``dst`` after a level-0 instruction; ``lanes_on(r, e)`` says whether lane e of repeat r runs."""
    out = dst.copy()
    epb = 32 // dst.itemsize
    lanes = 256 // dst.itemsize
    (db, ab, bb), (dr, ar, br) = strides[:3], strides[3:]
    for r in range(repeats):
        for e in range(lanes):
            if lanes_on(r, e):
                i, j, k = lane_index(r, e, db, dr, epb), lane_index(r, e, ab, ar, epb), lane_index(r, e, bb, br, epb)
                out[i] = reference(op, a[j:j + 1], b[k:k + 1])[0]
    return out


@asc.jit
def binary_level0_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                         xf: asc.GlobalAddress, yf: asc.GlobalAddress, zf: asc.GlobalAddress, repeat: int):
    """The level-0 call forms; one instruction (add) throughout: the forms share the lane loop, not the op."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, L0)
    yg.set_global_buffer(y, L0)
    zg.set_global_buffer(z, 6 * L0)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, L0)
    b = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 2048, L0)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 4096, 6 * L0)
    asc.data_copy(a, xg, L0)
    asc.data_copy(b, yg, L0)
    asc.data_copy(c, zg, 6 * L0)
    # continuous mask, strides other than the defaults, keywords
    asc.add(c, a, b, mask=100, repeat_times=repeat, repeat_params=P(1, 2, 1, 16, 16, 8))
    # bit mask, positional
    asc.add(c[L0:], a, b, [LO, HI], 2, P())
    # the mask register, normal mode
    asc.set_vector_mask(HI, LO, dtype=asc.float16, mode=asc.MaskMode.NORMAL)
    asc.add(c[2 * L0:], a, b, asc.MASK_PLACEHOLDER, 2, P(), is_set_mask=False)
    asc.reset_mask()
    # counter mode: the call's mask, then the register, is the element count; repeat_times is ignored
    asc.set_mask_count()
    asc.add(c[3 * L0:], a, b, 300, 1, P())
    asc.set_vector_mask(200, dtype=asc.float16, mode=asc.MaskMode.COUNTER)
    asc.add(c[4 * L0:], a, b, asc.MASK_PLACEHOLDER, 1, P(1, 1, 1, 16, 8, 8), False)
    asc.set_mask_norm()
    asc.reset_mask()
    # repeat_times 0 does nothing
    asc.add(c[5 * L0:], a, b, 128, 0, P())
    asc.data_copy(zg, c, 6 * L0)
    # float32: 64 lanes, a one-word bit mask, and a register left all-ones by reset_mask
    xfg = asc.GlobalTensor()
    yfg = asc.GlobalTensor()
    zfg = asc.GlobalTensor()
    xfg.set_global_buffer(xf, L0)
    yfg.set_global_buffer(yf, L0)
    zfg.set_global_buffer(zf, 2 * L0)
    af = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, L0)
    bf = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 4096, L0)
    cf = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 8192, 2 * L0)
    asc.data_copy(af, xfg, L0)
    asc.data_copy(bf, yfg, L0)
    asc.data_copy(cf, zfg, 2 * L0)
    asc.add(cf, af, bf, [LO], 3, P(2, 1, 1, 16, 8, 8))
    asc.add(cf[L0:], af, bf, 0, 2, P(), is_set_mask=False)
    asc.data_copy(zfg, cf, 2 * L0)


def test_level0_forms(rng, mode):
    repeat = 3
    a, b = inputs(rng, "float16", L0)
    z = inputs(rng, "float16", 6 * L0)[0]
    af, bf = inputs(rng, "float32", L0)
    zf = inputs(rng, "float32", 2 * L0)[0]
    want = z.copy()

    def on_bits(r, e):
        return bool((LO >> e) & 1) if e < 64 else bool((HI >> (e - 64)) & 1)

    dense = (1, 1, 1, 8, 8, 8)
    region = [want[k * L0:(k + 1) * L0] for k in range(6)]
    region[0][:] = level0_reference(asc.add, region[0], a, b, lambda r, e: e < 100, repeat, (1, 2, 1, 16, 16, 8))
    region[1][:] = level0_reference(asc.add, region[1], a, b, on_bits, 2, dense)
    region[2][:] = level0_reference(asc.add, region[2], a, b, on_bits, 2, dense)
    region[3][:] = level0_reference(asc.add, region[3], a, b, lambda r, e: r * 128 + e < 300, 3, dense)
    region[4][:] = level0_reference(asc.add, region[4], a, b, lambda r, e: r * 128 + e < 200, 2,
                                    (1, 1, 1, 16, 8, 8))
    wantf = zf.copy()
    wantf[:L0] = level0_reference(asc.add, wantf[:L0], af, bf, lambda r, e: bool((LO >> e) & 1), 3,
                                  (2, 1, 1, 16, 8, 8))
    wantf[L0:] = level0_reference(asc.add, wantf[L0:], af, bf, lambda r, e: True, 2, dense)
    binary_level0_kernel[1](a, b, z, af, bf, zf, repeat, **mode)
    for k, name in enumerate(("int mask + strides", "bit mask", "register", "counter", "counter register",
                              "repeat 0")):
        np.testing.assert_array_equal(bits(z[k * L0:(k + 1) * L0]), bits(want[k * L0:(k + 1) * L0]),
                                      err_msg=name)
    np.testing.assert_array_equal(bits(zf), bits(wantf))


@asc.jit
def block_stride_zero_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress):
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, L0)
    zg.set_global_buffer(z, 256)
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, L0)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 2048, 256)
    block = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 4096, 16)
    asc.data_copy(a, xg, L0)
    asc.data_copy(c, zg, 256)
    asc.data_copy(block, xg, 16)
    # dst_rep_stride 0 with dst as src1: each repeat adds into the same 128 lanes, in order
    asc.add(c, a, c, 128, 8, P(1, 1, 1, 0, 8, 0))
    # src0_blk_stride 0: every DataBlock of the repeat reads the first one (a 16-element tensor suffices)
    asc.add(c[128:], block, c[128:], 128, 1, P(1, 0, 1, 8, 0, 8))
    asc.data_copy(zg, c, 256)


def test_zero_strides(rng):
    x = rng.integers(-8, 8, L0).astype(np.float16)
    z = rng.integers(-8, 8, 256).astype(np.float16)
    want = z.astype(np.float32)
    want[:128] += x.astype(np.float32).reshape(8, 128).sum(axis=0)     # small integers: every sum is exact
    want[128:] += np.tile(x[:16].astype(np.float32), 8)
    block_stride_zero_kernel[1](x, z, debug=True)
    np.testing.assert_array_equal(z, want.astype(np.float16))


# --------------------------------------------------------------------------- misuse


@asc.jit
def int8_add_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.int8, asc.TPosition.VECIN, 0, 256)
    asc.add(a, a, a, 256)


@asc.jit
def int16_div_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 256)
    asc.div(a, a, a, 256)


@asc.jit
def mixed_dtype_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 1024, 256)
    asc.add(b, a, a, 256)


@asc.jit
def l1_operand_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    asc.add(a, a, a, 256)


@pytest.mark.parametrize("kernel, message", [
    (int8_add_kernel, "add does not support int8"),
    (int16_div_kernel, "div does not support int16"),
    (mixed_dtype_kernel, "src0 is float16 but dst is float32"),
    (l1_operand_kernel, "position A1"),
])
def test_compile_time_errors(kernel, message):
    with pytest.raises(errors.KernelTypeError, match=message):
        kernel[1](np.zeros(8, np.float16))


@asc.jit
def binary_fault_kernel(case: int, n: int):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    b = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 512, 256)
    c = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 1024, 256)
    if case == 0:
        asc.add(c, a, b, n)
    elif case == 1:
        asc.add(c, a[1:], b, n)
    elif case == 2:
        asc.add(c, a, b, 128, n, P())
    elif case == 3:
        asc.add(c, a, b, 128, 1, P(src0_blk_stride=n))
    else:
        asc.add(c, a, b, 128, 1, P(dst_blk_stride=0))


@pytest.mark.parametrize("case, n, error, message", [
    (0, 257, errors.BoundsError, "touches 257 elements of a tensor that holds only 256"),
    (1, 100, errors.AlignmentError, "src0 starts at UB byte 2"),
    (2, 300, errors.ParamRangeError, "repeat_times 300"),
    (2, 3, errors.BoundsError, "dst: the instruction touches 384"),
    (3, 256, errors.ParamRangeError, "src0_blk_stride = 256"),
    (4, 0, errors.ParamRangeError, "dst_blk_stride is 0"),
])
def test_run_time_faults(case, n, error, message):
    with pytest.raises(error, match=message):
        binary_fault_kernel[1](case, n, debug=True)      # the same faults as compiled code, without compiling


@asc.jit
def three_word_mask_kernel(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, 256)
    asc.add(a, a, a, [1, 2, 3], 1, P())


def test_bit_mask_of_three_words_is_rejected():
    with pytest.raises(errors.KernelTypeError, match="one or two uint64 words"):
        three_word_mask_kernel[1](np.zeros(8, np.float16))
