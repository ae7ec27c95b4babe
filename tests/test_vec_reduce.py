"""Reductions: whole/block/pair reductions and reduce_sum/max/min against a NumPy model of the hardware.

The model follows the documented summation order: a pairwise binary tree over
the 128 (float16) or 64 (float32) lanes of a repeat, masked lanes as zero,
float16 partial sums rounded and saturated at +-65504; reduce_sum's count
form adds the per-repeat sums in order, its mask form as a tree.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import AlignmentError, BoundsError, KernelTypeError

ORDER = asc.ReduceOrder
N = 1024          # source elements
M = 320           # destination elements
T = 256           # shared_tmp_buffer elements


# --------------------------------------------------------------------------- NumPy model

def add(a, b):
    """One adder step in the operand type; float16 overflow of finite operands saturates."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.float16:
        with np.errstate(over="ignore"):
            r = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
        sat = np.isinf(r) & np.isfinite(a) & np.isfinite(b)
        return np.where(sat, np.copysign(np.float16(65504), r), r).astype(np.float16)
    return a + b


def tree(values):
    v = np.asarray(values)
    while v.size > 1:
        v = add(v[0::2], v[1::2])
    return v.reshape(-1)[0]


def lanes_on(mask, lanes):
    if isinstance(mask, int):
        return [e < mask for e in range(lanes)]
    lo = mask[0]
    hi = mask[1] if len(mask) > 1 else 0
    return [bool((lo >> e) & 1) if e < 64 else bool((hi >> (e - 64)) & 1) for e in range(lanes)]


