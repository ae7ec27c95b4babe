"""npuemu.formats against the documented definitions of ND, NZ, ZZ and ZN.

The hand-computed cases check every element of a small fractal grid with the
index formula of each format (Mmad and LoadData docs, ascend-c.md §3.4); the
property tests check that the conversions round-trip for any shape, dtype and
batch, and that padding holds ``pad_value``.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npuemu.formats import (L0C_FRACTAL, FormatError, c0, fractal_shape, nd_to_nz, nd_to_zn, nd_to_zz, nz_to_nd,
                            zn_to_nd, zz_to_nd)
from npuemu.testing import profiles

try:
    import ml_dtypes
    DTYPES = [np.int8, np.float16, np.float32, np.int32, ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    DTYPES = [np.int8, np.float16, np.float32, np.int32]


# ------------------------------------------------------------------------------ fractal shapes


@pytest.mark.parametrize("dtype, l1, l0b", [(np.int8, (16, 32), (32, 16)), (np.float16, (16, 16), (16, 16)),
                                            (np.float32, (16, 8), (8, 16)), (np.int32, (16, 8), (8, 16))])
def test_fractal_shapes_are_512_bytes(dtype, l1, l0b):
    assert fractal_shape(dtype, "L1") == fractal_shape(dtype, "A1") == fractal_shape(dtype, "L0A") == l1
    assert fractal_shape(dtype, "L0B") == fractal_shape(dtype, "B2") == l0b
    assert fractal_shape(dtype, "L0C") == fractal_shape(dtype, "CO1") == (16, 16)
    assert l1[0] * l1[1] * np.dtype(dtype).itemsize == 512
    assert c0(dtype) == l1[1]


def test_bad_arguments_raise_format_errors():
    with pytest.raises(FormatError, match="unknown position 'UB'"):
        fractal_shape(np.float16, "UB")
    with pytest.raises(FormatError, match="8-, 16- or 32-bit"):
        c0(np.float64)
    with pytest.raises(FormatError, match="at least 2 dimensions"):
        nd_to_nz(np.zeros(5, np.float16))
    with pytest.raises(FormatError, match="20 x 20 matrix in 16 x 16 fractals needs 1024 elements, the buffer has 100"):
        nz_to_nd(np.zeros(100, np.float16), (20, 20))
    with pytest.raises(FormatError, match="larger than the padded matrix"):
        nz_to_nd(nd_to_nz(np.zeros((16, 16), np.float16)), (17, 16))


# ------------------------------------------------------------------------------ hand-computed cases
# A 2 x 3 grid of 2 x 4 fractals (R = 4, C = 12) holding arange values: element (r, c) is 12 r + c.

R0, C0 = 2, 4
R1, C1 = 2, 3
X = np.arange(R1 * R0 * C1 * C0, dtype=np.int32).reshape(R1 * R0, C1 * C0)


def test_nz_element_by_element():
    flat = nd_to_nz(X, (R0, C0)).ravel()
    for r in range(R1 * R0):
        for c in range(C1 * C0):
            # fractal column c // C0 first, then fractal row r // R0, then row-major inside
            at = (c // C0) * (R1 * R0 * C0) + (r // R0) * (R0 * C0) + (r % R0) * C0 + c % C0
            assert flat[at] == X[r, c], (r, c)


def test_zz_element_by_element():
    flat = nd_to_zz(X, (R0, C0)).ravel()
    for r in range(R1 * R0):
        for c in range(C1 * C0):
            at = (r // R0) * (C1 * R0 * C0) + (c // C0) * (R0 * C0) + (r % R0) * C0 + c % C0
            assert flat[at] == X[r, c], (r, c)


def test_zn_element_by_element():
    flat = nd_to_zn(X, (R0, C0)).ravel()
    for r in range(R1 * R0):
        for c in range(C1 * C0):
            # fractal grid row-major, each fractal column-major (column c % C0 holds R0 consecutive elements)
            at = (r // R0) * (C1 * R0 * C0) + (c // C0) * (R0 * C0) + (c % C0) * R0 + r % R0
            assert flat[at] == X[r, c], (r, c)


def test_the_mmad_docs_4x4_example():
    """The Mmad doc's orders for 4 x 4 matrices in 2 x 2 fractals."""
    x = np.arange(16).reshape(4, 4)
    assert nd_to_zz(x, (2, 2)).ravel().tolist() == [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]
    assert nd_to_zn(x, (2, 2)).ravel().tolist() == [0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15]
    assert nd_to_nz(x, (2, 2)).ravel().tolist() == [0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15]


