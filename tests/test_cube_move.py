"""Cube-side data movement: ND2NZ data_copy, load_data (plain, transposed, V2), load_data_with_transpose,
init_const_value; and the errors of the cube instructions.

The instruction-level tests call the compiled instructions on a fresh AIC
core state and compare the bytes with NumPy references written here from
the documented layouts; the kernel-level tests check the errors users see.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.isa import cube_move as cm
from npuemu.isa.fault import Fault
from npuemu.language.enums import Hardware
from npuemu.runtime.cores import AIC, AIV, CoreSpec, new_core_state
from npuemu.platform import default_platform
from npuemu.isa import state as S

AIC_K = asc.KernelType.AIC_ONLY


def _core(kind=AIC):
    st, lm = new_core_state(CoreSpec(kind, 0, 1), default_platform())
    return st, lm


def _base(st, hw):
    return int(st[S.SEG_BASE + hw])


# ---------------------------------------------------------------------------- NumPy references


def nd_to_nz(x: np.ndarray, rows_pad: int) -> np.ndarray:
    """(R, C) -> NZ bytes: 32-byte-wide column strips, each ``rows_pad`` rows tall, zero padding."""
    es = x.dtype.itemsize
    c0 = 32 // es
    r, c = x.shape
    c1 = -(-c // c0)
    out = np.zeros((c1, rows_pad, c0), x.dtype)
    for j in range(c1):
        strip = x[:, j * c0:(j + 1) * c0]
        out[j, :r, :strip.shape[1]] = strip
    return out


# ---------------------------------------------------------------------------- ND2NZ


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8])
def test_nd2nz_single_matrix_pads_rows_to_32_bytes(dtype, rng):
    st, lm = _core()
    r, c = 19, 37
    x = (rng.standard_normal((r, c)) * 50).astype(dtype)
    g = np.frombuffer(x.tobytes(), np.uint8).copy()
    l1 = _base(st, Hardware.L1)
    es = x.dtype.itemsize
    rows_pad = 32
    cm.nd2nz(st, lm, g, l1, 8192, 0, 0, -1, 1, r, c, 0, c, rows_pad, 1, 0, es, 0)
    want = nd_to_nz(x, rows_pad)
    got = lm[l1:l1 + want.nbytes].view(dtype).reshape(want.shape)
    np.testing.assert_array_equal(got[:, :r], want[:, :r])        # data rows, zero-padded to 32 bytes
    assert (got[:, r:].view(np.uint8) == 0xFF).all()               # rows past n_value are not written


def test_nd2nz_several_matrices_and_strides(rng):
    st, lm = _core()
    x = rng.standard_normal((2, 5, 24)).astype(np.float16)       # two 5 x 24 matrices
    g = np.frombuffer(x.tobytes(), np.uint8).copy()
    l1 = _base(st, Hardware.L1)
    # matrices 120 elements apart in GM; in L1 the second at element 512; rows 2 blocks apart; strips 11 blocks
    cm.nd2nz(st, lm, g, l1, 4096, 0, 0, -1, 2, 5, 24, 120, 24, 11, 2, 512, 2, 0)
    for i in range(2):
        for j in range(5):
            for k in range(2):
                at = l1 + i * 512 * 2 + j * 2 * 32 + k * 11 * 32
                blk = lm[at:at + 32].view(np.float16)
                src = x[i, j, k * 16:(k + 1) * 16]
                np.testing.assert_array_equal(blk[:src.size], src)
                assert (blk[src.size:] == 0).all()


def test_nd2nz_parameter_ranges():
    st, lm = _core()
    g = np.zeros(64, np.uint8)
    l1 = _base(st, Hardware.L1)
    with pytest.raises(Fault):          # dst_nz_c0_stride 0 is outside [1, 16384]
        cm.nd2nz(st, lm, g, l1, 64, 0, 0, -1, 1, 1, 16, 0, 16, 0, 1, 0, 2, 0)
    with pytest.raises(Fault):          # misaligned L1 address
        cm.nd2nz(st, lm, g, l1 + 2, 64, 0, 0, -1, 1, 1, 16, 0, 16, 1, 1, 0, 2, 0)


# ---------------------------------------------------------------------------- load_data


def test_load2d_strides_gaps_and_transpose(rng):
    st, lm = _core()
    l1, l0a, l0b = _base(st, Hardware.L1), _base(st, Hardware.L0A), _base(st, Hardware.L0B)
    fr = rng.standard_normal((8, 16, 16)).astype(np.float16)          # 8 fractals in L1
    lm[l1:l1 + fr.nbytes] = fr.view(np.uint8).ravel()
    # start 1, 3 repeats, source step 2 (fractals 1, 3, 5), destination gap 1 (slots 0, 2, 4)
    cm.load2d(st, lm, l0a, 4096, Hardware.L0A, l1, 2048, Hardware.L1, 1, 3, 2, 1, False, 0, 2, 0)
    got = lm[l0a:l0a + 5 * 512].view(np.float16).reshape(5, 16, 16)
    for r, (s, d) in enumerate(zip((1, 3, 5), (0, 2, 4))):
        np.testing.assert_array_equal(got[d], fr[s])
    cm.load2d(st, lm, l0b, 4096, Hardware.L0B, l1, 2048, Hardware.L1, 0, 2, 1, 0, True, 0, 2, 0)
    got = lm[l0b:l0b + 2 * 512].view(np.float16).reshape(2, 16, 16)
    np.testing.assert_array_equal(got[0], fr[0].T)
    np.testing.assert_array_equal(got[1], fr[1].T)


def test_load2d_rejects_transposed_32_bit_and_bad_ranges():
    st, lm = _core()
    l1, l0a = _base(st, Hardware.L1), _base(st, Hardware.L0A)
    with pytest.raises(Fault) as info:
        cm.load2d(st, lm, l0a, 1024, Hardware.L0A, l1, 1024, Hardware.L1, 0, 1, 0, 0, True, 0, 4, 0)
    assert info.value.args[0] == cm.F_TRANSPOSE_TYPE
    for repeat in (0, 256):
        with pytest.raises(Fault):
            cm.load2d(st, lm, l0a, 1 << 20, Hardware.L0A, l1, 1 << 20, Hardware.L1, 0, repeat, 1, 0, False, 0, 2, 0)
    with pytest.raises(Fault):          # L0A address not 512-byte aligned
        cm.load2d(st, lm, l0a + 32, 1024, Hardware.L0A, l1, 1024, Hardware.L1, 0, 1, 0, 0, False, 0, 2, 0)
    with pytest.raises(Fault):          # source fractal 2 of a 2-fractal tensor
        cm.load2d(st, lm, l0a, 1024, Hardware.L0A, l1, 512, Hardware.L1, 2, 1, 0, 0, False, 0, 2, 0)


def test_load2d_v2_block_of_fractals(rng):
    st, lm = _core()
    l1, l0a = _base(st, Hardware.L1), _base(st, Hardware.L0A)
    fr = rng.integers(0, 1000, (12, 256)).astype(np.uint16)       # a 4-tall x 3-wide column-major grid
    lm[l1:l1 + fr.nbytes] = fr.view(np.uint8).ravel()
    # block of 2 x 2 fractals from (m=1, k=1); destination grid columns 3 fractals tall
    cm.load2d_v2(st, lm, l0a, 4096, Hardware.L0A, l1, 4096, Hardware.L1, 1, 1, 2, 2, 4, 3, False, 2, 0)
    got = lm[l0a:l0a + 6 * 512].view(np.uint16).reshape(6, 256)
    for kk in range(2):
        for mm in range(2):
            np.testing.assert_array_equal(got[kk * 3 + mm], fr[(1 + kk) * 4 + 1 + mm])


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.float16])
def test_load_data_with_transpose_squares(dtype, rng):
    st, lm = _core()
    l1, l0b = _base(st, Hardware.L1), _base(st, Hardware.L0B)
    es = np.dtype(dtype).itemsize
    k0 = 32 // es
    nf = 1 if es == 2 else 2
    src = (rng.standard_normal((2 * nf, 16, k0)) * 40).astype(dtype)      # two squares of nf fractals
    lm[l1:l1 + src.nbytes] = src.view(np.uint8).ravel()
    # 2 repeats, source step 1 square, destination gap 1, fractal gap 2
    cm.load2d_transpose(st, lm, l0b, 8192, Hardware.L0B, l1, 8192, Hardware.L1, 0, 2, 1, 1, 2, 0, es, 0)
    for r in range(2):
        f = src[r * nf:(r + 1) * nf]
        if es == 4:
            square = np.concatenate([f[0], f[1]], axis=1)       # [F0 | F1], 16 x 16
            t = square.T
            halves = [t[:, :8], t[:, 8:]]
        elif es == 1:
            square = np.concatenate([f[0], f[1]], axis=0)       # [F0; F1], 32 x 32
            t = square.T
            halves = [t[:16], t[16:]]
        else:
            halves = [f[0].T]
        first = r * 2                                           # (1 + dst_gap) fractals per repeat
        for h, want in enumerate(halves):
            slot = first + h * 3                                # (1 + dst_frac_gap)
            got = lm[l0b + slot * 512:l0b + (slot + 1) * 512].view(dtype).reshape(16, k0)
            np.testing.assert_array_equal(got, want)


def test_init_const_value_fills_blocks_with_gaps():
    st, lm = _core()
    l1, l0a = _base(st, Hardware.L1), _base(st, Hardware.L0A)
    bits = int(np.float32(2.5).view(np.uint32))
    cm.init_const(st, lm, l1, 1024, Hardware.L1, 3, 2, 1, bits, 4, 0)     # 3 x (2 blocks of 32 B, gap 1)
    v = lm[l1:l1 + 9 * 32].view(np.float32).reshape(9, 8)
    for blk in range(9):
        if blk % 3 == 2:
            assert (v[blk].view(np.uint32) == 0xFFFFFFFF).all()
        else:
            assert (v[blk] == 2.5).all()
    cm.init_const(st, lm, l0a, 4096, Hardware.L0A, 1, 2, 0, 0x3C00, 2, 0)    # 2 fractals of half 1.0
    assert (lm[l0a:l0a + 1024].view(np.float16) == 1.0).all()


def test_cube_instructions_fault_on_an_aiv_core():
    st, lm = _core(AIV)
    with pytest.raises(Fault):
        cm.init_const(st, lm, 0, 1024, Hardware.UB, 1, 1, 0, 0, 2, 0)


# ---------------------------------------------------------------------------- kernel-level errors


@asc.jit(kernel_type=AIC_K)
def rowsum_kernel(a: asc.GlobalAddress, c: asc.GlobalAddress, a2_addr: int, repeat: int, c_addr: int,
                  c_len: int, m: int):
    """C (16 x 16) = A (16 x 16, f16) @ ones: init_const_value builds B, runtime addresses for the errors."""
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
    a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, a2_addr, 256)
    b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
    c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, c_addr, c_len)
    asc.data_copy(a1, ag, asc.Nd2NzParams(1, 16, 16, 0, 16, 16, 1, 0))
    asc.init_const_value(b2, asc.InitConstValueParams(1, 1, 0, 1.0))
    asc.set_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE1, 0)
    asc.load_data(a2, a1, asc.LoadData2DParams(0, repeat, 0, 0, 0, False, 0))
    asc.set_flag(asc.HardEvent.MTE1_M, 0)
    asc.wait_flag(asc.HardEvent.MTE1_M, 0)
    asc.mmad(c1, a2, b2, asc.MmadParams(m, 16, 16))
    asc.set_flag(asc.HardEvent.M_FIX, 0)
    asc.wait_flag(asc.HardEvent.M_FIX, 0)
    asc.fixpipe(cg, c1, asc.FixpipeParamsV220(16, 16, 16, 16))


def _rowsum(a2_addr=0, repeat=1, c_addr=0, c_len=256, m=16, **launch):
    a = np.arange(256, dtype=np.float16).reshape(16, 16) / 64
    c = np.zeros((16, 16), np.float32)
    rowsum_kernel[1](a, c, a2_addr, repeat, c_addr, c_len, m, **launch)
    return a, c


def test_rowsum_correct_twin_runs_clean():
    a, c = _rowsum(check="full")
    np.testing.assert_allclose(c, np.repeat(a.astype(np.float64).sum(1, keepdims=True), 16, 1), rtol=1e-6)


def test_misaligned_l0a_address():
    with pytest.raises(errors.AlignmentError, match=r"starts at byte 256 of L0A, which is not 512-byte aligned"):
        _rowsum(a2_addr=256)


def test_load_data_repeat_out_of_range():
    with pytest.raises(errors.ParamRangeError, match=r"repeat_times = 0 is outside its range \[1, 255\]"):
        _rowsum(repeat=0)


def test_mmad_writing_past_its_l0c_tensor():
    with pytest.raises(errors.BoundsError, match=r"reaches byte 1024 of the destination tensor, which holds "
                                                 r"only 512 bytes"):
        _rowsum(c_len=128)              # a 16 x 16 float32 fractal into a tensor of 128 elements
    with pytest.raises(errors.CapacityError):
        _rowsum(c_addr=131072 - 512)    # the tensor itself runs past the end of L0C


def _compile_error(fn, *args, match):
    k = asc.jit(kernel_type=AIC_K)(fn)
    with pytest.raises(errors.KernelTypeError, match=match) as info:
        k[1](*args)
    assert "test_cube_move.py" in str(info.value)


def test_mmad_with_an_a1_tensor_as_fm():
    def bad(c: asc.GlobalAddress):
        a1 = asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
        c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.mmad(c1, a1, b2, asc.MmadParams(16, 16, 16))
    _compile_error(bad, np.zeros(4, np.float32), match=r"fm \(the left matrix\) is in position A1; it must be in A2")


def test_fixpipe_from_a_non_co1_tensor():
    def bad(c: asc.GlobalAddress):
        cg = asc.GlobalTensor()
        cg.set_global_buffer(c)
        a1 = asc.LocalTensor(asc.float32, asc.TPosition.A1, 0, 256)
        asc.fixpipe(cg, a1, asc.FixpipeParamsV220(16, 16, 16, 16))
    _compile_error(bad, np.zeros(4, np.float32), match=r"src must be a LocalTensor in CO1")


def test_transposed_load_of_32_bit_data():
    def bad(c: asc.GlobalAddress):
        b1 = asc.LocalTensor(asc.float32, asc.TPosition.B1, 0, 256)
        b2 = asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, 256)
        asc.load_data(b2, b1, asc.LoadData2DParams(0, 1, 0, 0, 0, True, 0))
    _compile_error(bad, np.zeros(4, np.float32), match=r"if_transpose=True needs a 16-bit element type")


def test_unsupported_mmad_dtypes():
    def bad(c: asc.GlobalAddress):
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
        b2 = asc.LocalTensor(asc.float32, asc.TPosition.B2, 0, 256)
        c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 16))
    _compile_error(bad, np.zeros(4, np.float32), match=r"mmad does not support float16 x float32")


def test_cube_instruction_in_an_aiv_kernel():
    @asc.jit
    def bad(c: asc.GlobalAddress):
        a2 = asc.LocalTensor(asc.float16, asc.TPosition.A2, 0, 256)
        b2 = asc.LocalTensor(asc.float16, asc.TPosition.B2, 0, 256)
        c1 = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 256)
        asc.mmad(c1, a2, b2, asc.MmadParams(16, 16, 16))
    with pytest.raises(errors.KernelTypeError, match=r"mmad is a cube instruction and this kernel is AIV_ONLY"):
        bad[1](np.zeros(4, np.float32))
