"""``asc.cast``: every conversion and rounding mode bit-exact, both call forms, and the errors.

Every supported (src, dst, mode) runs through the compiled instruction on a
scratch UB image (exhaustive for 8- and 16-bit sources); kernels then check
the frontend, the count form, a strided level-0 form and both execution modes.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.frontend.rules.vec_cast import MODES
from npuemu.frontend.rules.common import suffix
from npuemu.isa import state as S
from npuemu.isa import vec_cast as isa
from npuemu.isa.fault import Fault
from level0_layout import level0_elements
from test_rounding import (ALL_MODES, NONE, ROUND, f32_samples, ref_f32_to_bf16, ref_integral, ref_to_f16, ref_to_f32,
                           ref_to_int)

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

RM = asc.RoundMode
STORAGE = {asc.float32: np.uint32, asc.float16: np.uint16, asc.bfloat16: np.uint16, asc.int8: np.int8,
           asc.uint8: np.uint8, asc.int16: np.int16, asc.int32: np.int32, asc.int64: np.int64}


# --------------------------------------------------------------------------- every pair, on a scratch UB


def _source(d, rng) -> np.ndarray:
    """Storage values to convert from dtype ``d``: exhaustive up to 16 bits, sampled above."""
    if d in (asc.float16, asc.bfloat16, asc.int16):
        return np.arange(1 << 16, dtype=np.uint16).view(STORAGE[d])
    if d in (asc.int8, asc.uint8):
        return np.arange(256, dtype=np.uint8).view(STORAGE[d])
    if d is asc.float32:
        return f32_samples(rng, 20_000)
    if d is asc.int32:
        edge = [0, 1, -1, (1 << 31) - 1, -(1 << 31), (1 << 24) + 1, (1 << 24) + 3, -(1 << 25) - 6, 32767, 32768,
                -32768, -32769]
        return np.concatenate([np.array(edge, np.int32), rng.integers(-(1 << 31), 1 << 31, 20_000).astype(np.int32),
                               rng.integers(-70000, 70000, 2000).astype(np.int32)])
    edge = [0, -1, (1 << 53) - 1, (1 << 31), -(1 << 31) - 1, (1 << 31) - 1, -(1 << 53) + 3, (1 << 25) + 3]
    return np.concatenate([np.array(edge, np.int64), rng.integers(-(1 << 53), 1 << 53, 20_000),
                           rng.integers(-(1 << 33), 1 << 33, 2000)])


def _value(d, s: np.ndarray) -> np.ndarray:
    """Exact float64 values of storage ``s`` of dtype ``d`` (NaN payloads aside)."""
    if d is asc.float32:
        return s.view(np.float32).astype(np.float64)
    if d is asc.float16:
        return s.view(np.float16).astype(np.float64)
    if d is asc.bfloat16:
        return (s.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return s.astype(np.float64)


def _reference(src, dst, mode: int, s: np.ndarray) -> np.ndarray:
    x = _value(src, s)
    if dst is asc.float16:
        return ref_to_f16(x, mode) if src is not asc.float32 else ref_to_f16(s.view(np.float32), mode)
    if dst is asc.bfloat16:
        return ref_f32_to_bf16(s, mode)
    if dst is asc.float32:
        if src is asc.float32:
            return ref_integral(s, mode)
        if src is asc.float16:                       # exact; a NaN keeps its payload and becomes quiet
            out = s.view(np.float16).astype(np.float32).view(np.uint32).copy()
            nan = np.isnan(x)
            u = s[nan].astype(np.uint32)
            out[nan] = ((u & 0x8000) << 16) | 0x7FC00000 | ((u & 0x3FF) << 13)
            return out
        if src is asc.bfloat16:
            return s.astype(np.uint32) << 16
        return ref_to_f32(x, mode)
    if src.is_float:
        return ref_to_int(x, mode, STORAGE[dst])
    info = np.iinfo(STORAGE[dst])
    return np.clip(s.astype(np.int64), info.min, info.max).astype(STORAGE[dst])


def _run_isa(code: int, mode: int, s: np.ndarray, dst_storage) -> np.ndarray:
    n = s.size
    d_off = (s.nbytes + 31) // 32 * 32
    lm = np.zeros(d_off + n * np.dtype(dst_storage).itemsize, np.uint8)
    lm[:s.nbytes] = s.view(np.uint8)
    st = np.zeros(S.STATE_SIZE, np.int64)
    isa.cast(st, lm, d_off, n, 0, n, code, mode, n, 0)
    return lm[d_off:].view(dst_storage)


def test_table_matches_the_instruction():
    assert {(suffix(s), suffix(d)) for s, d in MODES} == set(isa.PAIRS)


@pytest.mark.parametrize("pair", sorted(MODES, key=lambda p: (p[0].name, p[1].name)),
                         ids=lambda p: f"{p[0].name}-{p[1].name}")
def test_every_pair_and_mode(pair, rng):
    src, dst = pair
    s = _source(src, rng)
    code = isa.PAIRS[(suffix(src), suffix(dst))]
    for mode in sorted(MODES[pair]):
        got = _run_isa(code, int(mode), s, STORAGE[dst])
        want = _reference(src, dst, int(mode), s)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, (mode.name, [(s[i], got[i], want[i]) for i in bad[:4]])


def test_float16_round_trip_is_exact_in_every_mode():
    h = np.arange(1 << 16, dtype=np.uint16)
    wide = _run_isa(isa.F16_F32, NONE, h, np.uint32)
    for mode in ALL_MODES:
        back = _run_isa(isa.F32_F16, mode, wide, np.uint16)
        ok = ~np.isnan(h.view(np.float16))
        np.testing.assert_array_equal(back[ok], h[ok], err_msg=f"mode {mode}")


def test_level0_source_block_stride_zero():
    """src_blk_stride 0 re-reads the source's first block for every block of the repeat."""
    h = np.arange(16, dtype=np.float16)
    lm = np.zeros(64 + 64 * 4, np.uint8)
    lm[:32] = h.view(np.uint8)
    lm[64:] = np.full(64, -1.0, np.float32).view(np.uint8)
    st = np.zeros(S.STATE_SIZE, np.int64)
    args = (isa.F16_F32, NONE, True, False, 20, 0, 1, 1, 0, 8, 0, 0)      # 20 lanes, src_blk_stride 0
    isa.cast_l0(st, lm, 64, 64, 0, 16, *args)
    out = lm[64:].view(np.float32)
    np.testing.assert_array_equal(out[:20], h[np.arange(20) % 16].astype(np.float32))
    assert (out[20:] == -1).all()
    with pytest.raises(Fault):                   # the lanes read all 16 elements of block 0; 8 are there
        isa.cast_l0(st, lm, 64, 64, 0, 8, *args)


