"""Turning a compiled instruction's :class:`~npuemu.isa.fault.Fault` into the user's error.

A fault carries a code, a source-location id and three integers
(:mod:`npuemu.isa.fault`); :class:`FaultContext` names what those integers
refer to in the faulting launch (regions, cores, memories, dtypes, other
source lines) for the message renderers.
"""
from __future__ import annotations

from typing import Sequence

from .. import errors
from ..errors import SourceLoc
from ..codegen.emitter import statement_of
from ..isa.fault import FAULTS, Fault, Message
from ..language import dtype as dt
from ..language.enums import Hardware, TPosition, enum_name
from .args import Region
from .cores import CoreSpec


class FaultContext:
    """Names for fault messages: regions, positions, memories, dtypes, cores and source lines."""

    def __init__(self, kernel: str, regions: Sequence[Region], locs: Sequence[SourceLoc] = (),
                 cores: Sequence[CoreSpec] = (), generated: str = "", source: str = ""):
        self.kernel = kernel
        self.regions = regions
        self.locs = locs
        self.cores = cores
        self.generated = generated          # path of the generated module (debug-mode errors are found in it)
        self.generated_text = source        # its text

    def core_label(self, slot: int) -> str:
        """``AIV 3``: the core at launch slot ``slot`` (e.g. the other side of a cross-core race)."""
        return self.cores[slot].label if 0 <= slot < len(self.cores) else f"the core in launch slot {slot}"

    def source(self, loc_id: int) -> str:
        """``file:line: source`` of another instruction (e.g. the other side of a race)."""
        if 0 <= loc_id < len(self.locs):
            loc = self.locs[loc_id]
            return f"{loc.short()} `{loc.line_text.strip()}`"
        return f"location {loc_id}"

    def region(self, rid: int) -> str:
        if 0 <= rid < len(self.regions):
            r = self.regions[rid]
            return f"GM argument '{r.name}' ({r.bytes.size} bytes)"
        return f"GM region {rid}"

    def region_name(self, rid: int) -> str:
        """The GM argument's name alone (a fault's ``buffer``)."""
        return self.regions[rid].name if 0 <= rid < len(self.regions) else f"GM region {rid}"

    def position(self, pos: int) -> str:
        return enum_name(TPosition, pos, "position {}")

    def hardware(self, hw: int) -> str:
        return enum_name(Hardware, hw, "memory {}")

    def dtype(self, code: int) -> str:
        try:
            return dt.by_code(code).name
        except KeyError:
            return f"dtype {code}"


def translate_fault(exc: Fault, core: CoreSpec, ctx: FaultContext) -> errors.KernelFault:
    """The :class:`~npuemu.errors.KernelFault` a compiled instruction's fault stands for."""
    code, loc_id, a, b, c = (list(exc.args) + [0] * 5)[:5]
    cls, render = FAULTS.get(int(code), (errors.KernelFault, lambda a, b, c, env: f"fault code {code}"))
    loc = ctx.locs[loc_id] if 0 <= loc_id < len(ctx.locs) else None
    message = render(int(a), int(b), int(c), ctx)
    if not isinstance(message, Message):
        message = Message(message)
    return cls(message.text, kernel=ctx.kernel, core=core.label, loc=loc, pipe=message.pipe,
               buffer=message.buffer)


def raise_fault(exc: BaseException, core: CoreSpec, ctx: FaultContext) -> None:
    """Re-raise what stopped ``core`` as an npuemu error."""
    if isinstance(exc, Fault):
        raise translate_fault(exc, core, ctx) from None
    if isinstance(exc, errors.NpuemuError):
        raise exc
    # a Python error of the generated code in debug mode: its line is tagged with the kernel statement
    raise errors.KernelFault(f"{type(exc).__name__}: {exc}", kernel=ctx.kernel, core=core.label,
                             loc=_kernel_line(exc, ctx), rule="runtime error") from exc


def _kernel_line(exc: BaseException, ctx: FaultContext) -> SourceLoc | None:
    """The kernel statement whose generated code raised ``exc`` (innermost frame in the generated module)."""
    lines = ctx.generated_text.splitlines()
    found = None
    tb = exc.__traceback__
    while tb is not None:
        if ctx.generated and tb.tb_frame.f_code.co_filename == ctx.generated and 0 < tb.tb_lineno <= len(lines):
            loc_id = statement_of(lines[tb.tb_lineno - 1])
            if 0 <= loc_id < len(ctx.locs):
                found = ctx.locs[loc_id]
        tb = tb.tb_next
    return found


def without_frames(exc: errors.NpuemuError) -> errors.NpuemuError:
    """``exc`` without its traceback (nor a suppressed context), to re-raise from a launch.

    The frames below a launch hold its arrays (memories, shadows, the cores' arguments); a traceback through
    them would keep those alive until the garbage collector finds the cycle, so a program that catches faults
    in a loop would grow.  The error's message already names the kernel line.
    """
    exc.__traceback__ = None
    if exc.__suppress_context__:
        exc.__context__ = None
    return exc


__all__ = ["FaultContext", "translate_fault", "raise_fault", "without_frames"]
