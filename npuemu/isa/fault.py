"""The one exception compiled instructions raise, and the table that explains it.

Instructions cannot build rich messages in nopython mode, so they raise
``Fault(code, loc, a, b, c)``: a fault code, the source-location id of the
call, and up to three integers.  Each instruction module registers its codes
with :func:`register` together with the user-facing error class and a
function that renders the message; the launcher turns the ``Fault`` into that
:class:`npuemu.errors.KernelFault`, adding kernel, core and source line.

Code ranges per module keep parallel work from colliding:
common 1-99, data movement 100-199, queues/buffers 200-299, vector 300-399,
cast 400-499, reductions 500-599, compare/select/gather 600-699,
sync 700-799, debug 800-899, cube 900-999, scalar access 1000-1099.
"""
from __future__ import annotations

from typing import Callable, Protocol

from .. import errors


class Fault(Exception):
    """Raised inside compiled kernel code; converted before users see it."""


class FaultEnv(Protocol):
    """What a message renderer can ask about the faulting launch."""

    def region(self, rid: int) -> str: ...
    def position(self, pos: int) -> str: ...
    def hardware(self, hw: int) -> str: ...
    def dtype(self, code: int) -> str: ...
    def source(self, loc_id: int) -> str: ...


Render = Callable[[int, int, int, FaultEnv], str]

FAULTS: dict[int, tuple[type[errors.KernelFault], Render]] = {}


def register(table: dict[int, tuple[type[errors.KernelFault], Render]]) -> None:
    """Add fault codes; a code may be registered once."""
    for code, entry in table.items():
        if code in FAULTS and FAULTS[code] != entry:
            raise RuntimeError(f"fault code {code} registered twice")
        FAULTS[code] = entry
