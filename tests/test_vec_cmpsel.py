"""compare / compare_scalar / CMPMASK / select against a NumPy model of the documented behaviour."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import AlignmentError, BoundsError, KernelTypeError

N = 512           # source elements
NS = 128          # selection-mask bytes (1024 bits)
NB = 256          # compare-result bytes
BITS = [0x00FF00F0FFFF0F0F, 0x8000000000000001]   # a level-0 bit mask (mask0 only for 32-bit types)


# --------------------------------------------------------------------------- NumPy model

def lanes_of(dtype):
    return 256 // np.dtype(dtype).itemsize


def pack(flags):
    return np.packbits(np.asarray(flags, bool), bitorder="little")


def unpack(byts, n):
    return np.unpackbits(np.asarray(byts, np.uint8), bitorder="little")[:n].astype(bool)


def elem(r, e, blk, rep, epb):
    return (r * rep + (e // epb) * blk) * epb + e % epb


def lane_on(mask, e):
    if isinstance(mask, int):
        return e < mask
    word = mask[e // 64] if e // 64 < len(mask) else 0
    return bool((word >> (e % 64)) & 1)


CMP = {asc.CMPMODE.LT: np.less, asc.CMPMODE.GT: np.greater, asc.CMPMODE.EQ: np.equal,
       asc.CMPMODE.LE: np.less_equal, asc.CMPMODE.GE: np.greater_equal, asc.CMPMODE.NE: np.not_equal}


def compare_l0(a, b, mode, repeat, s0_blk, s1_blk, s0_rep, s1_rep):
    """All lanes of every repeat (the mask is a reserved parameter on Atlas A2)."""
    lanes, epb = lanes_of(a.dtype), 32 // a.itemsize
    out = []
    for r in range(repeat):
        for e in range(lanes):
            x = a[elem(r, e, s0_blk, s0_rep, epb)]
            y = b if np.isscalar(b) or np.ndim(b) == 0 else b[elem(r, e, s1_blk, s1_rep, epb)]
            out.append(CMP[mode](x, y))
    return pack(out)


def select_l0(dst, sel_bits, a, b, mode, mask, repeat, strides):
    d_blk, s0_blk, s1_blk, d_rep, s0_rep, s1_rep = strides
    lanes, epb = lanes_of(a.dtype), 32 // a.itemsize
    for r in range(repeat):
        for e in range(lanes):
            if not lane_on(mask, e):
                continue
            bit = sel_bits[e] if mode == asc.SelMode.VSEL_CMPMASK_SPR else sel_bits[r * lanes + e]
            if bit:
                v = a[elem(r, e, s0_blk, s0_rep, epb)]
            elif np.ndim(b) == 0:
                v = b
            else:
                v = b[elem(r, e, s1_blk, s1_rep, epb)]
            dst[elem(r, e, d_blk, d_rep, epb)] = v


def model(a, b, sel, bits_out, vals_out):
    L = lanes_of(a.dtype)
    dt = a.dtype.type
    bits_out, vals_out = bits_out.copy(), vals_out.copy()
    mask = BITS if L == 128 else BITS[:1]
    bits_out[0:2 * L // 8] = pack(a[:2 * L] < b[:2 * L])
    bits_out[32:32 + 2 * L // 8] = compare_l0(a, b, asc.CMPMODE.GE, 2, 2, 1, 16, 8)
    bits_out[64:64 + 2 * L // 8] = pack(a[:2 * L] > dt(0.25))
    bits_out[96:96 + 2 * L // 8] = compare_l0(a, dt(0.25), asc.CMPMODE.LE, 2, 1, 1, 16, 8)
    ai, bi = a.view(np.int32), b.view(np.int32)
    bits_out[128:128 + 16] = pack(ai[:128] == bi[:128])
    cmp = [lane_on(mask, e) and a[e] != b[e] for e in range(L)]
    bits_out[160:176] = pack(cmp + [False] * (128 - L))
    bits_out[192:192 + 2 * L // 8] = pack(a[:2 * L] < b[:2 * L])
    s = unpack(sel, 8 * NS)
    n = 2 * L + 10
    vals_out[:n] = np.where(s[:n], a[:n], b[:n])
    vals_out[3 * L:4 * L + 3] = np.where(s[:L + 3], a[:L + 3], dt(2.5))
    select_l0(vals_out[5 * L:], unpack(sel[32:], L), a, b, asc.SelMode.VSEL_CMPMASK_SPR, mask, 2,
              (1, 1, 1, 8, 8, 8))
    select_l0(vals_out[7 * L:], s, a, b, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, L - 5, 2, (1, 1, 2, 8, 8, 16))
    vals_out[9 * L:9 * L + 64] = np.where(s[:64], a[:64], b[:64])
    # register forms: CMPMASK from sel[64:80] (bits) and sel[48:] (the scalar), every lane enabled
    vals_out[10 * L:12 * L] = np.where(np.tile(unpack(sel[64:], L), 2), a[:2 * L], b[:2 * L])
    scalar = sel[48:48 + a.itemsize].view(a.dtype)[0]
    vals_out[12 * L:14 * L] = np.where(s[:2 * L], a[:2 * L], scalar)
    return bits_out, vals_out


# --------------------------------------------------------------------------- kernels

@asc.jit
def cmpsel_ops(x, y, s, o, v, count, start, sel_bytes):
    """Every compare/select form; ``count``, ``start`` and ``sel_bytes`` shape the last compare and select."""
    L = 256 // x.dtype.sizeof()
    mask = [0x00FF00F0FFFF0F0F, 0x8000000000000001] if L == 128 else [0x00FF00F0FFFF0F0F]
    asc.compare(o, x, y, asc.CMPMODE.LT, 2 * L)
    asc.compare(o[32:], x, y, asc.CMPMODE.GE, mask=L - 7, repeat_times=2,
                repeat_params=asc.BinaryRepeatParams(1, 2, 1, 8, 16, 8))
    asc.compare_scalar(o[64:], x, 0.25, asc.CMPMODE.GT, 2 * L)
    asc.compare_scalar(o[96:], x, 0.25, asc.CMPMODE.LE, mask, 2, asc.UnaryRepeatParams(1, 1, 8, 16))
    asc.compare(o[128:], x.reinterpret_cast(asc.int32), y.reinterpret_cast(asc.int32), asc.CMPMODE.EQ, 128)
    asc.compare(x, y, asc.CMPMODE.NE, mask, asc.BinaryRepeatParams())
    asc.get_cmp_mask(o[160:])
    asc.compare(o[192:], x[start:], y, asc.CMPMODE.LT, count)
    asc.select(v, s, x, y, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, 2 * L + 10)
    asc.select(v[3 * L:], s, x, 2.5, asc.SelMode.VSEL_TENSOR_SCALAR_MODE, L + 3)
    asc.select(v[5 * L:], s[32:], x, y, asc.SelMode.VSEL_CMPMASK_SPR, mask, 2, asc.BinaryRepeatParams())
    asc.select(v[7 * L:], s, x, y, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, mask=L - 5, repeat_times=2,
               repeat_params=asc.BinaryRepeatParams(1, 1, 2, 8, 8, 16))
    few = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, s.get_phy_addr(), sel_bytes)
    asc.select(v[9 * L:], few, x, y, asc.SelMode.VSEL_TENSOR_TENSOR_MODE, 64)
    asc.reset_mask()
    asc.set_cmp_mask(s[64:])                         # selection bits, the same for every repeat
    asc.select(v[10 * L:], x, y, repeat_times=2, repeat_params=asc.BinaryRepeatParams(),
               sel_mode=asc.SelMode.VSEL_CMPMASK_SPR)
    asc.set_cmp_mask(s[48:])                         # the scalar of VSEL_TENSOR_SCALAR_MODE
    asc.select(v[12 * L:], s, x, 2, asc.BinaryRepeatParams())


@asc.jit
def cmpsel_run(a, b, sel, bits, vals, base, count, start, sel_bytes):
    """Load one dtype's operands at UB byte ``base``, run every form, store the results."""
    size = a.dtype.sizeof()
    L = 256 // size
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a, N)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b, N)
    sg = asc.GlobalTensor()
    sg.set_global_buffer(sel, NS)
    og = asc.GlobalTensor()
    og.set_global_buffer(bits, NB)
    vg = asc.GlobalTensor()
    vg.set_global_buffer(vals, 14 * L)
    x = asc.LocalTensor(a.dtype, asc.TPosition.VECIN, base, N)
    y = asc.LocalTensor(a.dtype, asc.TPosition.VECIN, base + N * size, N)
    s = asc.LocalTensor(asc.uint8, asc.TPosition.VECIN, base + 2 * N * size, NS)
    o = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, base + 2 * N * size + NS, NB)
    v = asc.LocalTensor(a.dtype, asc.TPosition.VECOUT, base + 2 * N * size + NS + NB, 14 * L)
    asc.data_copy(x, ag, N)
    asc.data_copy(y, bg, N)
    asc.data_copy(s, sg, NS)
    asc.data_copy(o, og, NB)
    asc.data_copy(v, vg, 14 * L)
    cmpsel_ops(x, y, s, o, v, count, start, sel_bytes)
    asc.data_copy(og, o, NB)
    asc.data_copy(vg, v, 14 * L)