def elem(r, e, blk, rep, epb):
    return (r * rep + (e // epb) * blk) * epb + e % epb


def first_extreme(values, op):
    i = int(np.argmax(values) if op == "max" else np.argmin(values))
    return values[i], i


def index_bits(dt, i):
    """An index stored in a float slot: uint16 bits (float16) or uint32 bits (float32)."""
    return np.array([i & 0xFFFF], np.uint16).view(np.float16)[0] if dt == np.float16 else \
        np.array([i], np.uint32).view(np.float32)[0]


def whole(out, x, at, op, mask, repeat, dst_rep, blk, rep, order=ORDER.ORDER_VALUE_INDEX):
    lanes, epb = 256 // x.itemsize, 32 // x.itemsize
    on = lanes_on(mask, lanes)
    for r in range(repeat):
        vals = np.array([x[elem(r, e, blk, rep, epb)] if on[e] else 0 for e in range(lanes)], x.dtype)
        if op == "sum":
            out[at + r * dst_rep] = tree(vals)
            continue
        act = [e for e in range(lanes) if on[e]]
        v, i = first_extreme(vals[act], op)
        i = act[i]
        if order == ORDER.ORDER_ONLY_INDEX:
            base = (at * x.itemsize + r * dst_rep * 4) // 4
            out.view(np.uint32)[base] = i           # float16: at is even, so this stays 4-byte aligned
        elif order == ORDER.ORDER_ONLY_VALUE:
            out[at + r * dst_rep] = v
        else:
            pair = [v, index_bits(x.dtype, i)]
            out[at + 2 * r * dst_rep: at + 2 * r * dst_rep + 2] = pair if order == ORDER.ORDER_VALUE_INDEX \
                else pair[::-1]


def block(out, x, at, op, mask, repeat, dst_rep, blk, rep):
    lanes, epb = 256 // x.itemsize, 32 // x.itemsize
    big = np.float16(65504) if x.dtype == np.float16 else np.float32(np.inf)
    on = lanes_on(mask, lanes)
    for r in range(repeat):
        for k in range(8):
            idx = range(k * epb, (k + 1) * epb)
            act = [x[elem(r, e, blk, rep, epb)] for e in idx if on[e]]
            if op == "sum":
                res = tree(np.array([x[elem(r, e, blk, rep, epb)] if on[e] else 0 for e in idx], x.dtype)) \
                    if act else 0
            elif not act:
                res = -big if op == "max" else big
            else:
                res = max(act) if op == "max" else min(act)
            out[at + r * dst_rep * 8 + k] = res


def pair(out, x, at, mask, repeat, dst_rep, blk, rep):
    lanes, epb = 256 // x.itemsize, 32 // x.itemsize
    on = lanes_on(mask, lanes)
    for r in range(repeat):
        for j in range(lanes // 2):
            a = x[elem(r, 2 * j, blk, rep, epb)] if on[2 * j] else x.dtype.type(0)
            b = x[elem(r, 2 * j + 1, blk, rep, epb)] if on[2 * j + 1] else x.dtype.type(0)
            if on[2 * j] or on[2 * j + 1]:
                out[at + r * dst_rep * lanes // 2 + j] = add(a, b)


def reduce_count(out, x, at, op, count, cal_index=False):
    lanes = 256 // x.itemsize
    if op == "sum":
        acc = None
        for r in range(-(-count // lanes)):
            vals = np.zeros(lanes, x.dtype)
            chunk = x[r * lanes:min(count, (r + 1) * lanes)]
            vals[:chunk.size] = chunk
            part = tree(vals)
            acc = part if acc is None else add(acc, part)       # the count form accumulates in order
        out[at] = acc
        return
    v, i = first_extreme(x[:count], op)
    out[at] = v
    if cal_index:
        out[at + 1] = index_bits(x.dtype, i)


def reduce_mask(out, x, at, op, mask, repeat, rep, cal_index=False):
    lanes, epb = 256 // x.itemsize, 32 // x.itemsize
    on = lanes_on(mask, lanes)
    if op == "sum":
        vals = [tree(np.array([x[elem(r, e, 1, rep, epb)] if on[e] else 0 for e in range(lanes)], x.dtype))
                for r in range(repeat)]
        while len(vals) > 1:             # the mask form combines per-repeat sums as trees of `lanes`
            groups = []
            for g in range(0, len(vals), lanes):
                chunk = np.zeros(lanes, x.dtype)
                chunk[:len(vals[g:g + lanes])] = vals[g:g + lanes]
                groups.append(tree(chunk))
            vals = groups
        out[at] = vals[0]
        return
    idx = [elem(r, e, 1, rep, epb) for r in range(repeat) for e in range(lanes) if on[e]]
    v, i = first_extreme(x[idx], op)
    out[at] = v
    if cal_index:
        out[at + 1] = index_bits(x.dtype, idx[i])


# --------------------------------------------------------------------------- kernels

@asc.jit
def reduce_ops(src, dst, tmp, count, start):
    """Every reduction form, each writing its own slots of ``dst``."""
    lanes = 256 // src.dtype.sizeof()
    bits = [0x00FF00F0FFFF0F0F, 0x8000000000000001] if lanes == 128 else [0xF0000000FFFF0F0F]
    asc.whole_reduce_sum(dst, src, lanes - 5, 3, 1, 1, 8)
    asc.whole_reduce_sum(dst[16:], src, bits, 2, 2, 2, 16)
    asc.whole_reduce_max(dst[32:], src, lanes, 4, 1, 1, 8, order=asc.ReduceOrder.ORDER_VALUE_INDEX)
    asc.whole_reduce_min(dst[48:], src, bits, 2, 1, 1, 8, asc.ReduceOrder.ORDER_INDEX_VALUE)
    asc.whole_reduce_max(dst[64:], src, lanes, 2, 1, 1, 8, order=asc.ReduceOrder.ORDER_ONLY_VALUE)
    asc.whole_reduce_min(dst[80:], src, lanes, 2, 1, 1, 8, order=asc.ReduceOrder.ORDER_ONLY_INDEX)
    asc.block_reduce_sum(dst[96:], src, 2, bits, 1, 1, 8)
    asc.block_reduce_max(dst[112:], src, 2, bits, 1, 1, 8)
    asc.block_reduce_min(dst[128:], src, 2, bits, 1, 1, 8)
    asc.pair_reduce_sum(dst[144:], src, 1, lanes - 3, 1, 1, 8)
    asc.set_mask_count()                             # counter mode: 20 elements past a full repeat
    asc.set_vector_mask(lanes + 20, dtype=src.dtype, mode=asc.MaskMode.COUNTER)
    asc.whole_reduce_sum(dst[208:], src, asc.MASK_PLACEHOLDER, 1, 1, 1, 8, is_set_mask=False)
    asc.set_mask_norm()
    asc.reset_mask()
    asc.repeat_reduce_sum(dst[210:], src, 2, lanes - 1, 1, 1, 1, 8)
    asc.reduce_sum(dst[224:], src, tmp, 7 * lanes + 37)
    asc.reduce_max(dst[240:], src[start:], tmp, count, True)
    asc.reduce_min(dst[256:], src, tmp, 7 * lanes + 37)
    asc.reduce_sum(dst[272:], src, tmp, lanes - 10, 5, 8)
    asc.reduce_max(dst[288:], src, tmp, bits, 3, 16, cal_index=True)
    asc.reduce_min(dst[304:], src, tmp, mask=bits, repeat_time=3, src_rep_stride=16)


@asc.jit
def reduce_kernel(xh: asc.GlobalAddress, oh: asc.GlobalAddress, xf: asc.GlobalAddress, of: asc.GlobalAddress,
                  count: int, start: int, tmp_len: int):
    """float16 then float32; ``count``, ``start`` and ``tmp_len`` shape float32's reduce_max call."""
    xhg = asc.GlobalTensor()
    xhg.set_global_buffer(xh, N)
    ohg = asc.GlobalTensor()
    ohg.set_global_buffer(oh, M)
    xfg = asc.GlobalTensor()
    xfg.set_global_buffer(xf, N)
    ofg = asc.GlobalTensor()
    ofg.set_global_buffer(of, M)
    src_h = asc.LocalTensor(asc.float16, asc.TPosition.VECIN, 0, N)
    dst_h = asc.LocalTensor(asc.float16, asc.TPosition.VECOUT, 2 * N, M)
    tmp_h = asc.LocalTensor(asc.float16, asc.TPosition.VECCALC, 2 * (N + M), T)
    src_f = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 8192, N)
    dst_f = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 8192 + 4 * N, M)
    tmp_f = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 8192 + 4 * (N + M), tmp_len)
    asc.data_copy(src_h, xhg, N)
    asc.data_copy(dst_h, ohg, M)
    asc.data_copy(src_f, xfg, N)
    asc.data_copy(dst_f, ofg, M)
    reduce_ops(src_h, dst_h, tmp_h, 7 * 128 + 37, 0)
    reduce_ops(src_f, dst_f, tmp_f, count, start)
    asc.data_copy(ohg, dst_h, M)
    asc.data_copy(ofg, dst_f, M)


def expected(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    lanes = 256 // x.itemsize
    bits = [0x00FF00F0FFFF0F0F, 0x8000000000000001] if lanes == 128 else [0xF0000000FFFF0F0F]
    e = out.copy()
    whole(e, x, 0, "sum", lanes - 5, 3, 1, 1, 8)
    whole(e, x, 16, "sum", bits, 2, 2, 2, 16)
    whole(e, x, 32, "max", lanes, 4, 1, 1, 8, ORDER.ORDER_VALUE_INDEX)
    whole(e, x, 48, "min", bits, 2, 1, 1, 8, ORDER.ORDER_INDEX_VALUE)
    whole(e, x, 64, "max", lanes, 2, 1, 1, 8, ORDER.ORDER_ONLY_VALUE)
    whole(e, x, 80, "min", lanes, 2, 1, 1, 8, ORDER.ORDER_ONLY_INDEX)
    block(e, x, 96, "sum", bits, 2, 1, 1, 8)
    block(e, x, 112, "max", bits, 2, 1, 1, 8)
    block(e, x, 128, "min", bits, 2, 1, 1, 8)
    pair(e, x, 144, lanes - 3, 1, 1, 1, 8)
    whole(e, x, 208, "sum", lanes, 1, 1, 1, 8)
    whole(e, x[lanes:], 209, "sum", 20, 1, 1, 1, 8)
    whole(e, x, 210, "sum", lanes - 1, 2, 1, 1, 8)
    reduce_count(e, x, 224, "sum", 7 * lanes + 37)
    reduce_count(e, x, 240, "max", 7 * lanes + 37, True)
    reduce_count(e, x, 256, "min", 7 * lanes + 37)
    reduce_mask(e, x, 272, "sum", lanes - 10, 5, 8)
    reduce_mask(e, x, 288, "max", bits, 3, 16, True)
    reduce_mask(e, x, 304, "min", bits, 3, 16)
    return e


def launch(xh, oh, xf, of, count=7 * 64 + 37, start=0, tmp_len=T, **options):
    reduce_kernel[1](xh, oh, xf, of, count, start, tmp_len, **options)


def inputs(rng, dtype):
    x = (rng.standard_normal(N) * 100).astype(dtype)
    lanes = 256 // x.itemsize
    x[lanes + 5] = x[lanes + 70] = 5000          # a tied maximum: the first one must win
    x[3 * lanes + 1] = x[3 * lanes + 9] = -5000   # a tied minimum
    if dtype == np.float16:
        x[:4] = [30000, 30000, 20000, -100]       # a saturating tree in repeat 0
    out = rng.uniform(-1, 1, M).astype(dtype)     # untouched slots must keep these
    return x, out


def assert_bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    u = np.uint16 if got.dtype == np.float16 else np.uint32
    bad = np.nonzero(got.view(u) != want.view(u))[0]
    assert bad.size == 0, f"slots {bad[:10]}: got {got[bad[:10]]}, want {want[bad[:10]]}"


# --------------------------------------------------------------------------- tests

def test_reductions_match_model(rng):
    xh, oh = inputs(rng, np.float16)
    xf, of = inputs(rng, np.float32)
    want_h, want_f = expected(xh, oh), expected(xf, of)
    launch(xh, oh, xf, of)
    assert_bits_equal(oh, want_h)
    assert_bits_equal(of, want_f)


def test_reductions_debug_mode_agrees(rng, mode):
    xh, oh = inputs(rng, np.float16)
    xf, of = inputs(rng, np.float32)
    want_h, want_f = expected(xh, oh), expected(xf, of)
    launch(xh, oh, xf, of, **mode)
    assert_bits_equal(oh, want_h)
    assert_bits_equal(of, want_f)


def test_documented_saturation_example():
    """[60000, 60000, -30000, 100]: 60000 + 60000 saturates to 65504, then 65504 + (-29900).

    The docs write the result in decimal as 35604; in float16 -29900 is stored as
    -29904 and 65504 - 29904 = 35600 rounds (ties to even) to 35584.
    """
    x = np.zeros(N, np.float16)
    x[:4] = [60000, 60000, -30000, 100]
    out = np.zeros(M, np.float16)
    launch(x, out, np.zeros(N, np.float32), np.zeros(M, np.float32))
    assert out[0] == np.float16(35584)                  # whole_reduce_sum, repeat 0
    assert out[224] == np.float16(35584)                # reduce_sum count form: same first repeat, then 0s
    assert np.float16(65504) - np.float16(29904) == np.float16(35584)


@pytest.mark.parametrize("count, start, tmp_len, error", [
    (N + 64, 0, T, BoundsError),       # count beyond the 1024-element source
    (64, 1, T, AlignmentError),        # source not 32-byte aligned
    (N, 0, 8, BoundsError),            # shared_tmp_buffer below the documented minimum (48 for 16 repeats)
])
def test_bad_runtime_arguments(count, start, tmp_len, error):
    z16, z32 = np.zeros(N, np.float16), np.zeros(N, np.float32)
    with pytest.raises(error):
        launch(z16, np.zeros(M, np.float16), z32, np.zeros(M, np.float32), count, start, tmp_len)


def test_wrong_dtype_is_a_compile_error():
    @asc.jit
    def int_sum(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.int32, asc.TPosition.VECIN, 0, 64)
        dst = asc.LocalTensor(asc.int32, asc.TPosition.VECOUT, 256, 8)
        asc.whole_reduce_sum(dst, src, 64, 1, 1, 1, 8)

    with pytest.raises(KernelTypeError, match="int32"):
        int_sum[1](np.zeros(8, np.float32))


def test_wrong_position_is_a_compile_error():
    @asc.jit
    def l1_sum(x: asc.GlobalAddress):
        src = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 64)
        dst = asc.LocalTensor(asc.float32, asc.TPosition.VECOUT, 256, 8)
        asc.reduce_sum(dst, src, dst, 64)

    with pytest.raises(KernelTypeError, match="position"):
        l1_sum[1](np.zeros(8, np.float32))
