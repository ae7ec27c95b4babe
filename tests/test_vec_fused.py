"""Compound vector instructions (fused_mul_add, ..., cast_deq) against NumPy models written from the Ascend C pages."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from level0_layout import level0_elements

N = 256                                    # elements of each operand
OPS = (asc.fused_mul_add, asc.fused_mul_add_relu, asc.mul_add_dst, asc.add_relu_cast, asc.sub_relu_cast,
       asc.mul_cast, asc.add_deq_relu)
BITS = [0xF0F0_0000_FFFF_0001, 0x8000_0000_0000_00FF]
BITS_LOW = BITS[:1]
DEQ_SCALE = 0.0999755859375                # a float16 (0x2E66)
VDEQ_SCALES = [0.123456 * (1 + j) for j in range(16)]
VDEQ_OFFSETS = [-20 - j for j in range(16)]


@asc.jit
def fused_run(x0: asc.GlobalAddress, x1: asc.GlobalAddress, d: asc.GlobalAddress, out: asc.GlobalAddress,
              out2: asc.GlobalAddress, which: asc.ConstExpr[int], count: int):
    """``OPS[which]``: the count form into ``out``, a strided bit-mask level-0 form into ``out2``."""
    s_t = x0.dtype
    d_t = d.dtype
    g0 = asc.GlobalTensor()
    g0.set_global_buffer(x0, N)
    g1 = asc.GlobalTensor()
    g1.set_global_buffer(x1, N)
    gd = asc.GlobalTensor()
    gd.set_global_buffer(d, N)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, N)
    go2 = asc.GlobalTensor()
    go2.set_global_buffer(out2, N)
    s0 = asc.LocalTensor(s_t, asc.TPosition.VECIN, 0, N)
    s1 = asc.LocalTensor(s_t, asc.TPosition.VECIN, 1024, N)
    dst = asc.LocalTensor(d_t, asc.TPosition.VECOUT, 2048, N)
    dst2 = asc.LocalTensor(d_t, asc.TPosition.VECOUT, 3072, N)
    asc.data_copy(s0, g0, N)
    asc.data_copy(s1, g1, N)
    asc.data_copy(dst, gd, N)
    asc.data_copy(dst2, gd, N)
    asc.set_deq_scale(DEQ_SCALE)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    lanes = 256 // max(s_t.sizeof(), d_t.sizeof())
    mask = BITS if lanes == 128 else BITS_LOW
    params = asc.BinaryRepeatParams(1, 1, 2, lanes * d_t.sizeof() // 32, lanes * s_t.sizeof() // 32, 0)
    OPS[which](dst, s0, s1, count)
    OPS[which](dst2, s0, s1, mask, 2, params)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(go, dst, N)
    asc.data_copy(go2, dst2, N)


# --------------------------------------------------------------------------- NumPy models, one lane each

def _rint_sat(x, lo, hi):
    x = np.asarray(x, np.float64)
    r = np.clip(np.rint(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo)), lo, hi)
    return r.astype(np.int64)


def _f16_sat(x):
    """float -> float16, nearest even, overflow to the largest finite value of the sign, NaN to 0."""
    with np.errstate(over="ignore", invalid="ignore"):
        h = np.asarray(x).astype(np.float16)
    h = np.where(np.isinf(h), np.sign(h) * np.float16(65504), h)
    return np.where(np.isnan(h), np.float16(0), h).astype(np.float16)


def _relu(x):
    return np.where(x > 0, x, np.zeros_like(x)) if x.dtype.kind != "f" else np.where((x > 0) | np.isnan(x), x, 0)


def model(which, a, b, d):
    """The element-wise result of ``OPS[which]`` (two roundings for the multiply-adds: see isa/vec_fused.py)."""
    name = OPS[which].__name__
    with np.errstate(over="ignore", invalid="ignore"):
        if name in ("fused_mul_add", "fused_mul_add_relu"):
            r = (a * d).astype(a.dtype) + b                      # NumPy rounds each float16/float32 op
            return _relu(r).astype(d.dtype) if name.endswith("relu") else r
        if name == "mul_add_dst":
            if d.dtype != a.dtype:                              # float16 sources, float32 dst
                return a.astype(np.float32) * b.astype(np.float32) + d
            return (a * b).astype(a.dtype) + d
        if name in ("add_relu_cast", "sub_relu_cast"):
            s = (a + b) if name == "add_relu_cast" else (a - b)   # rounded (floats) / wrapped (int16)
            s = _relu(s)
            if d.dtype == np.float16:
                return _f16_sat(s)
            return _rint_sat(s, -128, 127).astype(d.dtype)
        if name == "mul_cast":
            p = (a * b).astype(np.float16)
            lo, hi = (-128, 127) if d.dtype == np.int8 else (0, 255)
            return _rint_sat(p, lo, hi).astype(d.dtype)
        # add_deq_relu: the wrapped int32 sum times the float16 scale, rounded once to float16, then the ReLU
        s = (a.astype(np.int64) + b).astype(np.int32).astype(np.float64)
        return _relu(_f16_sat(s * DEQ_SCALE).astype(np.float16))


def bits_of(x):
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[x.itemsize])


CASES = [(0, np.float16, np.float16), (0, np.float32, np.float32), (1, np.float16, np.float16),
         (1, np.float32, np.float32), (2, np.float16, np.float16), (2, np.float32, np.float32),
         (2, np.float16, np.float32), (3, np.float16, np.int8), (3, np.float32, np.float16), (3, np.int16, np.int8),
         (4, np.float16, np.int8), (4, np.float32, np.float16), (4, np.int16, np.int8), (5, np.float16, np.int8),
         (5, np.float16, np.uint8), (6, np.int32, np.float16)]


def inputs(rng, s, d):
    if s == np.int16:
        a, b = (rng.integers(-300, 300, N).astype(s) for _ in range(2))
        a[:2] = [32767, -32768]                                  # the int16 sum wraps
        b[:2] = [1, -1]
    elif s == np.int32:
        a, b = (rng.integers(-800_000, 800_000, N).astype(s) for _ in range(2))
        a[:2] = [2**31 - 1, -2**31]
        b[:2] = [1, -1]
    else:
        scale = 40 if d in (np.int8, np.uint8) else 4
        a, b = (rng.uniform(-scale, scale, N).astype(s) for _ in range(2))
        if s == np.float32 and d == np.float16:
            a[:3] = [7e4, 1e6, np.nan]                         # saturates to 65504; NaN converts to 0
    dst = rng.uniform(-3, 3, N).astype(d) if np.dtype(d).kind == "f" else rng.integers(-5, 5, N).astype(d)
    return a, b, dst


@pytest.mark.parametrize("which, s, d", CASES, ids=[f"{OPS[w].__name__}-{np.dtype(s).name}-{np.dtype(d).name}"
                                                    for w, s, d in CASES])
def test_count_and_level0_forms_match_numpy(which, s, d, rng):
    a, b, dst = inputs(rng, s, d)
    count = N - 32
    out = np.zeros(N, d)
    out2 = np.zeros(N, d)
    fused_run[1](a, b, dst, out, out2, which, count)

    want = dst.copy()
    want[:count] = model(which, a[:count], b[:count], dst[:count])
    np.testing.assert_array_equal(bits_of(out), bits_of(want.astype(d)))

    ss, ds = np.dtype(s).itemsize, np.dtype(d).itemsize
    lanes = 256 // max(ss, ds)
    bit = (lambda e: (BITS[e // 64] >> (e % 64)) & 1 == 1) if lanes == 128 else (lambda e: (BITS[0] >> e) & 1 == 1)
    i0 = level0_elements(2, lanes, bit, 1, lanes * ss // 32, 32 // ss)
    i1 = level0_elements(2, lanes, bit, 2, 0, 32 // ss)
    idst = level0_elements(2, lanes, bit, 1, lanes * ds // 32, 32 // ds)
    want2 = dst.copy()
    want2[idst] = model(which, a[i0], b[i1], dst[idst])
    np.testing.assert_array_equal(bits_of(out2), bits_of(want2.astype(d)))


def test_debug_mode_agrees(rng):
    for which, s, d in [(0, np.float16, np.float16), (3, np.float32, np.float16), (6, np.int32, np.float16)]:
        a, b, dst = inputs(rng, s, d)
        got = [np.zeros(N, d) for _ in range(4)]
        fused_run[1](a, b, dst, got[0], got[1], which, 200)
        fused_run[1](a, b, dst, got[2], got[3], which, 200, debug=True)
        np.testing.assert_array_equal(bits_of(got[0]), bits_of(got[2]))
        np.testing.assert_array_equal(bits_of(got[1]), bits_of(got[3]))


def test_fused_mul_add_rounds_the_product_first():
    """float16: 1.0009765625 * 1.0009765625 = 1 + 2**-9 + 2**-20; minus (1 + 2**-9) is 2**-20 exactly only with
    an unrounded product.  Rounded first, as the separate instructions would, the product is 1 + 2**-9 and the
    result 0."""
    a = np.full(N, 1.0009765625, np.float16)
    b = np.full(N, -(1 + 2**-9), np.float16)
    d = np.full(N, 1.0009765625, np.float16)
    out = np.zeros(N, np.float16)
    fused_run[1](a, b, d, out, np.zeros(N, np.float16), 0, N)
    assert (out == 0).all()


# --------------------------------------------------------------------------- cast_deq and set_deq_scale

@asc.jit
def deq_run(x: asc.GlobalAddress, out: asc.GlobalAddress, vec: asc.ConstExpr[bool], half: asc.ConstExpr[bool],
            scale: float, offset: int, sign: asc.ConstExpr[bool], count: int):
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x, N)
    go = asc.GlobalTensor()
    go.set_global_buffer(out, 2 * N)
    src = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, N)
    dst = asc.LocalTensor(out.dtype, asc.TPosition.VECOUT, 1024, 2 * N)
    table = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, 2048, 16)
    asc.data_copy(src, gx, N)
    asc.data_copy(dst, go, 2 * N)
    if vec:
        info = asc.VdeqInfo(VDEQ_SCALES, VDEQ_OFFSETS, [sign] * 16)
        asc.set_deq_scale(table, info)
    else:
        asc.set_deq_scale(scale, offset, sign)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.cast_deq(dst, src, count, is_vec_deq=vec, half_block=half)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(go, dst, 2 * N)


def ref_deq(x, scale, offset, signed):
    m = np.float32(scale).view(np.uint32) & np.uint32(0xFFFFE000)       # the register's (1, 8, 10) scale
    v = x.astype(np.float64) * float(m.view(np.float32)) + offset
    lo, hi = (-128, 127) if signed else (0, 255)
    return _rint_sat(v, lo, hi)


@pytest.mark.parametrize("vec", [False, True])
@pytest.mark.parametrize("half", [False, True])
@pytest.mark.parametrize("dtype, sign", [(np.int8, True), (np.uint8, False)])
def test_cast_deq(vec, half, dtype, sign, rng, mode):
    x = rng.integers(-3000, 3000, N).astype(np.int16)
    x[:4] = [32767, -32768, 5, -5]
    out = np.full(2 * N, 77, dtype)
    scale, offset, count = 0.123456, -20, N - 16
    deq_run[1](x, out, vec, half, scale, offset, sign, count, **mode)
    want = np.full(2 * N, 77, dtype)
    i = np.arange(count)
    pos = (i // 16) * 32 + (16 if half else 0) + i % 16
    if vec:
        j = i % 16                                               # the 16 configurations repeat per block
        vals = np.array([ref_deq(x[k:k + 1], VDEQ_SCALES[j[k]], VDEQ_OFFSETS[j[k]], sign)[0] for k in range(count)])
    else:
        vals = ref_deq(x[:count], scale, offset, sign)
    want[pos] = vals.astype(dtype)
    np.testing.assert_array_equal(out, want)


# --------------------------------------------------------------------------- broken kernels

@asc.jit
def int16_fma(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.int16, asc.TPosition.VECCALC, 0, 128)
    asc.fused_mul_add(t, t, t, 128)


@asc.jit
def mixed_sources(x: asc.GlobalAddress):
    a = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 0, 128)
    b = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 512, 128)
    asc.add_relu_cast(a, b, a, 128)


@asc.jit
def vdeq_of_int32(x: asc.GlobalAddress):
    t = asc.LocalTensor(asc.int32, asc.TPosition.VECCALC, 0, 32)
    asc.set_deq_scale(t, asc.VdeqInfo())


@pytest.mark.parametrize("kernel, message", [
    (int16_fma, r"fused_mul_add does not take int16 -> int16 on this platform \(it takes float16 -> float16, "
                r"float32 -> float32\)"),
    (mixed_sources, r"add_relu_cast: src0 is float32 but src1 is float16"),
    (vdeq_of_int32, r"vdeq must be a uint64 LocalTensor, got int32"),
])
def test_wrong_types_are_compile_errors(kernel, message):
    with pytest.raises(errors.KernelTypeError, match=message):
        kernel[1](np.zeros(8, np.float32))


@asc.jit
def deq_too_small(x: asc.GlobalAddress, out: asc.GlobalAddress, n: int):
    """The usual mistake: an int8 dst of 256 elements for ``n`` = 256 results, which fill half of each block."""
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x, N)
    src = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, N)
    dst = asc.LocalTensor(asc.int8, asc.TPosition.VECOUT, 1024, 256)
    asc.data_copy(src, gx, N)
    asc.set_deq_scale(1.0, 0, True)
    asc.cast_deq(dst, src, n, False, True)


@asc.jit
def fma_misaligned(x: asc.GlobalAddress, count: int, off: int):
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 256)
    asc.duplicate(t, 1.0, 256)
    asc.fused_mul_add(t[off:], t, t, count)


@asc.jit
def vdeq_short(x: asc.GlobalAddress, n: int):
    t = asc.LocalTensor(asc.uint64, asc.TPosition.VECCALC, 0, 32)
    asc.set_deq_scale(t[32 - n:], asc.VdeqInfo())


def test_runtime_faults_name_the_rule():
    x = np.zeros(N, np.int16)
    with pytest.raises(errors.BoundsError, match="dst: the instruction touches 512 elements of a tensor that holds only 256"):
        deq_too_small[1](x, np.zeros(N, np.int8), 256)
    deq_too_small[1](x, np.zeros(N, np.int8), 128)              # 128 results: 8 DataBlocks, 256 bytes: fine
    with pytest.raises(errors.BoundsError, match="touches 250 elements of a tensor that holds only 248"):
        fma_misaligned[1](x, 250, 8)
    with pytest.raises(errors.AlignmentError, match="not 32-byte aligned"):
        fma_misaligned[1](x, 16, 4)
    fma_misaligned[1](x, 248, 8)
    with pytest.raises(errors.BoundsError, match="vdeq holds 8 uint64 elements; the table needs 16"):
        vdeq_short[1](x, 8)
    vdeq_short[1](x, 16)


def test_a_correct_kernel_passes_the_full_checks(rng):
    a, b, dst = inputs(rng, np.float16, np.float16)
    out = np.zeros(N, np.float16)
    fused_run[1](a, b, dst, out, np.zeros(N, np.float16), 0, N, check="full")
    np.testing.assert_array_equal(bits_of(out), bits_of(model(0, a, b, dst)))
