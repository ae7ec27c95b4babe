"""Exceptions raised by npuemu.

Every error a user can trigger is an :class:`NpuemuError`.  Errors found while
compiling a kernel (:class:`KernelCompileError` and subclasses) point at the
kernel's own source line with a caret; errors found while a kernel runs
(:class:`KernelFault` subclasses) name the kernel, the core, the source line
and the hardware rule that was broken.
"""
from __future__ import annotations

from dataclasses import dataclass


class NpuemuError(Exception):
    """Base class of every error raised by npuemu."""


class LaunchError(NpuemuError):
    """A launch was requested with arguments npuemu cannot run."""


class PlatformError(NpuemuError):
    """An unknown or inconsistent SoC platform profile."""


class UnfreedTensorWarning(UserWarning):
    """A queue buffer was still taken when a kernel ended (check level ``full``): a missing ``free_tensor``."""


class PartialCopyWarning(UserWarning):
    """A count-form ``data_copy`` moved a byte count that is not whole 32-byte blocks: the tail was dropped."""


class RedundantSyncWarning(UserWarning):
    """``verify_sync=True``: a ``wait_flag`` or ``pipe_barrier(PIPE_ALL)`` that orders nothing a later access needs."""


class CacheError(NpuemuError):
    """The kernel cache cannot be used: it cannot be created, or it is not safe to load code from."""


class NumbaVersionError(NpuemuError, ImportError):
    """The installed Numba is outside the range npuemu supports (``npuemu.numba_compat``)."""


class UsageError(NpuemuError, TypeError, ValueError):
    """A host-side API (``npuemu.host``, ``npuemu.testing``) was called with arguments it cannot use.

    Also a :class:`TypeError` and a :class:`ValueError`, which such calls
    raised before, so existing handlers keep working.
    """


class StructFieldError(UsageError):
    """A struct field (tiling data, a kernel-argument struct) was given a value it cannot hold.

    A value of the wrong type, an integer out of the field's range, an array
    of the wrong length, or a field the struct does not have.
    """


class CostError(NpuemuError):
    """A launch's cost profile (``npuemu.cost.Profile``) was asked for something the launch did not measure."""


class NotInKernelError(NpuemuError):
    """A kernel-language builtin (``asc.add``, ``asc.TPipe``, ...) was called outside an ``@asc.jit`` function."""


class TilingError(NpuemuError, ValueError):
    """A tiling function cannot tile its inputs, or returned a result no launch can use.

    Also a :class:`ValueError`: the inputs are what a tiling function rejects.
    """


class SuperKernelError(NpuemuError):
    """A SuperKernel cannot be built from its sub-kernels (CANN's compile error EB0500): a bad option value,
    an invalid debug core ratio, an early-start or split-mode mismatch, a scope that cannot be fused."""


class SuperKernelOptionError(SuperKernelError, ValueError):
    """A SuperKernel option string or dict that CANN's parser rejects (spec §1.2)."""


class SweepError(NpuemuError):
    """A sweep cannot run: its scheduler cannot be reached, or the optional Dask extra is not installed."""


class WorkerVersionError(SweepError):
    """A Dask worker runs another npuemu (version or sources), Numba or llvmlite than the client: refused."""


# --------------------------------------------------------------------------- compile time


