"""Kernel data types (pyasc ``asc.language.core.dtype``) plus bfloat16.

A :class:`DataType` knows its size, its NumPy host dtype and the NumPy dtype
npuemu stores it as in emulated memory.  float16 and bfloat16 are stored as
their raw 16-bit patterns (``uint16``): neither NumPy nor Numba computes on them
fast or (for bfloat16) at all, so the instruction implementations convert
explicitly and round after every instruction, as the hardware does.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

_LAZY_BF16 = "ml_dtypes.bfloat16"     # bfloat16's host dtype, imported when first asked for


def _bf16_host() -> Any:
    """``ml_dtypes.bfloat16``, or None without ml_dtypes.

    ml_dtypes takes most of a second to import, several times NumPy's time;
    kernels that never see a bfloat16 host array never pay for it.
    """
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover - exercised when ml_dtypes is absent
        return None
    return ml_dtypes.bfloat16


class DataType:
    """A scalar element type of kernel tensors."""

    __slots__ = ("name", "code", "_size", "kind", "storage", "_host")

    def __init__(self, name: str, code: int, size: int, kind: str, storage: Any, host: Any):
        self.name = name
        self.code = code          # small stable integer, used in generated code and dumps
        self._size = size
        self.kind = kind          # 'f' float, 'i' signed, 'u' unsigned, 'b' bfloat16, 'v' void
        self.storage = np.dtype(storage) if storage is not None else None
        self._host = host if host is None or host is _LAZY_BF16 else np.dtype(host)

    @property
    def host(self) -> np.dtype | None:
        """The NumPy dtype of host arrays of this type (None: there is none)."""
        if self._host is _LAZY_BF16:
            found = _bf16_host()
            self._host = np.dtype(found) if found is not None else None
        return self._host

    def sizeof(self) -> int:
        """Size of one element in bytes (``sizeof(T)``)."""
        return self._size

    @property
    def itemsize(self) -> int:
        return self._size

    @property
    def is_float(self) -> bool:
        return self.kind in ("f", "b")

    @property
    def is_int(self) -> bool:
        return self.kind in ("i", "u")

    def __repr__(self) -> str:
        return f"asc.{self.name}"

    def __reduce__(self):
        return (by_name, (self.name,))


void = DataType("void", 0, 0, "v", None, None)
int8 = DataType("int8", 1, 1, "i", np.int8, np.int8)
uint8 = DataType("uint8", 2, 1, "u", np.uint8, np.uint8)
int16 = DataType("int16", 3, 2, "i", np.int16, np.int16)
uint16 = DataType("uint16", 4, 2, "u", np.uint16, np.uint16)
int32 = DataType("int32", 5, 4, "i", np.int32, np.int32)
uint32 = DataType("uint32", 6, 4, "u", np.uint32, np.uint32)
int64 = DataType("int64", 7, 8, "i", np.int64, np.int64)
uint64 = DataType("uint64", 8, 8, "u", np.uint64, np.uint64)
float16 = DataType("float16", 9, 2, "f", np.uint16, np.float16)
float32 = DataType("float32", 10, 4, "f", np.float32, np.float32)
float64 = DataType("float64", 11, 8, "f", np.float64, np.float64)
bfloat16 = DataType("bfloat16", 12, 2, "b", np.uint16, _LAZY_BF16)

# pyasc aliases
half = float16
float_ = float32
double = float64
int_ = int32
bool_ = int8

ALL: tuple[DataType, ...] = (int8, uint8, int16, uint16, int32, uint32, int64, uint64,
                             float16, float32, float64, bfloat16)
_BY_NAME = {t.name: t for t in ALL} | {"void": void}
_BY_CODE = {t.code: t for t in ALL}


def by_name(name: str) -> DataType:
    return _BY_NAME[name]


def by_code(code: int) -> DataType:
    return _BY_CODE[code]


class KnownTypes:
    """Namespace of the known data types, as pyasc's ``KnownTypes`` (``KT.int32``)."""

    void = void
    int8 = int8
    uint8 = uint8
    int16 = int16
    uint16 = uint16
    int32 = int32
    uint32 = uint32
    int64 = int64
    uint64 = uint64
    float16 = float16
    half = float16
    float32 = float32
    float_ = float32
    float64 = float64
    double = float64
    bfloat16 = bfloat16
    int_ = int32
    bool_ = int8


def from_numpy(dt: Any) -> DataType:
    """The kernel dtype for a NumPy dtype (``ml_dtypes.bfloat16`` maps to bfloat16).

    Raises ``TypeError`` for dtypes the kernel language has no equivalent for.
    """
    dt = np.dtype(dt)
    if dt.name == "bfloat16" and "ml_dtypes" in sys.modules and dt == bfloat16.host:
        return bfloat16                  # a bfloat16 array exists: ml_dtypes is imported already
    if dt == np.bool_:
        return int8
    for t in ALL:
        if t.host is not None and t is not bfloat16 and dt == t.host:
            return t
    raise TypeError(f"no kernel dtype for NumPy dtype {dt}")