# --------------------------------------------------------------------------- kernels

ALL_RM = (RM.CAST_NONE, RM.CAST_RINT, RM.CAST_FLOOR, RM.CAST_CEIL, RM.CAST_ROUND, RM.CAST_TRUNC, RM.CAST_ODD)


@asc.jit
def cast_modes(x: asc.GlobalAddress, y: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """float32 -> float16 in every rounding mode: y[i*n:(i+1)*n] is mode i."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, n * 6)
    a = buf.get_with_offset(n, 0, asc.float32)
    b = buf.get_with_offset(n, n * 4, asc.float16)
    asc.data_copy(a, xg, n)
    for i in asc.static_range(7):
        asc.cast(b, a, ALL_RM[i], n)
        asc.data_copy(yg[i * n:], b, n)


def test_count_form_every_mode(mode, rng):
    n = 2048
    x = f32_samples(rng, n)[:n].view(np.float32)
    y = np.zeros(7 * n, np.float16)
    cast_modes[1](x, y, n, **mode)
    for i, m in enumerate(ALL_RM):
        np.testing.assert_array_equal(y[i * n:(i + 1) * n].view(np.uint16), ref_to_f16(x.astype(np.float64), int(m)),
                                      err_msg=m.name)


WIDEN_MASK = 0xF0F0_0000_FFFF_0001


@asc.jit
def cast_level0(h: asc.GlobalAddress, f: asc.GlobalAddress, wide: asc.GlobalAddress, ints: asc.GlobalAddress):
    """Strided level-0 casts: float16 -> float32 with a bit mask, float32 -> int32 with a continuous mask."""
    hg = asc.GlobalTensor()
    hg.set_global_buffer(h)
    fg = asc.GlobalTensor()
    fg.set_global_buffer(f)
    wg = asc.GlobalTensor()
    wg.set_global_buffer(wide)
    ig = asc.GlobalTensor()
    ig.set_global_buffer(ints)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256 * 2 + 256 * 4 * 3)
    th = buf.get_with_offset(256, 0, asc.float16)
    tf = buf.get_with_offset(256, 512, asc.float32)
    tw = buf.get_with_offset(256, 1536, asc.float32)
    ti = buf.get_with_offset(256, 2560, asc.int32)
    asc.data_copy(th, hg, 256)
    asc.data_copy(tf, fg, 256)
    asc.data_copy(tw, wg, 256)              # what the masked-off lanes must keep
    asc.data_copy(ti, ig, 256)
    asc.cast(tw, th, asc.RoundMode.CAST_NONE, [WIDEN_MASK], 2,
             asc.UnaryRepeatParams(dst_blk_stride=2, src_blk_stride=1, dst_rep_stride=16, src_rep_stride=3))
    asc.cast(ti, tf, asc.RoundMode.CAST_ROUND, 40, 3, asc.UnaryRepeatParams(1, 1, 8, 10))
    asc.data_copy(wg, tw, 256)
    asc.data_copy(ig, ti, 256)


def test_level0_strided(mode, rng):
    h = (rng.standard_normal(256) * 100).astype(np.float16)
    f = (rng.standard_normal(256) * 1e3).astype(np.float32)
    f[:8] = [0.5, 1.5, -0.5, -2.5, 2.5, 3e9, -3e9, np.nan]
    wide = np.full(256, -7.0, np.float32)
    ints = np.full(256, 12345, np.int32)
    cast_level0[1](h, f, wide, ints, **mode)

    bit = lambda e: (WIDEN_MASK >> e) & 1 == 1
    src = level0_elements(2, 64, bit, 1, 3, 16)
    dst = level0_elements(2, 64, bit, 2, 16, 8)
    want = np.full(256, -7.0, np.float32)
    want[dst] = h[src].astype(np.float32)
    np.testing.assert_array_equal(wide, want)

    src = level0_elements(3, 64, lambda e: e < 40, 1, 10, 8)
    dst = level0_elements(3, 64, lambda e: e < 40, 1, 8, 8)
    want = np.full(256, 12345, np.int32)
    want[dst] = ref_to_int(f[src].astype(np.float64), ROUND, np.int32)
    np.testing.assert_array_equal(ints, want)
    assert list(ints[:8]) == [1, 2, -1, -3, 3, 2**31 - 1, -2**31, 0]


@asc.jit
def cast_checked(x: asc.GlobalAddress, y: asc.GlobalAddress, count: int, off: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 64 * 6)
    a = buf.get_with_offset(64, 0, asc.float32)
    b = buf.get_with_offset(64, 256, asc.float16)
    asc.data_copy(a, xg, 64)
    asc.cast(b[off:], a, asc.RoundMode.CAST_RINT, count)
    asc.data_copy(yg, b, 64)


def test_runtime_faults():
    x = np.ones(64, np.float32)
    y = np.zeros(64, np.float16)
    cast_checked[1](x, y, 64, 0)
    assert (y == 1).all()
    with pytest.raises(errors.BoundsError, match="touches 65 elements"):
        cast_checked[1](x, y, 65, 0)
    with pytest.raises(errors.BoundsError):
        cast_checked[1](x, y, 64, 16)          # dst b[16:] holds only 48
    with pytest.raises(errors.AlignmentError):
        cast_checked[1](x, y, 16, 1)           # b[1:] starts 2 bytes into a block


def _compile_error(body):
    """Launch a kernel that runs ``body(a16, a32, b16, i32)`` on small UB tensors; returns the exception."""
    @asc.jit
    def k(x: asc.GlobalAddress):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, 1024)
        a16 = buf.get_with_offset(64, 0, asc.float16)
        a32 = buf.get_with_offset(64, 128, asc.float32)
        b16 = buf.get_with_offset(64, 384, asc.bfloat16)
        i32 = buf.get_with_offset(64, 512, asc.int32)
        body(a16, a32, b16, i32)

    with pytest.raises(errors.KernelTypeError) as info:
        k[1](np.zeros(8, np.float32))
    return str(info.value)


@asc.jit
def _f16_to_bf16(a16, a32, b16, i32):
    asc.cast(b16, a16, asc.RoundMode.CAST_RINT, 64)


@asc.jit
def _f32_to_bf16_none(a16, a32, b16, i32):
    asc.cast(b16, a32, asc.RoundMode.CAST_NONE, 64)


@asc.jit
def _f32_to_i32_odd(a16, a32, b16, i32):
    asc.cast(i32, a32, asc.RoundMode.CAST_ODD, 64, 1, asc.UnaryRepeatParams())


@asc.jit
def _i32_to_f16(a16, a32, b16, i32):
    asc.cast(a16, i32, asc.RoundMode.CAST_NONE, 64)


@asc.jit
def _global_dst(a16, a32, b16, i32):
    g = asc.GlobalTensor()
    asc.cast(g, a32, asc.RoundMode.CAST_RINT, 64)


@asc.jit
def _runtime_mode(a16, a32, b16, i32):
    m = 1
    m = m + 1
    asc.cast(a16, a32, m, 64)


def test_unsupported_pairs_and_modes_fail_at_compile_time():
    msg = _compile_error(_f16_to_bf16)
    assert "float16 -> bfloat16" in msg and "no such conversion" in msg and "CAST_RINT" in msg
    msg = _compile_error(_f32_to_bf16_none)
    assert "float32 -> bfloat16 does not support CAST_NONE" in msg and "CAST_TRUNC" in msg
    msg = _compile_error(_f32_to_i32_odd)
    assert "float32 -> int32 does not support CAST_ODD" in msg
    assert "set_deq_scale" in _compile_error(_i32_to_f16)
    assert "compile-time constant" in _compile_error(_runtime_mode)
    assert "dst must be a LocalTensor" in _compile_error(_global_dst)
