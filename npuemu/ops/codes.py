"""The data-type and format codes of CANN's graph engine, as operator keys and descriptors spell them.

The numbers are those of ``ge::DataType`` and ``ge::Format`` (graph/types.h);
a binary's selection key holds one byte of each per tensor
(superkernel-binaries-tiling.md PART 2).  ``FORMAT_END``, which the key adds
to a count for dynamic inputs and rank markers, is npuemu's choice
(UNCONFIRMED: the real value only has to lie past every format).
"""
from __future__ import annotations

from ..errors import NpuemuError

DTYPES: dict[str, int] = {
    "float32": 0, "float16": 1, "int8": 2, "int32": 3, "uint8": 4, "int16": 6, "uint16": 7, "uint32": 8,
    "int64": 9, "uint64": 10, "float64": 11, "bool": 12, "complex64": 16, "complex128": 17, "bfloat16": 27,
    "complex32": 33,
}
FORMATS: dict[str, int] = {"NCHW": 0, "NHWC": 1, "ND": 2, "NC1HWC0": 3, "FRACTAL_Z": 4, "FRACTAL_NZ": 29}
FORMAT_ALIASES = {"NZ": "FRACTAL_NZ"}
FORMAT_END = 100


class OpDefError(NpuemuError, ValueError):
    """An operator definition is inconsistent; the message names the op and the field."""


def dtype_code(name: str) -> int:
    try:
        return DTYPES[name]
    except KeyError:
        raise OpDefError(f"unknown data type {name!r}; known: {', '.join(DTYPES)}") from None


def format_name(name: str) -> str:
    """The canonical name of a format (``NZ`` is ``FRACTAL_NZ``)."""
    name = FORMAT_ALIASES.get(name, name)
    if name not in FORMATS:
        raise OpDefError(f"unknown format {name!r}; known: {', '.join(FORMATS)} (NZ for FRACTAL_NZ)")
    return name


def format_code(name: str) -> int:
    return FORMATS[format_name(name)]
