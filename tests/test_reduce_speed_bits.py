"""The batched reductions of npuemu.isa.vec_reduce give the bits of the element-by-element definition.

The oracle below is the element-by-element implementation the batched code
replaced, kept verbatim: one pairwise tree per repeat through ``tree_sum``,
the first extreme by a scan, every float16 partial sum rounded and saturated
by ``add``.  Each case runs an instruction and the oracle on the same random
UB (a copy each) and compares every byte of both UBs and of the state, or the
fault both raise.  Data: float32 and float16 values of every kind (normal,
subnormal, +-0, +-inf, NaN with assorted payloads and signs, values whose
float16 sums overflow and saturate, float32 values whose sums overflow),
counts 1..600 and a few large ones, continuous and bit masks, counter mode,
repeat and block strides (0 included), and destinations overlapping the
source.
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from npuemu.isa import state as S
from npuemu.isa import vec_reduce as vr
from npuemu.isa.common import BLOCK, check_aligned, check_count
from npuemu.isa.fault import Fault
from npuemu.isa.vmask import check_stride, count_form_done, element, explicit_mask, lane_on, resolve
from npuemu.numerics.half import f16_to_f32, f32_to_f16

OP_SUM, OP_MAX, OP_MIN = vr.OP_SUM, vr.OP_MAX, vr.OP_MIN
U8_MAX, U16_MAX = 255, 65535
HALF_MAX = np.float32(65504.0)
UB = 1 << 16          # bytes of the test UB
SRC = 4096            # source byte address
LOC = 7


# --------------------------------------------------------------------------- the element-by-element oracle

@njit(cache=True, inline="always")
def _get(h, f, addr, half):
    if half:
        return f16_to_f32(h[addr >> 1])
    return f[addr >> 2]


@njit(cache=True, inline="always")
def _put(h, f, addr, value, half):
    if half:
        h[addr >> 1] = f32_to_f16(value)
    else:
        f[addr >> 2] = value


@njit(cache=True, inline="always")
def _put_index(h, u, addr, index, half):
    if half:
        h[addr >> 1] = np.uint16(index & 0xFFFF)
    else:
        u[addr >> 2] = np.uint32(index & 0xFFFFFFFF)


@njit(cache=True)
def add(a, b, half):
    s = a + b
    if half:
        r = f16_to_f32(f32_to_f16(s))
        if np.isinf(r) and np.isfinite(a) and np.isfinite(b):
            r = HALF_MAX if r > 0 else -HALF_MAX
        return r
    return s


@njit(cache=True)
def tree_sum(buf, width, half):
    while width > 1:
        width //= 2
        for i in range(width):
            buf[i] = add(buf[2 * i], buf[2 * i + 1], half)
    return buf[0]


@njit(cache=True, inline="always")
def _better(v, best, op):
    if op == OP_MAX:
        return v > best
    return v < best


@njit(cache=True, inline="always")
def _fill(op, half):
    if op == OP_SUM:
        return np.float32(0.0)
    big = HALF_MAX if half else np.float32(np.inf)
    return -big if op == OP_MAX else big


@njit(cache=True, inline="always")
def _active(counter, lo, hi, total, r, e, lanes):
    if counter:
        return r * lanes + e < total
    return lane_on(lo, hi, e)


@njit(cache=True)
def _src_end(counter, lo, hi, total, repeats, lanes, blk, rep, epb):
    end = 0
    for r in range(repeats):
        for e in range(lanes - 1, -1, -1):
            if _active(counter, lo, hi, total, r, e, lanes):
                end = max(end, element(r, e, blk, rep, epb) + 1)
                break
    return end


@njit(cache=True)
def old_whole_reduce(lm, st, op, half, order, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo,
                     mask_hi, repeat, dst_rep, src_blk, src_rep, loc):
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    check_stride(dst_rep, U16_MAX, loc)
    check_stride(src_blk, U16_MAX, loc)
    check_stride(src_rep, U16_MAX, loc)
    if order < 0 or order > 3:
        raise Fault(vr.F_ORDER, loc, order, 0, 0)
    check_aligned(src, BLOCK, 1, loc)
    if op == OP_SUM or order == vr.ORDER_ONLY_VALUE:
        slot = esize
    elif order == vr.ORDER_ONLY_INDEX:
        slot = 4
    else:
        slot = 2 * esize
    check_aligned(dst, esize if op == OP_SUM else 2 * esize, 1, loc)
    end = _src_end(counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb)
    if end == 0:
        return
    check_count(end, src_len, loc)
    check_count(((repeats - 1) * dst_rep * slot + slot) // esize, dst_len, loc)
    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    u = lm.view(np.uint32)
    buf = np.zeros(lanes, np.float32)
    for r in range(repeats):
        out = dst + r * dst_rep * slot
        if op == OP_SUM:
            for e in range(lanes):
                if _active(counter, lo, hi, total, r, e, lanes):
                    buf[e] = _get(h, f, src + element(r, e, src_blk, src_rep, epb) * esize, half)
                else:
                    buf[e] = 0.0
            _put(h, f, out, tree_sum(buf, lanes, half), half)
            continue
        best = np.float32(0.0)
        where = -1
        for e in range(lanes):
            if _active(counter, lo, hi, total, r, e, lanes):
                v = _get(h, f, src + element(r, e, src_blk, src_rep, epb) * esize, half)
                if where < 0 or _better(v, best, op):
                    best = v
                    where = e
        if order == vr.ORDER_VALUE_INDEX:
            _put(h, f, out, best, half)
            _put_index(h, u, out + esize, where, half)
        elif order == vr.ORDER_INDEX_VALUE:
            _put_index(h, u, out, where, half)
            _put(h, f, out + esize, best, half)
        elif order == vr.ORDER_ONLY_VALUE:
            _put(h, f, out, best, half)
        else:
            u[out >> 2] = np.uint32(where)


@njit(cache=True)
def old_block_reduce(lm, st, op, half, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                     repeat, dst_rep, src_blk, src_rep, loc):
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    check_stride(dst_rep, U16_MAX, loc)
    check_stride(src_blk, U16_MAX, loc)
    check_stride(src_rep, U16_MAX, loc)
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, 8 * esize, 1, loc)
    end = _src_end(counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb)
    if end == 0:
        return
    check_count(end, src_len, loc)
    check_count((repeats - 1) * dst_rep * 8 + 8, dst_len, loc)
    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    buf = np.zeros(epb, np.float32)
    for r in range(repeats):
        for k in range(8):
            seen = False
            best = _fill(op, half)
            for j in range(epb):
                e = k * epb + j
                if _active(counter, lo, hi, total, r, e, lanes):
                    v = _get(h, f, src + element(r, e, src_blk, src_rep, epb) * esize, half)
                    if op == OP_SUM:
                        buf[j] = v
                    elif not seen or _better(v, best, op):
                        best = v
                    seen = True
                else:
                    buf[j] = 0.0
            if op == OP_SUM and seen:
                best = tree_sum(buf, epb, half)
            _put(h, f, dst + ((r * dst_rep) * 8 + k) * esize, best, half)


@njit(cache=True)
def old_pair_reduce_sum(lm, st, half, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi,
                        repeat, dst_rep, src_blk, src_rep, loc):
    esize = 2 if half else 4
    lanes = 256 // esize
    half_lanes = lanes // 2
    epb = 32 // esize
    counter, lo, hi, repeats, total = resolve(st, is_set_mask != 0, mask_is_bits != 0, mask_lo, mask_hi,
                                              repeat, esize, loc)
    check_stride(dst_rep, U16_MAX, loc)
    check_stride(src_blk, U16_MAX, loc)
    check_stride(src_rep, U16_MAX, loc)
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, BLOCK, 1, loc)
    end = _src_end(counter, lo, hi, total, repeats, lanes, src_blk, src_rep, epb)
    if end == 0:
        return
    check_count(end, src_len, loc)
    dst_end = 0
    for r in range(repeats):
        for j in range(half_lanes):
            if _active(counter, lo, hi, total, r, 2 * j, lanes) or \
                    _active(counter, lo, hi, total, r, 2 * j + 1, lanes):
                dst_end = max(dst_end, r * dst_rep * half_lanes + j + 1)
    check_count(dst_end, dst_len, loc)
    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    for r in range(repeats):
        for j in range(half_lanes):
            a_on = _active(counter, lo, hi, total, r, 2 * j, lanes)
            b_on = _active(counter, lo, hi, total, r, 2 * j + 1, lanes)
            if not (a_on or b_on):
                continue
            a = _get(h, f, src + element(r, 2 * j, src_blk, src_rep, epb) * esize, half) if a_on \
                else np.float32(0.0)
            b = _get(h, f, src + element(r, 2 * j + 1, src_blk, src_rep, epb) * esize, half) if b_on \
                else np.float32(0.0)
            _put(h, f, dst + (r * dst_rep * half_lanes + j) * esize, add(a, b, half), half)


@njit(cache=True, inline="always")
def _store_result(h, f, u, dst, value, index, with_index, half):
    esize = 2 if half else 4
    _put(h, f, dst, value, half)
    if with_index:
        _put_index(h, u, dst + esize, index, half)


@njit(cache=True)
def old_reduce_count(lm, st, op, half, cal_index, dst, dst_len, src, src_len, tmp, tmp_len, count, loc):
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    check_count(count, src_len, loc)
    if count == 0:
        return
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, esize, 1, loc)
    with_index = op != OP_SUM and cal_index != 0
    check_count(2 if with_index else 1, dst_len, loc)
    if op != OP_SUM:
        vr._check_tmp(op, cal_index != 0, max(count // lanes, 1), tmp, tmp_len, lanes, epb, loc)
    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    u = lm.view(np.uint32)
    if op == OP_SUM:
        buf = np.zeros(lanes, np.float32)
        acc = np.float32(0.0)
        for r in range((count + lanes - 1) // lanes):
            for e in range(lanes):
                i = r * lanes + e
                buf[e] = _get(h, f, src + i * esize, half) if i < count else np.float32(0.0)
            part = tree_sum(buf, lanes, half)
            acc = part if r == 0 else add(acc, part, half)
        _store_result(h, f, u, dst, acc, 0, False, half)
        count_form_done(st)
        return
    best = _get(h, f, src, half)
    where = 0
    for i in range(1, count):
        v = _get(h, f, src + i * esize, half)
        if _better(v, best, op):
            best = v
            where = i
    _store_result(h, f, u, dst, best, where, with_index, half)


@njit(cache=True)
def old_reduce_mask(lm, op, half, cal_index, dst, dst_len, src, src_len, tmp, tmp_len, mask_is_bits, mask_lo,
                    mask_hi, repeat, src_rep, loc):
    esize = 2 if half else 4
    lanes = 256 // esize
    epb = 32 // esize
    if repeat < 0 or repeat > U8_MAX:
        raise Fault(vr.F_REPEAT, loc, repeat, 0, 0)
    check_stride(src_rep, U8_MAX, loc)
    lo, hi = explicit_mask(mask_is_bits != 0, mask_lo, mask_hi, lanes, loc)
    end = _src_end(np.bool_(False), lo, hi, np.int64(0), repeat, lanes, np.int64(1), src_rep, epb)
    if end == 0:
        return
    check_aligned(src, BLOCK, 1, loc)
    check_aligned(dst, esize, 1, loc)
    check_count(end, src_len, loc)
    with_index = op != OP_SUM and cal_index != 0
    check_count(2 if with_index else 1, dst_len, loc)
    vr._check_tmp(op, cal_index != 0, repeat, tmp, tmp_len, lanes, epb, loc)
    h = lm.view(np.uint16)
    f = lm.view(np.float32)
    u = lm.view(np.uint32)
    if op == OP_SUM:
        vals = np.zeros(repeat, np.float32)
        buf = np.zeros(lanes, np.float32)
        for r in range(repeat):
            for e in range(lanes):
                buf[e] = _get(h, f, src + element(r, e, 1, src_rep, epb) * esize, half) \
                    if lane_on(lo, hi, e) else np.float32(0.0)
            vals[r] = tree_sum(buf, lanes, half)
        n = repeat
        while n > 1:
            groups = (n + lanes - 1) // lanes
            for g in range(groups):
                for e in range(lanes):
                    i = g * lanes + e
                    buf[e] = vals[i] if i < n else np.float32(0.0)
                vals[g] = tree_sum(buf, lanes, half)
            n = groups
        _store_result(h, f, u, dst, vals[0], 0, False, half)
        return
    best = np.float32(0.0)
    where = -1
    for r in range(repeat):
        for e in range(lanes):
            if lane_on(lo, hi, e):
                i = element(r, e, 1, src_rep, epb)
                v = _get(h, f, src + i * esize, half)
                if where < 0 or _better(v, best, op):
                    best = v
                    where = i
    _store_result(h, f, u, dst, best, where, with_index, half)


# --------------------------------------------------------------------------- data

KINDS = ("normal", "big", "special", "bits")


def values(rng: np.random.Generator, n: int, half: bool, kind: str) -> np.ndarray:
    """``n`` float16 or float32 elements of one kind, as their bit patterns."""
    dt, ut = (np.float16, np.uint16) if half else (np.float32, np.uint32)
    if kind == "bits":                  # every pattern: NaN payloads, subnormals, infinities
        return rng.integers(0, 1 << (16 if half else 32), n, dtype=np.uint64).astype(ut)
    if kind == "big":                   # sums that saturate float16 or overflow float32
        top = 65504 if half else 3.4e38
        x = rng.uniform(-top, top, n) * rng.choice([1, 0.5, 0.25], n)
        return x.astype(dt).view(ut)
    x = (rng.standard_normal(n) * rng.choice([1e-3, 1, 100], n)).astype(dt)
    if kind == "special":
        specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 6e-8 if half else 1e-40,
                             -6e-8 if half else -1e-40, 65504, -65504, 60000, 1e38 if not half else 30000],
                            dt)
        pick = rng.random(n) < 0.08
        x[pick] = rng.choice(specials, int(pick.sum()))
        bits = x.view(ut)
        nan = rng.random(n) < 0.01   # NaNs with other payloads
        payload = rng.integers(1, 1 << (10 if half else 23), n).astype(ut)
        bits[nan] = (np.array(0x7C00 if half else 0x7F800000, ut) | payload[nan]
                     | (rng.integers(0, 2, n).astype(ut) << ut(15 if half else 31))[nan])
        return bits
    return x.view(ut)


def ub(rng: np.random.Generator, half: bool, kind: str) -> np.ndarray:
    """A UB of random bytes with ``kind`` elements from byte SRC on."""
    lm = rng.integers(0, 256, UB, dtype=np.uint8)
    esize = 2 if half else 4
    n = (UB - SRC) // esize
    lm[SRC:] = values(rng, n, half, kind).view(np.uint8)
    return lm


def mask_args(rng: np.random.Generator, lanes: int) -> tuple[int, int, int]:
    """``(mask_is_bits, lo, hi)``: a continuous mask or random lane bits (int64 bit patterns)."""
    if rng.random() < 0.4:
        return 0, int(rng.integers(1, lanes + 1)), 0
    density = rng.choice([0.05, 0.5, 0.95, 1.0])
    bits = rng.random(lanes) < density
    lo = sum(1 << e for e in range(min(lanes, 64)) if bits[e])
    hi = sum(1 << (e - 64) for e in range(64, lanes) if bits[e])
    signed = np.array([lo, hi], np.uint64).view(np.int64)
    return 1, int(signed[0]), int(signed[1])


def run_both(new, old, lm, st, *args):
    """Run ``new`` and ``old`` on copies; compare UB and state bytes, or the faults."""
    results = []
    for fn in (new, old):
        lm1, st1 = lm.copy(), None if st is None else st.copy()
        try:
            fn(lm1, st1, *args) if st is not None else fn(lm1, *args)
            results.append((lm1, st1, None))
        except Fault as e:
            results.append((lm1, st1, e.args))
    (lm_new, st_new, f_new), (lm_old, st_old, f_old) = results
    assert f_new == f_old, (args, f_new, f_old)
    bad = np.flatnonzero(lm_new != lm_old)
    assert bad.size == 0, f"{args}: bytes {bad[:8]} differ: {lm_new[bad[:8]]} != {lm_old[bad[:8]]}"
    if st is not None:
        assert np.array_equal(st_new, st_old), args


def state(counter: bool = False, total: int = 0) -> np.ndarray:
    st = np.zeros(S.STATE_SIZE, np.int64)
    st[S.MASK_MODE] = 1 if counter else 0
    st[S.MASK_LO] = total if counter else -1
    st[S.MASK_HI] = 0 if counter else -1
    return st


# --------------------------------------------------------------------------- tests

@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_reduce_count(half, kind):
    rng = np.random.default_rng(1000 + 10 * half + KINDS.index(kind))
    esize = 2 if half else 4
    nsrc = (UB - SRC) // esize - 64
    lm = ub(rng, half, kind)
    st = state()
    dst, tmp = 512, 1024
    counts = list(range(0, 601)) + [1023, 1024, 1025, 4095, 8191, 9000, nsrc]
    for count in counts:
        for op in (OP_SUM, OP_MAX, OP_MIN):
            cal = int(count % 2)
            run_both(vr.reduce_count, old_reduce_count, lm, st, op, half, cal, dst, 2, SRC, nsrc, tmp, 3072 // esize,
                     count, LOC)
        if count % 50 == 0:
            lm = ub(rng, half, kind)


@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_reduce_mask(half, kind):
    rng = np.random.default_rng(2000 + 10 * half + KINDS.index(kind))
    esize = 2 if half else 4
    lanes = 256 // esize
    nsrc = (UB - SRC) // esize
    for case in range(300):
        if case % 20 == 0:
            lm = ub(rng, half, kind)
        bits, lo, hi = mask_args(rng, lanes)
        repeat = int(rng.choice([0, 1, 2, 3, 7, 8, 20, 64, 65, 129, 255])) if case % 7 else int(rng.integers(0, 256))
        src_rep = int(rng.choice([0, 1, 3, 8, 16])) if repeat < 100 else int(rng.choice([0, 1, 8]))
        for op in (OP_SUM, OP_MAX, OP_MIN):
            run_both(vr.reduce_mask, old_reduce_mask, lm, None, op, half, case % 2, 512, 2, SRC, nsrc, 1024,
                     3072 // esize, bits, lo, hi, repeat, src_rep, LOC)


def _level0_cases(rng, lanes, esize, n):
    """Arguments shared by the level-0 reductions: counter mode or a mask, repeats, strides."""
    for case in range(n):
        counter = case % 4 == 3
        total = int(rng.integers(0, 20 * lanes)) if counter else 0
        bits, lo, hi = mask_args(rng, lanes)
        is_set = int(rng.random() < 0.8)
        if counter and is_set:
            bits, lo, hi = 0, total, 0
        repeat = int(rng.choice([1, 2, 3, 5, 8, 17, 40]))
        src_blk = int(rng.choice([1, 1, 0, 2, 8]))
        src_rep = int(rng.choice([8, 8, 0, 1, 4, 16]))
        yield case, state(counter, total), is_set, bits, lo, hi, repeat, src_blk, src_rep


@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_whole_reduce(half, kind):
    rng = np.random.default_rng(3000 + 10 * half + KINDS.index(kind))
    esize = 2 if half else 4
    lanes = 256 // esize
    nsrc = (UB - SRC) // esize
    for case, st, is_set, bits, lo, hi, repeat, blk, rep in _level0_cases(rng, lanes, esize, 240):
        if case % 20 == 0:
            lm = ub(rng, half, kind)
        dst_rep = int(rng.choice([1, 1, 2, 0, 3]))
        # a destination apart from the source, or inside it (results land where later repeats read)
        dst = int(rng.choice([512, SRC, SRC + 64, SRC + 256 * esize])) if case % 3 == 0 else 512
        for op in (OP_SUM, OP_MAX, OP_MIN):
            for order in ((0,) if op == OP_SUM else (0, 1, 2, 3)):
                run_both(vr.whole_reduce, old_whole_reduce, lm, st, op, half, order, dst, 4096, SRC, nsrc, is_set,
                         bits, lo, hi, repeat, dst_rep, blk, rep, LOC)


@pytest.mark.parametrize("half", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_block_and_pair_reduce(half, kind):
    rng = np.random.default_rng(4000 + 10 * half + KINDS.index(kind))
    esize = 2 if half else 4
    lanes = 256 // esize
    nsrc = (UB - SRC) // esize
    for case, st, is_set, bits, lo, hi, repeat, blk, rep in _level0_cases(rng, lanes, esize, 240):
        if case % 20 == 0:
            lm = ub(rng, half, kind)
        dst_rep = int(rng.choice([1, 1, 2, 0, 3]))
        dst = int(rng.choice([512, SRC, SRC + 32, SRC + 256])) if case % 3 == 0 else 512
        for op in (OP_SUM, OP_MAX, OP_MIN):
            run_both(vr.block_reduce, old_block_reduce, lm, st, op, half, dst, 4096, SRC, nsrc, is_set, bits, lo, hi,
                     repeat, dst_rep, blk, rep, LOC)
        run_both(vr.pair_reduce_sum, old_pair_reduce_sum, lm, st, half, dst, 4096, SRC, nsrc, is_set, bits, lo, hi,
                 repeat, dst_rep, blk, rep, LOC)