@asc.jit
def cmpsel_kernel(ah: asc.GlobalAddress, bh: asc.GlobalAddress, sh: asc.GlobalAddress, oh: asc.GlobalAddress,
                  vh: asc.GlobalAddress, af: asc.GlobalAddress, bf: asc.GlobalAddress, sf: asc.GlobalAddress,
                  of: asc.GlobalAddress, vf: asc.GlobalAddress, count: int, start: int, sel_bytes: int):
    """float16 then float32 (``count``, ``start`` and ``sel_bytes`` apply to float32)."""
    cmpsel_run(ah, bh, sh, oh, vh, 0, 256, 0, NS)
    cmpsel_run(af, bf, sf, of, vf, 16384, count, start, sel_bytes)


def inputs(rng, dtype):
    a = rng.uniform(-1, 1, N).astype(dtype)
    b = rng.uniform(-1, 1, N).astype(dtype)
    b[::3] = a[::3]                      # equal pairs for EQ / LE / GE
    a[5] = np.nan                        # NaN is unordered: only NE holds
    a[7] = dtype(0.25)                   # equal to the scalar
    sel = rng.integers(0, 256, NS, dtype=np.uint8)
    sel[48:48 + np.dtype(dtype).itemsize] = np.frombuffer(np.array(7.5, dtype).tobytes(), np.uint8)
    bits = rng.integers(0, 256, NB, dtype=np.uint8)
    vals = rng.uniform(5, 6, 14 * lanes_of(dtype)).astype(dtype)
    return a, b, sel, bits, vals


