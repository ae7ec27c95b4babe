"""Atomic GM writes: set_atomic_add/max/min/none/type, the store-atomic config register, and the race checker.

Every core copies chunks of ``x`` into UB and out to the same GM vector ``y``;
with an atomic mode on, the copies combine with what ``y`` holds.  Values are
small integers where cores run in parallel (the float32 sum is then exact, so
the result does not depend on the order the cores add in); float16 rounding
is checked on one core, against NumPy rounding after every add.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc
from npuemu import errors

N = 64
PLAIN, ADD, MAX, MIN, WRONG_TYPE = range(5)
FULL = {"check": "full"}


@asc.jit
def accumulate(x: asc.GlobalAddress, y: asc.GlobalAddress, chunks: int, mode: int, odd_mode: int, peek: int):
    """Core b moves chunks ``b * chunks ... b * chunks + chunks - 1`` of ``x`` (N elements each) to ``y`` in
    atomic ``mode`` (``odd_mode`` on odd cores); with ``peek``, core 1 then reads ``y`` back."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, N * 4)
    t = buf.get(x.dtype)
    b = asc.get_block_idx()
    m = mode
    if b % 2 == 1:
        m = odd_mode
    if m == ADD:
        asc.set_atomic_add(x.dtype)
    elif m == MAX:
        asc.set_atomic_max(x.dtype)
    elif m == MIN:
        asc.set_atomic_min(x.dtype)
    elif m == WRONG_TYPE:
        asc.set_atomic_add(asc.int32)
    for k in range(chunks):
        asc.data_copy(t, xg[(b * chunks + k) * N:], N)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(yg, t, N)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_atomic_none()
    if peek and b == 1:
        asc.data_copy(t, yg, N)


def _parts(rng, cores, chunks, dtype=np.float32):
    return rng.integers(-50, 50, (cores * chunks, N)).astype(dtype)


@pytest.mark.parametrize("debug", [False, True])
def test_every_core_adds_its_partial_sums_into_one_vector(rng, debug):
    cores, chunks = 8, 3
    x = _parts(rng, cores, chunks)
    y0 = rng.integers(-50, 50, N).astype(np.float32)
    y = y0.copy()
    accumulate[cores](x, y, chunks, ADD, ADD, 0, debug=debug, **FULL)
    np.testing.assert_array_equal(y, y0 + x.sum(axis=0))


def test_no_update_is_lost_when_cores_add_in_parallel():
    """Thousands of adds per core on the thread pool: without the lock some of them get lost."""
    cores, chunks = 8, 2000
    x = np.ones((cores * chunks, N), np.float32)
    for _ in range(5):
        y = np.zeros(N, np.float32)
        accumulate[cores](x, y, chunks, ADD, ADD, 0)
        np.testing.assert_array_equal(y, cores * chunks)


def test_max_and_min_keep_the_extremes(rng):
    cores, chunks = 4, 2
    x = rng.standard_normal((cores * chunks, N)).astype(np.float32)
    y0 = rng.standard_normal(N).astype(np.float32)
    for mode, ref in ((MAX, np.maximum), (MIN, np.minimum)):
        y = y0.copy()
        accumulate[cores](x, y, chunks, mode, mode, 0, **FULL)
        np.testing.assert_array_equal(y, ref(y0, ref.reduce(x, axis=0)))


