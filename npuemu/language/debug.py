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

__all__ = ["printf", "dump_tensor", "print_time_stamp", "dump_acc_chk_point", "metrics_prof_start",
           "metrics_prof_stop"]


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


@builtin
def print_time_stamp(desc_id: int) -> None:
    """Log a time stamp record (``PrintTimeStamp``): the id, the system counter and the call site.

    Printed with the core's other records as
    ``descId is <id>, rsv is 0, timeStamp is <get_system_cycle()>, pcPtr is <get_program_counter()>, entry is 0.``
    (the layout of CANN's dump tool, assumed from its documentation).
    """


@builtin
def dump_acc_chk_point(tensor: LocalTensor | GlobalTensor, index: int, count_off: int, dump_size: int) -> None:
    """``dump_tensor`` of ``dump_size`` elements starting ``count_off`` elements into ``tensor``
    (``DumpAccChkPoint``), with ``index`` as the description number."""


@builtin
def metrics_prof_start() -> None:
    """Start of a region for the device profiler's metrics (``MetricsProfStart``); no effect on results."""


@builtin
def metrics_prof_stop() -> None:
    """End of a ``metrics_prof_start`` region (``MetricsProfStop``); no effect on results."""
