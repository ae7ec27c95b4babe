"""npuemu: write, test and benchmark Ascend NPU kernels on the CPU.

Kernels are written in the kernel language (``import npuemu.asc as asc``) and
launched with ``kernel[core_num](args)``.  This package exports what host code
needs besides the language: :func:`gm_buffer` to pass an array's bytes as
another kernel dtype (e.g. ``uint16`` bits as ``asc.bfloat16``) and the
exception classes of :mod:`npuemu.errors`; kernel binaries built apart from a
launch (``kernel.compile(...)``) are saved with ``binary.save(path)``, loaded
with :func:`load_binary` and launched with :func:`launch`; :class:`Stream`
queues launches.
"""
from .errors import (AlignmentError, AtomicError, BoundsError, CacheError, CapacityError, DCacheError,
                     DeadlockError, DivisionByZeroError, KernelCompileError, KernelFault, KernelTimeoutError,
                     KernelTypeError, LaunchError, LocalMemoryWatchError, NullPointerError, TrapError,
                     NpuemuError, OverlapError, ParamRangeError, PlatformError, PositionError, QueueError,
                     NumbaVersionError, PartialCopyWarning, RaceError, RedundantSyncWarning, SourceLoc, SyncError,
                     UnfreedTensorWarning,
                     UninitializedReadError, UnknownAPIError,
                     UnsupportedSyntaxError)
from .arrays import GMBuffer, gm_buffer

# heavier parts (Numba) are imported when first used: ``import npuemu`` stays cheap
_LAZY = {
    "KernelBinary": ("npuemu.binary.kernel_binary", "KernelBinary"),
    "load_binary": ("npuemu.binary.kernel_binary", "load_binary"),
    "launch": ("npuemu.runtime.launch", "launch_binary"),
    "Stream": ("npuemu.runtime.stream", "Stream"),
}


def _version() -> str:
    from importlib import metadata      # 50 ms of imports: only when the version is asked for
    try:
        return metadata.version("npuemu")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source tree that is not installed
        return "0+unknown"


def __getattr__(name: str) -> object:
    if name == "__version__":
        globals()["__version__"] = version = _version()
        return version
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'npuemu' has no attribute {name!r}")


__all__ = [
    "__version__", "gm_buffer", "GMBuffer", "SourceLoc", "KernelBinary", "load_binary", "launch", "Stream",
    "NpuemuError", "LaunchError", "PlatformError", "CacheError", "NumbaVersionError", "UnfreedTensorWarning",
    "RedundantSyncWarning", "PartialCopyWarning",
    "KernelCompileError", "UnsupportedSyntaxError", "KernelTypeError", "UnknownAPIError",
    "KernelFault", "BoundsError", "AlignmentError", "CapacityError", "QueueError", "ParamRangeError",
    "PositionError", "SyncError", "OverlapError", "DivisionByZeroError", "DeadlockError", "RaceError",
    "DCacheError", "UninitializedReadError", "KernelTimeoutError", "AtomicError",
    "NullPointerError", "TrapError", "LocalMemoryWatchError",
]