def test_float16_sums_round_to_nearest_even_after_every_add(rng):
    chunks = 6
    x = (rng.standard_normal((chunks, N)) * 300).astype(np.float16)
    y0 = (rng.standard_normal(N) * 1000).astype(np.float16)
    y = y0.copy()
    accumulate[1](x, y, chunks, ADD, ADD, 0)
    want = y0.copy()
    for part in x:
        want = (want.astype(np.float32) + part.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(y, want)
    assert not np.array_equal(want, (y0.astype(np.float64) + x.astype(np.float64).sum(axis=0)).astype(np.float16))


def test_int16_sums_wrap_around():
    x = np.full((2, N), 30000, np.int16)
    y = np.full(N, 10000, np.int16)
    accumulate[1](x, y, 2, ADD, ADD, 0)
    np.testing.assert_array_equal(y, np.full(N, (10000 + 60000 + 2 ** 15) % 2 ** 16 - 2 ** 15, np.int16))


def test_plain_copies_of_several_cores_to_the_same_bytes_race(rng):
    x = _parts(rng, 2, 1)
    y = np.zeros(N, np.float32)
    with pytest.raises(errors.RaceError, match=r"WAW: MTE3 write of GM bytes \[0, 256\) of GM argument 'y' .* "
                                               r"races with the MTE3 write by AIV 0 at .*asc.data_copy\(yg, t, N\)"):
        accumulate[2](x, y, 1, PLAIN, PLAIN, 0, **FULL)


def test_reading_the_accumulator_on_another_core_without_sync_races(rng):
    x = _parts(rng, 2, 1)
    y = np.zeros(N, np.float32)
    with pytest.raises(errors.RaceError) as info:
        accumulate[2](x, y, 1, ADD, ADD, 1, **FULL)
    msg = str(info.value)
    assert info.value.core == "AIV 1"
    assert "MTE2 read of GM bytes [0, 256)" in msg and "atomic add write by AIV 0" in msg, msg
    assert "atomic writes of one operation need no order among themselves" in msg


def test_atomic_writes_of_different_operations_race(rng):
    x = _parts(rng, 2, 1)
    y = np.zeros(N, np.float32)
    with pytest.raises(errors.RaceError, match=r"atomic max write .* races with the MTE3 atomic add write by AIV 0"):
        accumulate[2](x, y, 1, ADD, MAX, 0, **FULL)


def test_an_atomic_type_other_than_the_datas_faults_naming_the_line(rng):
    x = _parts(rng, 1, 1)
    y = np.zeros(N, np.float32)
    with pytest.raises(errors.AtomicError, match=r"atomic add is set for int32 .* but this movement writes "
                                                 r"float32 to GM") as info:
        accumulate[1](x, y, 1, WRONG_TYPE, WRONG_TYPE, 0)
    assert "asc.data_copy(yg, t, N)" in str(info.value)
    np.testing.assert_array_equal(y, 0)          # nothing was written


# ---------------------------------------------------------------------------- cores that synchronise


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def add_then_read(x: asc.GlobalAddress, y: asc.GlobalAddress, out: asc.GlobalAddress, sync: int):
    """Every core adds its chunk of ``x`` to ``y``; after ``sync_all`` (when ``sync``) core 0 copies ``y``
    to ``out``."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, N)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, N)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, N * 4)
    t = buf.get(asc.float32)
    b = asc.get_block_idx()
    asc.data_copy(t, xg[b * N:], N)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_atomic_add(asc.float32)
    asc.data_copy(yg, t, N)
    asc.set_atomic_none()
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if sync:
        asc.sync_all()
    if b == 0:
        asc.data_copy(t, yg, N)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        asc.data_copy(og, t, N)


def test_cores_that_wait_for_each_other_see_atomic_adds_unordered_but_not_a_read(rng):
    cores = 4
    x = _parts(rng, cores, 1)
    y, out = np.zeros(N, np.float32), np.zeros(N, np.float32)
    add_then_read[cores](x, y, out, 1, **FULL)
    np.testing.assert_array_equal(out, x.sum(axis=0))
    # cores resume in block order: core 0 reads before core 1 adds
    with pytest.raises(errors.RaceError, match=r"WAR: MTE3 atomic add write of GM bytes \[0, 256\) of GM argument "
                                               r"'y' .* races with the MTE2 read by AIV 0 at .*: no cross-core "
                                               r"synchronisation") as info:
        add_then_read[cores](x, np.zeros(N, np.float32), out, 0, **FULL)
    assert info.value.core == "AIV 1"


# ---------------------------------------------------------------------------- the register


@asc.jit
def config_kernel(out: asc.GlobalAddress):
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 10)
    a, b = asc.get_store_atomic_config()
    og.set_value(0, a)
    og.set_value(1, b)
    asc.set_atomic_max(asc.float16)
    a, b = asc.get_store_atomic_config()
    og.set_value(2, a)
    og.set_value(3, b)
    asc.set_atomic_type(asc.bfloat16)
    a, b = asc.get_store_atomic_config()
    og.set_value(4, a)
    og.set_value(5, b)
    asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_S8, asc.AtomicOp.ATOMIC_SUM)
    a, b = asc.get_store_atomic_config()
    og.set_value(6, a)
    og.set_value(7, b)
    asc.set_atomic_none()
    asc.set_atomic_min()
    a, b = asc.get_store_atomic_config()
    og.set_value(8, a)
    og.set_value(9, b)


def test_the_config_register_reads_back_what_the_setters_wrote():
    out = np.full(10, -1, np.int64)
    config_kernel[1](out)
    D = asc.AtomicDtype
    assert out.tolist() == [D.ATOMIC_NONE, 0, D.ATOMIC_F16, 1, D.ATOMIC_BF16, 1, D.ATOMIC_S8, 0, D.ATOMIC_NONE, 2]


@asc.jit
def bad_type_kernel(y: asc.GlobalAddress, which: asc.ConstExpr[int], op: int):
    if which == 0:
        asc.set_atomic_add(asc.uint8)
    elif which == 1:
        asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_F32, op)
    else:
        asc.set_atomic_type(asc.float64)


@pytest.mark.parametrize("which, message", [
    (0, r"set_atomic_add does not support uint8 on this platform \(supported: int8, int16, float16, bfloat16, "
        r"int32, float32\)"),
    (1, r"set_store_atomic_config's atomic_op must be a compile-time AtomicOp \(AtomicOp.ATOMIC_SUM\)"),
    (2, r"set_atomic_type does not support float64"),
])
def test_unsupported_types_and_runtime_config_are_compile_errors(which, message):
    with pytest.raises(npuemu.KernelTypeError, match=message):
        bad_type_kernel[1](np.zeros(8, np.float32), which, 0)


# ---------------------------------------------------------------------------- fixpipe: split-K matmul


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def split_k(a: asc.GlobalAddress, bt: asc.GlobalAddress, c: asc.GlobalAddress, M: int, Nn: int, K: int, ds: int,
            nz: asc.ConstExpr[bool]):
    """Core b multiplies the b-th half of K and adds its partial product into C with an atomic fixpipe
    (ND rows ``ds`` elements apart, or NZ with column blocks ``ds`` 32-byte units apart)."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(bt)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    kh = K // 2
    b = asc.get_block_idx()
    m1 = (M + 15) // 16
    n1 = (Nn + 15) // 16
    k1 = (kh + 7) // 8
    a1 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, m1 * 16 * k1 * 8)
    b1 = asc.LocalTensor(asc.float32, asc.TPosition.B1, 131072, n1 * 16 * k1 * 8)
    a2 = asc.LocalTensor(asc.float32, asc.TPosition.A2, 0, m1 * 16 * k1 * 8)
    b2 = asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, n1 * 16 * k1 * 8)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, m1 * n1 * 256)
    asc.data_copy(a1, ag[b * kh:], asc.Nd2NzParams(1, M, kh, 0, K, m1 * 16, 1, 0))
    asc.data_copy(b1, bg[b * kh:], asc.Nd2NzParams(1, Nn, kh, 0, K, n1 * 16, 1, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    for i in range(m1):
        asc.load_data(a2[i * k1 * 16 * 8:], a1[i * 16 * 8:], asc.LoadData2DParams(0, k1, m1, 0, 0, False, 0))
    asc.load_data(b2, b1, asc.LoadData2DParams(0, k1 * n1, 1, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(M, Nn, kh, 0, False, True))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.set_atomic_add(asc.float32)
    p = asc.FixpipeParamsV220(Nn, M, m1 * 16, ds, 0, 0, 1, 0, 0, 0)
    if nz:
        asc.fixpipe(cg, c1, p, asc.CFG_NZ)
    else:
        asc.fixpipe(cg, c1, p, config=asc.CFG_ROW_MAJOR)
    asc.set_atomic_none()


@pytest.mark.parametrize("nz", [False, True])
def test_split_k_matmul_accumulates_both_halves_with_atomic_fixpipe(rng, nz):
    M, Nn, K = 20, 32, 32
    a = rng.integers(-8, 8, (M, K)).astype(np.float32)
    bt = rng.integers(-8, 8, (Nn, K)).astype(np.float32)
    prod = a @ bt.T
    if nz:       # column blocks of 16, each 32 rows (M rounded up to 16s) of 16 elements: rows 20..31 untouched
        c0 = rng.integers(-100, 100, 2 * 32 * 16).astype(np.float32)
        want = c0.copy()
        for r in range(M):
            for col in range(Nn):
                want[(col // 16) * 32 * 16 + r * 16 + col % 16] += prod[r, col]
        ds = 32 * 16 * 4 // 32
    else:
        c0 = rng.integers(-100, 100, (M, Nn)).astype(np.float32)
        want, ds = c0 + prod, Nn
    c = c0.copy()
    split_k[2](a, bt, c, M, Nn, K, ds, nz, **FULL)
    np.testing.assert_array_equal(c, want)


def test_nan_and_signed_zeros_under_max_and_min(rng):
    nan = np.float32("nan")
    y0 = np.array([nan, 1, 2, -0.0, 0.0, 5] + [0] * (N - 6), np.float32)
    x = np.array([[3, nan, 1, 0.0, -0.0, nan] + [0] * (N - 6)], np.float32)
    for mode in (MAX, MIN):
        y = y0.copy()
        accumulate[1](x, y, 1, mode, mode, 0)
        assert np.isnan(y[:3]).tolist() == [True, True, False] and np.isnan(y[5])
        assert y[2] == (2 if mode == MAX else 1)
        assert np.signbit(y[3:5]).tolist() == [True, False]          # ties keep GM's zero


def test_an_atomic_write_onto_an_uninitialised_workspace_reads_garbage(rng):
    x = _parts(rng, 1, 1)
    y = np.zeros(N, np.float32)
    with pytest.raises(errors.UninitializedReadError, match=r"MTE3 atomic add write of GM bytes \[0, 256\) of GM "
                                                            r"argument 'y' .* which nothing has written"):
        accumulate[1](x, npuemu.gm_buffer(y, initialized=False), 1, ADD, ADD, 0, **FULL)
    y = np.zeros(N, np.float32)
    accumulate[1](x, y, 1, PLAIN, PLAIN, 0, **FULL)              # plain stores: y is simply overwritten
    np.testing.assert_array_equal(y, x[0])


def test_bfloat16_sums_round_to_nearest_even(rng):
    from cube_helpers import bf16_bits

    def bf16(bits):
        return (bits.astype(np.uint32) << 16).view(np.float32)

    x_bits = bf16_bits((rng.standard_normal((3, N)) * 100).astype(np.float32))
    y_bits = bf16_bits((rng.standard_normal(N) * 1000).astype(np.float32))
    want = y_bits.copy()
    for part in x_bits:
        want = bf16_bits(bf16(want) + bf16(part))
    accumulate[1](npuemu.gm_buffer(x_bits, asc.bfloat16), npuemu.gm_buffer(y_bits, asc.bfloat16), 3, ADD, ADD, 0)
    np.testing.assert_array_equal(y_bits, want)


@asc.jit
def strided_out(x: asc.GlobalAddress, y: asc.GlobalAddress, pad: int):
    """Adds 64 float32 of ``x`` into ``y`` in 4 blocks: a strided data_copy (16 elements per block, 32 bytes
    apart in GM), or a data_copy_pad (12 elements of each 16 in UB, 8 bytes apart in GM)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)
    t = buf.get(asc.float32)
    asc.data_copy(t, xg, 64)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.set_atomic_add(asc.float32)
    if pad:
        asc.data_copy_pad(yg, t, asc.DataCopyExtParams(4, 48, 0, 8, 0))
    else:
        asc.data_copy(yg, t, asc.DataCopyParams(4, 2, 0, 1))
    asc.set_atomic_none()


@pytest.mark.parametrize("pad", [0, 1])
def test_strided_and_padded_copies_add_only_the_bytes_they_write(rng, pad):
    x = rng.integers(-50, 50, 64).astype(np.float32)
    y0 = rng.integers(-50, 50, 100).astype(np.float32)
    y = y0.copy()
    strided_out[1](x, y, pad, **FULL)
    want = y0.copy()
    for i in range(4):
        if pad:
            want[i * 14:i * 14 + 12] += x[i * 16:i * 16 + 12]
        else:
            want[i * 24:i * 24 + 16] += x[i * 16:i * 16 + 16]
    np.testing.assert_array_equal(y, want)
