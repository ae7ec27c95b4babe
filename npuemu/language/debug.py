"""Debug output from kernels: ``printf`` and ``dump_tensor`` (``AscendC::printf``, ``DumpTensor``).

Signatures follow pyasc (``asc.language.basic.dump_tensor``).  Output goes to
each core's 1 MiB dump buffer and is printed on the host when the launch
ends, core by core, in the format of the CANN dump tool (see
``npuemu/runtime/debuglog.py``).
"""
from __future__ import annotations

from typing import Any

from .builtin import builtin
from .core import GlobalTensor, LocalTensor
from .params import ShapeInfo

__all__ = ["printf", "dump_tensor"]


@builtin
def printf(desc: str, *params: Any) -> None:
    """Formatted output (``AscendC::printf``).

    ``desc`` is a constant C format string.  Conversions: ``%d``/``%i``
    (integers, bool), ``%u`` and ``%x`` (integers as 64-bit unsigned), ``%f``
    (floats), ``%s`` (compile-time strings) and ``%p`` (an integer or a
    tensor's address), with the usual flags, width and precision; ``%%`` is a
    percent sign.  As in pyasc a newline is written ``"\\\\n"`` (an escaped
    backslash and ``n``); no other escape sequence is interpreted.
    """


@builtin
def dump_tensor(tensor: LocalTensor | GlobalTensor, desc: int, dump_size: int,
                shape_info: ShapeInfo | None = None) -> None:
    """Print the first ``dump_size`` elements of a tensor (``AscendC::DumpTensor``).

    ``tensor`` is a LocalTensor in UB, L1 or L0C, or a GlobalTensor; ``desc``
    is a number shown in the header to tell dumps apart.  With
    ``ShapeInfo(shape)`` the values are printed as nested rows of that shape,
    ``-`` standing for elements beyond ``dump_size``.
    """
