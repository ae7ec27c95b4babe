"""npuemu: write, test and benchmark Ascend NPU kernels on the CPU.

Kernels are written in the kernel language (``import npuemu.asc as asc``) and
launched with ``kernel[core_num](args)``.  This package exports what host code
needs besides the language: :func:`gm_buffer` to pass an array's bytes as
another kernel dtype (e.g. ``uint16`` bits as ``asc.bfloat16``) and the
exception classes of :mod:`npuemu.errors`.
"""
from importlib import metadata as _metadata

from .errors import (AlignmentError, BoundsError, CapacityError, DCacheError, DeadlockError,
                     DivisionByZeroError, KernelCompileError, KernelFault, KernelTypeError, LaunchError,
                     NpuemuError, OverlapError, ParamRangeError, PlatformError, PositionError, QueueError,
                     RaceError, SourceLoc, SyncError, UninitializedReadError, UnknownAPIError,
                     UnsupportedSyntaxError)
from .runtime.args import GMBuffer, gm_buffer

try:
    __version__ = _metadata.version("npuemu")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "__version__", "gm_buffer", "GMBuffer", "SourceLoc",
    "NpuemuError", "LaunchError", "PlatformError",
    "KernelCompileError", "UnsupportedSyntaxError", "KernelTypeError", "UnknownAPIError",
    "KernelFault", "BoundsError", "AlignmentError", "CapacityError", "QueueError", "ParamRangeError",
    "PositionError", "SyncError", "OverlapError", "DivisionByZeroError", "DeadlockError", "RaceError",
    "DCacheError", "UninitializedReadError",
]