def launch(h, f, count=128, start=0, sel_bytes=NS, **options):
    cmpsel_kernel[1](*h, *f, count, start, sel_bytes, **options)


def check(args, got_bits, got_vals):
    want_bits, want_vals = model(*args)
    np.testing.assert_array_equal(got_bits, want_bits)
    u = np.uint16 if got_vals.dtype == np.float16 else np.uint32
    np.testing.assert_array_equal(got_vals.view(u), want_vals.view(u))


# --------------------------------------------------------------------------- tests

def test_compare_and_select_match_model(rng):
    h, f = inputs(rng, np.float16), inputs(rng, np.float32)
    before = [[x.copy() for x in h], [x.copy() for x in f]]
    launch(h, f)
    check(before[0], h[3], h[4])
    check(before[1], f[3], f[4])


def test_compare_and_select_debug_mode_agrees(rng, mode):
    h, f = inputs(rng, np.float16), inputs(rng, np.float32)
    before = [[x.copy() for x in h], [x.copy() for x in f]]
    launch(h, f, **mode)
    check(before[0], h[3], h[4])
    check(before[1], f[3], f[4])


@pytest.mark.parametrize("count, start, sel_bytes, error", [
    (96, 0, NS, AlignmentError),        # 96 floats are 384 bytes: not a whole number of 256-byte repeats
    (N + 64, 0, NS, BoundsError),       # beyond the 512-element sources
    (64, 1, NS, AlignmentError),        # x[1:] is not 32-byte aligned
    (128, 0, 4, BoundsError),           # 64 selection bits need 8 bytes
])
def test_bad_runtime_arguments(rng, count, start, sel_bytes, error):
    with pytest.raises(error):
        launch(inputs(rng, np.float16), inputs(rng, np.float32), count, start, sel_bytes)


def test_wrong_dtypes_are_compile_errors():
    @asc.jit
    def int16_compare(a: asc.GlobalAddress):
        x = asc.LocalTensor(asc.int16, asc.TPosition.VECIN, 0, 128)
        o = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 256, 32)
        asc.compare(o, x, x, asc.CMPMODE.EQ, 128)

    @asc.jit
    def int32_less(a: asc.GlobalAddress):
        x = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 64)
        o = asc.LocalTensor(asc.uint8, asc.TPosition.VECOUT, 256, 32)
        asc.compare(o, x, x, asc.CMPMODE.LT, 64)

    for kernel, what in ((int16_compare, "int16"), (int32_less, "EQ")):
        with pytest.raises(KernelTypeError, match=what):
            kernel[1](np.zeros(8, np.float32))
