"""Fractal matrix formats of the cube unit, in NumPy: ND <-> NZ, ZZ and ZN.

The cube reads and writes matrices cut into *fractals*, small row-major tiles
of ``r0 x c0`` elements (ascend-c.md §3.4; the Mmad and LoadData docs):

======  ==================  ====================================  ===============================
format  where               fractals of an (R, C) matrix          blocked shape
======  ==================  ====================================  ===============================
ND      GM                  none: plain row-major                 ``(..., R, C)``
NZ      L1 (A1/B1), L0C     column-major grid, row-major inside   ``(..., C1, R1, R0, C0)``
ZZ      L0A (A2)            row-major grid, row-major inside      ``(..., R1, C1, R0, C0)``
ZN      L0B (B2)            row-major grid, column-major inside   ``(..., R1, C1, C0, R0)``
======  ==================  ====================================  ===============================

with ``R1 = ceil(R / R0)`` and ``C1 = ceil(C / C0)``.  A fractal is always
512 bytes in L1, L0A and L0B: 16 rows of one 32-byte block, i.e. ``16 x 32``
for 8-bit, ``16 x 16`` for 16-bit and ``16 x 8`` for 32-bit types (L0B holds
the transposed shape, ``32 x 16``, ``16 x 16``, ``8 x 16``: K rows of 32
bytes' worth, 16 columns).  L0C's fractal is ``16 x 16`` whatever the type.

Flattening the blocked array in C order gives the buffer's contents, so::

    >>> a = np.arange(2 * 3 * 256, dtype=np.float16).reshape(32, 48)
    >>> nz = nd_to_nz(a)                      # (3, 2, 16, 16): what Nd2Nz leaves in L1
    >>> nz.ravel()[:3]                        # row 0 of the first 16-column block
    array([0., 1., 2.], dtype=float16)
    >>> nz.ravel()[16]                        # then row 1 of that block
    np.float16(48.0)
    >>> np.array_equal(nz_to_nd(nz, a.shape), a)
    True

Matrices whose sides are not fractal multiples are padded with ``pad_value``
(the hardware leaves such padding undefined or zero depending on the move;
the cube ignores it because ``mmad``'s m, n, k are exact).  Leading batch
dimensions are carried through unchanged.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from npuemu.errors import NpuemuError

FRACTAL_BYTES = 512                # one L1/L0A/L0B fractal
BLOCK_BYTES = 32                   # one fractal row
FRACTAL_ROWS = 16
L0C_FRACTAL = (16, 16)

_POSITIONS = {"L1": "A", "A1": "A", "B1": "A", "C1": "A", "L0A": "A", "A2": "A",
              "L0B": "B", "B2": "B", "L0C": "C", "CO1": "C"}


class FormatError(NpuemuError, ValueError):
    """An array or fractal shape that does not describe a fractal matrix."""


def c0(dtype: Any) -> int:
    """Elements in one 32-byte fractal row: 32 for 8-bit, 16 for 16-bit, 8 for 32-bit types."""
    size = np.dtype(dtype).itemsize
    if size not in (1, 2, 4):
        raise FormatError(f"the cube takes 8-, 16- or 32-bit elements, got {np.dtype(dtype)} ({size} bytes)")
    return BLOCK_BYTES // size


def fractal_shape(dtype: Any, position: str = "L1") -> tuple[int, int]:
    """(rows, columns) of one fractal of ``dtype`` in ``position``.

    ``position`` is a buffer (``"L1"``, ``"L0A"``, ``"L0B"``, ``"L0C"``) or a
    TPosition name (``"A1"``, ``"B1"``, ``"A2"``, ``"B2"``, ``"CO1"``).
    L1 and L0A: ``16 x c0``; L0B: ``c0 x 16``; L0C: ``16 x 16``.
    """
    kind = _POSITIONS.get(position.upper())
    if kind is None:
        raise FormatError(f"unknown position {position!r}; use one of {', '.join(_POSITIONS)}")
    if kind == "C":
        return L0C_FRACTAL
    k0 = c0(dtype)
    return (FRACTAL_ROWS, k0) if kind == "A" else (k0, FRACTAL_ROWS)


def padded_shape(shape: tuple[int, int], fractal: tuple[int, int]) -> tuple[int, int]:
    """``shape`` rounded up to whole fractals."""
    (r, c), (r0, c0_) = shape, fractal
    return -(-r // r0) * r0, -(-c // c0_) * c0_


# ------------------------------------------------------------------------------ ND -> fractal


def nd_to_nz(x: np.ndarray, fractal: tuple[int, int] | None = None, *, pad_value: Any = 0) -> np.ndarray:
    """NZ (FRACTAL_NZ) of ``x[..., R, C]``: blocked shape ``(..., C1, R1, R0, C0)``.

    The L1 layout of a matrix moved by ``data_copy`` with ``Nd2NzParams`` and
    the L0C layout of ``mmad``'s result.  ``fractal`` defaults to the L1
    fractal of ``x.dtype`` (``16 x c0``); pass :data:`L0C_FRACTAL` for L0C.
    """
    grid = _blocks(x, fractal or fractal_shape(x.dtype, "L1"), pad_value)     # (..., R1, R0, C1, C0)
    return np.ascontiguousarray(np.moveaxis(grid, -2, -4))                     # (..., C1, R1, R0, C0)


def nd_to_zz(x: np.ndarray, fractal: tuple[int, int] | None = None, *, pad_value: Any = 0) -> np.ndarray:
    """ZZ of ``x[..., M, K]`` (the L0A layout): blocked shape ``(..., M1, K1, M0, K0)``, fractal ``16 x c0``."""
    grid = _blocks(x, fractal or fractal_shape(x.dtype, "L0A"), pad_value)    # (..., M1, M0, K1, K0)
    return np.ascontiguousarray(np.swapaxes(grid, -3, -2))                     # (..., M1, K1, M0, K0)


def nd_to_zn(x: np.ndarray, fractal: tuple[int, int] | None = None, *, pad_value: Any = 0) -> np.ndarray:
    """ZN of ``x[..., K, N]`` (the L0B layout): blocked shape ``(..., K1, N1, N0, K0)``, fractal ``c0 x 16``.

    Each ``K0 x N0`` fractal is stored column by column, i.e. as its
    transpose, ``N0`` rows of ``K0`` elements.
    """
    grid = _blocks(x, fractal or fractal_shape(x.dtype, "L0B"), pad_value)    # (..., K1, K0, N1, N0)
    return np.ascontiguousarray(np.moveaxis(grid, -3, -1))                     # (..., K1, N1, N0, K0)


# ------------------------------------------------------------------------------ fractal -> ND


def nz_to_nd(z: np.ndarray, shape: tuple[int, int] | None = None,
             fractal: tuple[int, int] | None = None) -> np.ndarray:
    """The ``(..., R, C)`` matrix of an NZ array (inverse of :func:`nd_to_nz`).

    ``z`` is blocked ``(..., C1, R1, R0, C0)``, or a flat buffer, which needs
    ``shape`` and ``fractal`` (default: the L1 fractal of ``z.dtype``).
    ``shape`` crops the padding; without it the padded matrix is returned.
    """
    z = _as_blocked(z, shape, fractal, "L1", lambda r1, c1, r0, c0_: (c1, r1, r0, c0_))
    grid = np.moveaxis(z, -4, -2)                                              # (..., R1, R0, C1, C0)
    return _crop(_merge(grid), shape)


def zz_to_nd(z: np.ndarray, shape: tuple[int, int] | None = None,
             fractal: tuple[int, int] | None = None) -> np.ndarray:
    """The ``(..., M, K)`` matrix of a ZZ array ``(..., M1, K1, M0, K0)`` or flat buffer."""
    z = _as_blocked(z, shape, fractal, "L0A", lambda r1, c1, r0, c0_: (r1, c1, r0, c0_))
    return _crop(_merge(np.swapaxes(z, -3, -2)), shape)


def zn_to_nd(z: np.ndarray, shape: tuple[int, int] | None = None,
             fractal: tuple[int, int] | None = None) -> np.ndarray:
    """The ``(..., K, N)`` matrix of a ZN array ``(..., K1, N1, N0, K0)`` or flat buffer.

    ``fractal`` is ``(K0, N0)``, default the L0B fractal of ``z.dtype``.
    """
    z = _as_blocked(z, shape, fractal, "L0B", lambda r1, c1, r0, c0_: (r1, c1, c0_, r0))
    return _crop(_merge(np.moveaxis(z, -1, -3)), shape)


# ------------------------------------------------------------------------------ helpers


def _blocks(x: np.ndarray, fractal: tuple[int, int], pad_value: Any) -> np.ndarray:
    """``x[..., R, C]`` padded to whole fractals and split: ``(..., R1, R0, C1, C0)``."""
    x = np.asarray(x)
    if x.ndim < 2:
        raise FormatError(f"a matrix needs at least 2 dimensions, got shape {x.shape}")
    r0, c0_ = _check_fractal(fractal)
    rows, cols = padded_shape(x.shape[-2:], (r0, c0_))
    if (rows, cols) != x.shape[-2:]:
        pad = [(0, 0)] * (x.ndim - 2) + [(0, rows - x.shape[-2]), (0, cols - x.shape[-1])]
        x = np.pad(x, pad, constant_values=np.asarray(pad_value).astype(x.dtype))
    return x.reshape(*x.shape[:-2], rows // r0, r0, cols // c0_, c0_)


def _merge(grid: np.ndarray) -> np.ndarray:
    """``(..., R1, R0, C1, C0)`` back to ``(..., R1 * R0, C1 * C0)``."""
    *batch, r1, r0, c1, c0_ = grid.shape
    return grid.reshape(*batch, r1 * r0, c1 * c0_)


def _crop(x: np.ndarray, shape: tuple[int, int] | None) -> np.ndarray:
    if shape is None:
        return np.ascontiguousarray(x)
    r, c = shape
    if r > x.shape[-2] or c > x.shape[-1]:
        raise FormatError(f"shape {tuple(shape)} is larger than the padded matrix {x.shape[-2:]}")
    return np.ascontiguousarray(x[..., :r, :c])


def _as_blocked(z: np.ndarray, shape: tuple[int, int] | None, fractal: tuple[int, int] | None, position: str,
                order: Any) -> np.ndarray:
    """``z`` as a blocked array; a flat buffer is reshaped with ``shape`` and ``fractal``."""
    z = np.asarray(z)
    if z.ndim >= 4:
        return z
    if z.ndim != 1 or shape is None:
        raise FormatError(f"expected a blocked array (4 or more dimensions) or a flat buffer with shape=, "
                          f"got shape {z.shape} and shape={shape}")
    r0, c0_ = _check_fractal(fractal or fractal_shape(z.dtype, position))
    rows, cols = padded_shape(shape, (r0, c0_))
    if z.size < rows * cols:
        raise FormatError(f"a {shape[0]} x {shape[1]} matrix in {r0} x {c0_} fractals needs {rows * cols} "
                          f"elements, the buffer has {z.size}")
    return z[:rows * cols].reshape(order(rows // r0, cols // c0_, r0, c0_))


def _check_fractal(fractal: tuple[int, int]) -> tuple[int, int]:
    r0, c0_ = (int(v) for v in fractal)
    if r0 < 1 or c0_ < 1:
        raise FormatError(f"fractal sides must be positive, got {tuple(fractal)}")
    return r0, c0_


__all__ = ["FormatError", "L0C_FRACTAL", "c0", "fractal_shape", "padded_shape", "nd_to_nz", "nz_to_nd",
           "nd_to_zz", "zz_to_nd", "nd_to_zn", "zn_to_nd"]