@dataclass(frozen=True)
class SourceLoc:
    """A position in a kernel's (or helper's) Python source."""

    filename: str
    lineno: int
    col: int
    function: str
    line_text: str = ""
    called_from: "SourceLoc | None" = None

    def short(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def render(self) -> str:
        """``file:line`` plus the source line and a caret under the column."""
        out = [f'  File "{self.filename}", line {self.lineno}, in {self.function}']
        if self.line_text:
            stripped = self.line_text.rstrip()
            indent = len(stripped) - len(stripped.lstrip())
            out.append("    " + stripped.lstrip())
            out.append("    " + " " * max(self.col - indent, 0) + "^")
        if self.called_from is not None:
            out.append("  called from:")
            out.append(self.called_from.render())
        return "\n".join(out)


class KernelCompileError(NpuemuError):
    """A kernel could not be compiled; the message shows the offending source line."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        text = message if loc is None else f"{message}\n{loc.render()}"
        super().__init__(text)


class UnsupportedSyntaxError(KernelCompileError):
    """Python syntax the kernel language does not support."""


class KernelTypeError(KernelCompileError):
    """A value of the wrong kind or dtype was passed to an API (e.g. int8 to ``exp``)."""


class UnknownAPIError(KernelCompileError):
    """A name that is neither part of the kernel API nor a compile-time constant."""


# --------------------------------------------------------------------------- run time


class KernelFault(NpuemuError):
    """A kernel broke a hardware rule while running on an emulated core.

    Attributes give the pieces of the message separately so that tools and
    tests can inspect them: ``kernel``, ``core`` (e.g. ``"AIV 3"``), ``loc``
    (a :class:`SourceLoc`), ``rule`` (short rule name) and ``detail``; where
    the fault concerns one access, ``pipe`` is the pipe that made it (``"V"``,
    ``"MTE2"``, ``"S"``, ...) and ``buffer`` what it touched: a GM argument by
    name (``"z"``) or an on-chip memory (``"UB"``, ``"L1"``, ``"L0A"``, ...).
    Both are None when the fault does not say.
    """

    rule_name = "kernel fault"

    def __init__(self, detail: str, *, kernel: str = "?", core: str = "?",
                 loc: SourceLoc | None = None, rule: str | None = None,
                 pipe: str | None = None, buffer: str | None = None):
        self.kernel = kernel
        self.core = core
        self.loc = loc
        self.rule = rule or self.rule_name
        self.detail = detail
        self.pipe = pipe
        self.buffer = buffer
        where = f"kernel '{kernel}', core {core}"
        if loc is not None:
            where += f", {loc.short()}"
        text = f"{where}: [{self.rule}] {detail}"
        if loc is not None:
            text += "\n" + loc.render()
        super().__init__(text)


class BoundsError(KernelFault):
    """An access outside its tensor, buffer or GM region."""

    rule_name = "out of bounds"


class AlignmentError(KernelFault):
    """An address or length that breaks a hardware alignment rule."""

    rule_name = "alignment"


class CapacityError(KernelFault):
    """On-chip memory (UB, L1, L0*) over-subscribed."""

    rule_name = "capacity"


class QueueError(KernelFault):
    """Misuse of TPipe/TQue/TBuf: depth, buffer count, alloc/free order."""

    rule_name = "queue"


class ParamRangeError(KernelFault):
    """An instruction parameter (mask, repeat, stride, block count, ...) out of range."""

    rule_name = "parameter range"


class PositionError(KernelFault):
    """A tensor in a TPosition the instruction cannot read or write."""

    rule_name = "position"


class SyncError(KernelFault):
    """A synchronisation rule broken (set/wait pairing, event ids, barriers)."""

    rule_name = "sync"


class OverlapError(KernelFault):
    """Operands an instruction requires to be disjoint share memory (e.g. ``brcb``'s src and dst)."""

    rule_name = "operand overlap"


class DivisionByZeroError(KernelFault):
    """Scalar ``/``, ``//`` or ``%`` by zero in kernel code."""

    rule_name = "division by zero"


class DeadlockError(KernelFault):
    """Every live core waits and none can proceed: a hang on hardware."""

    rule_name = "deadlock"


class KernelTimeoutError(KernelFault):
    """A launch ran past its time budget (``timeout=``) or a core past its step budget (``max_steps=``).

    The message says where every core was; ``cores`` has it as data, one
    ``(core label, SourceLoc or None, what it was doing)`` per core.
    """

    rule_name = "timeout"
    cores: list[tuple[str, SourceLoc | None, str]]


class AtomicError(KernelFault):
    """An atomic GM write (``set_atomic_add`` and friends) of data whose type is not the atomic type."""

    rule_name = "atomic type"


class RaceError(KernelFault):
    """Two unordered accesses to the same memory, at least one a write."""

    rule_name = "race"


class DCacheError(KernelFault):
    """A scalar GM access or a DMA that sees, or destroys, data held in a core's DCache.

    Raised at check level ``full``: a stale read from the DCache, a DMA read of
    data still dirty in a DCache, or a write-back that overwrites newer GM data
    (a lost write).
    """

    rule_name = "dcache coherence"


class UninitializedReadError(KernelFault):
    """A read of on-chip memory that nothing has written since the kernel started (check level ``full``)."""

    rule_name = "uninitialised read"


class TrapError(KernelFault):
    """The kernel called ``trap()``: on the NPU the core stops with an exception the runtime reports."""

    rule_name = "trap"


class NullPointerError(KernelFault):
    """A system pointer (system workspace, HCCL context) read before anything set it."""

    rule_name = "null pointer"


class LocalMemoryWatchError(KernelFault):
    """An access inside a UB range armed with ``check_local_memory_ia`` (check level ``full``)."""

    rule_name = "local memory watch"
