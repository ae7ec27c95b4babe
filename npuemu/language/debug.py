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
from .params import ParamStruct, ShapeInfo

__all__ = ["printf", "dump_tensor", "print_time_stamp", "dump_acc_chk_point", "metrics_prof_start",
           "metrics_prof_stop", "check_local_memory_ia", "CheckLocalMemoryIAParam"]


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


class CheckLocalMemoryIAParam(ParamStruct):
    """A UB watch range for ``check_local_memory_ia`` (``AscendC::CheckLocalMemoryIAParam``)."""

    _fields_ = (("enable_bit", 0, "u8"), ("start_addr", 0, "u32"), ("end_addr", 0, "u32"),
                ("is_scalar_read", False, "bool"), ("is_scalar_write", False, "bool"),
                ("is_vector_read", False, "bool"), ("is_vector_write", False, "bool"),
                ("is_mte_read", False, "bool"), ("is_mte_write", False, "bool"), ("is_enable", False, "bool"),
                ("reserved", 0, "u64"))
    _units_ = {
        "enable_bit": "exception register 0..3 this range goes into",
        "start_addr": "32-byte units of UB address; the range excludes it: (start_addr, end_addr]",
        "end_addr": "32-byte units of UB address, included; 0..65535",
        "is_scalar_read": "watch scalar reads", "is_scalar_write": "watch scalar writes",
        "is_vector_read": "watch vector reads", "is_vector_write": "watch vector writes",
        "is_mte_read": "watch MTE reads", "is_mte_write": "watch MTE writes",
        "is_enable": "arm the register (False disarms it, as the docs ask after each use)",
        "reserved": "reserved",
    }


@builtin
def check_local_memory_ia(check_params: CheckLocalMemoryIAParam) -> None:
    """Arm (or, with ``is_enable=False``, disarm) a UB watch range (``CheckLocalMemoryIA``).

    An access of the chosen kinds (scalar/vector/MTE, read/write) to a UB byte
    in ``(start_addr * 32, end_addr * 32]`` then stops the core with a
    :class:`npuemu.errors.LocalMemoryWatchError` naming the access's line, as
    the device raises an exception.  npuemu sees every access at
    ``check="full"`` only; at other levels the registers are set and nothing
    is watched.
    """
