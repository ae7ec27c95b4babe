"""Platform constants a kernel reads with ``asc.property`` (pyasc ``asc.language.core.properties``).

``asc.property(asc.TOTAL_L1_SIZE)`` is the ``AscendC::TOTAL_L1_SIZE`` of the
platform the kernel is built for: the per-core buffer sizes come from the
binary's platform profile, the block and C0 sizes are architectural.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import dtype as dt
from .builtin import builtin
from .dtype import DataType

__all__ = ["Property", "property", "DEFAULT_C0_SIZE", "ONE_BLK_SIZE", "TOTAL_L1_SIZE", "TOTAL_L0C_SIZE",
           "TOTAL_UB_SIZE", "TOTAL_L0A_SIZE", "TOTAL_L0B_SIZE"]


@dataclass(frozen=True)
class Property:
    """A named constant of Ascend C: its C++ name, type, and where npuemu finds its value.

    ``source`` is the name of a :class:`npuemu.platform.Platform` field, or
    an int for a constant that is the same on every platform.
    """

    name: str
    dtype: DataType
    source: str | int


DEFAULT_C0_SIZE = Property("::AscendC::DEFAULT_C0_SIZE", dt.int32, 32)     # bytes in a fractal row (C0)
ONE_BLK_SIZE = Property("::AscendC::ONE_BLK_SIZE", dt.int16, 32)           # bytes in a DataBlock
TOTAL_L1_SIZE = Property("::AscendC::TOTAL_L1_SIZE", dt.int32, "l1_size")
TOTAL_L0C_SIZE = Property("::AscendC::TOTAL_L0C_SIZE", dt.int32, "l0c_size")
TOTAL_UB_SIZE = Property("::AscendC::TOTAL_UB_SIZE", dt.int32, "ub_size")
TOTAL_L0A_SIZE = Property("::AscendC::TOTAL_L0A_SIZE", dt.int32, "l0a_size")
TOTAL_L0B_SIZE = Property("::AscendC::TOTAL_L0B_SIZE", dt.int32, "l0b_size")


@builtin
def property(prop: Property) -> int:  # noqa: A001 - pyasc's name
    """The value of an Ascend C constant on the kernel's platform, e.g. ``asc.property(asc.TOTAL_L1_SIZE)``."""
