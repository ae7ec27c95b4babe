"""Enumerations of CANN's host matmul tiling library (``matmul_tiling::``), with CANN's values.

These are what pyasc's ``asc.lib.host`` exposes: the position, format and data
type of A, B, C and the bias (``set_a_type`` ...), the traversal order, the mad
mode, the dequantisation and schedule types.  The values are those of
asc-devkit's ``matmul_tiling_base.h``: ``DataType`` is numbered as
``ge::DataType`` (``DT_FLOAT = 0``, ``DT_FLOAT16 = 1``, ``DT_BF16 = 27``, ...;
the header adds ``DT_BFLOAT16 = 33`` as a second name for bfloat16).

:func:`element_kind` maps a ``DataType`` (or an npuemu dtype name) to the
element kind the tiling rules depend on: ``"float16"``, ``"bfloat16"``,
``"float32"``, ``"int8"``, ``"int4"``, ``"int32"``.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any

from ..errors import UsageError


class TPosition(IntEnum):
    """Where a matrix lives (``matmul_tiling::TPosition``); LCM and SHM are other names of VECCALC and SPM."""

    GM = 0
    A1 = 1
    A2 = 2
    B1 = 3
    B2 = 4
    C1 = 5
    C2 = 6
    CO1 = 7
    CO2 = 8
    VECIN = 9
    VECOUT = 10
    VECCALC = 11
    LCM = 11
    SPM = 12
    SHM = 12
    TSCM = 13
    MAX = 14


class CubeFormat(IntEnum):
    """Data format of a matrix; ROW_MAJOR is another name of ND, COLUMN_MAJOR is DN."""

    ND = 0
    NZ = 1
    ZN = 2
    ZZ = 3
    NN = 4
    ND_ALIGN = 5
    SCALAR = 6
    VECTOR = 7
    ROW_MAJOR = 0
    COLUMN_MAJOR = 8


class DataType(IntEnum):
    """Element type of a matrix, numbered as ``ge::DataType`` (matmul_tiling_base.h)."""

    DT_FLOAT = 0
    DT_FLOAT16 = 1
    DT_INT8 = 2
    DT_INT32 = 3
    DT_UINT8 = 4
    DT_INT16 = 6
    DT_UINT16 = 7
    DT_UINT32 = 8
    DT_INT64 = 9
    DT_UINT64 = 10
    DT_DOUBLE = 11
    DT_BOOL = 12
    DT_STRING = 13
    DT_DUAL_SUB_INT8 = 14
    DT_DUAL_SUB_UINT8 = 15
    DT_COMPLEX64 = 16
    DT_COMPLEX128 = 17
    DT_QINT8 = 18
    DT_QINT16 = 19
    DT_QINT32 = 20
    DT_QUINT8 = 21
    DT_QUINT16 = 22
    DT_RESOURCE = 23
    DT_STRING_REF = 24
    DT_DUAL = 25
    DT_VARIANT = 26
    DT_BF16 = 27
    DT_UNDEFINED = 28
    DT_INT4 = 29
    DT_UINT1 = 30
    DT_INT2 = 31
    DT_UINT2 = 32
    DT_BFLOAT16 = 33
    DT_HIFLOAT8 = 34
    DT_FLOAT8_E4M3FN = 35
    DT_FLOAT8_E5M2 = 36
    DT_FLOAT4_E2M1 = 37
    DT_FLOAT8_E8M0 = 38
    DT_FLOAT4_E1M2 = 39
    DT_MAX = 40


class MatrixTraverse(IntEnum):
    """Order in which a core walks its base blocks of C: NOSET leaves the library's choice (M first)."""

    NOSET = 0
    FIRSTM = 1
    FIRSTN = 2


class MatrixMadType(IntEnum):
    """Cube multiply mode: NORMAL, HF32 (float32 inputs multiplied as hf32), MXMODE (micro-scaled, 950)."""

    NORMAL = 0
    HF32 = 1
    MXMODE = 2


class DequantType(IntEnum):
    """Dequantisation of an int32 result: one scale (SCALAR) or a vector of scales (TENSOR)."""

    SCALAR = 0
    TENSOR = 1


class ScheduleType(IntEnum):
    """How MTE1 loops: over K (INNER_PRODUCT, the default) or over M/N (OUTER_PRODUCT)."""

    INNER_PRODUCT = 0
    OUTER_PRODUCT = 1


# DataType -> element kind of the tiling rules (the kinds a cube multiplies or writes)
_KINDS: dict[DataType, str] = {
    DataType.DT_FLOAT16: "float16", DataType.DT_BF16: "bfloat16", DataType.DT_BFLOAT16: "bfloat16",
    DataType.DT_FLOAT: "float32", DataType.DT_INT8: "int8", DataType.DT_INT4: "int4",
    DataType.DT_INT32: "int32",
}
_NAMES = {"float16": "float16", "half": "float16", "bfloat16": "bfloat16", "float32": "float32",
          "float": "float32", "int8": "int8", "int4": "int4", "int32": "int32"}

# bytes of one element (int4: half a byte)
ELEMENT_BYTES: dict[str, float] = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "int4": 0.5, "int32": 4}


def element_kind(dtype: Any) -> str:
    """The tiling element kind of ``dtype``: a :class:`DataType`, an npuemu dtype or its name.

    Raises :class:`UsageError` for types the cube cannot take or produce.
    """
    if isinstance(dtype, DataType):
        kind = _KINDS.get(dtype)
    else:
        kind = _NAMES.get(str(getattr(dtype, "name", dtype)).lower())
    if kind is None:
        raise UsageError(f"{dtype!r} is not a matmul element type (float16, bfloat16, float32, int8, int4, int32)")
    return kind


def c0(kind: str) -> int:
    """Elements in one 32-byte fractal row: 16 (fp16/bf16), 8 (fp32/int32), 32 (int8), 64 (int4)."""
    return int(32 // ELEMENT_BYTES[kind])


UB_POSITIONS = (TPosition.VECIN, TPosition.VECOUT, TPosition.VECCALC)

__all__ = ["TPosition", "CubeFormat", "DataType", "MatrixTraverse", "MatrixMadType", "DequantType", "ScheduleType",
           "element_kind", "c0", "ELEMENT_BYTES", "UB_POSITIONS"]