def test_default_fractals_follow_the_dtype():
    a = np.arange(17 * 40).reshape(17, 40).astype(np.int8)
    assert nd_to_nz(a).shape == (2, 2, 16, 32)            # C1 = ceil(40 / 32), R1 = ceil(17 / 16)
    assert nd_to_zz(a).shape == (2, 2, 16, 32)
    assert nd_to_zn(a).shape == (1, 3, 16, 32)            # K1 = ceil(17 / 32), N1 = ceil(40 / 16)
    f = np.ones((3, 5), np.float32)
    assert nd_to_nz(f).shape == (1, 1, 16, 8)
    assert nd_to_nz(f, L0C_FRACTAL).shape == (1, 1, 16, 16)


def test_padding_holds_pad_value_and_is_cropped():
    a = np.arange(1, 3 * 5 + 1, dtype=np.float16).reshape(3, 5)
    nz = nd_to_nz(a, pad_value=-7)
    padded = nz_to_nd(nz)
    assert padded.shape == (16, 16)
    assert np.array_equal(padded[:3, :5], a)
    assert np.all(padded[3:, :] == -7) and np.all(padded[:, 5:] == -7)
    assert np.array_equal(nz_to_nd(nz, (3, 5)), a)


def test_flat_buffers_convert_with_a_shape():
    a = np.arange(20 * 9, dtype=np.float32).reshape(20, 9)
    assert np.array_equal(nz_to_nd(nd_to_nz(a).ravel(), (20, 9)), a)
    assert np.array_equal(zz_to_nd(nd_to_zz(a).ravel(), (20, 9)), a)
    assert np.array_equal(zn_to_nd(nd_to_zn(a).ravel(), (20, 9)), a)
    c = np.arange(20 * 9, dtype=np.float32).reshape(20, 9)
    assert np.array_equal(nz_to_nd(nd_to_nz(c, L0C_FRACTAL).ravel(), (20, 9), L0C_FRACTAL), c)


def test_batch_dimensions_are_kept():
    a = np.arange(2 * 3 * 17 * 33, dtype=np.float16).reshape(2, 3, 17, 33)
    nz = nd_to_nz(a)
    assert nz.shape == (2, 3, 3, 2, 16, 16)
    for i in range(2):
        for j in range(3):
            assert np.array_equal(nz[i, j], nd_to_nz(a[i, j]))
    assert np.array_equal(nz_to_nd(nz, (17, 33)), a)


def test_l1_nz_to_l0_formats_are_fractal_moves():
    """ZZ is NZ with the fractal grid transposed; ZN of B is ZZ of B's transpose (what LoadData does)."""
    a = np.arange(48 * 64, dtype=np.float16).reshape(48, 64)
    assert np.array_equal(nd_to_zz(a), np.swapaxes(nd_to_nz(a), 0, 1))
    assert np.array_equal(nd_to_zn(a), nd_to_zz(a.T).swapaxes(0, 1))
    # a fractal of ZN is the transpose of the same fractal in NZ (16-bit: both 16 x 16)
    assert np.array_equal(nd_to_zn(a)[1, 2], nd_to_nz(a)[2, 1].T)


# ------------------------------------------------------------------------------ properties


@st.composite
def matrices(draw):
    dtype = draw(st.sampled_from(DTYPES))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    rows, cols = draw(st.integers(1, 70)), draw(st.integers(1, 70))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    values = np.random.default_rng(seed).integers(-100, 100, batch + (rows, cols))
    return values.astype(dtype)


@profiles.settings(ci=60, thorough=1000)
@given(x=matrices(), pad=st.integers(-5, 5))
def test_round_trips(x, pad):
    shape = x.shape[-2:]
    for to, back, position in ((nd_to_nz, nz_to_nd, "L1"), (nd_to_zz, zz_to_nd, "L0A"), (nd_to_zn, zn_to_nd, "L0B")):
        blocked = to(x, pad_value=pad)
        r0, c0_ = fractal_shape(x.dtype, position)
        assert blocked.size == int(np.prod(x.shape[:-2])) * -(-shape[0] // r0) * r0 * -(-shape[1] // c0_) * c0_
        assert np.array_equal(back(blocked, shape), x)
        full = back(blocked).astype(np.float64)
        assert np.all(full[..., shape[0]:, :] == pad) and np.all(full[..., :, shape[1]:] == pad)


@profiles.settings(ci=30, thorough=500)
@given(x=matrices())
def test_every_element_appears_once(x):
    """The conversions only move elements: the multiset of values is kept (padding aside)."""
    flat = x.reshape(-1, *x.shape[-2:])[0]
    for to in (nd_to_nz, nd_to_zz, nd_to_zn):
        blocked = to(flat, pad_value=0).ravel().astype(np.float64)
        padding = np.zeros(blocked.size - flat.size)
        assert np.array_equal(np.sort(blocked), np.sort(np.concatenate([flat.ravel().astype(np.float64), padding])))


def test_the_docs_example_runs():
    import pathlib
    import re
    text = (pathlib.Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text()
    (example,) = re.findall(r"## Example.*?```python\n(.*?)```", text, flags=re.S)
    exec(compile(example, "docs/formats.md", "exec"), {})
