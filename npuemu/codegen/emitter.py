"""Accumulates the generated Python source of one kernel."""
from __future__ import annotations

import contextlib
from typing import Iterator

from ..errors import SourceLoc


class Emitter:
    """Lines of generated code, the imports they need and the source-location table."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1
        self.imports: dict[str, str] = {}       # alias -> "module:attr"
        self.locs: list[SourceLoc] = []
        self._loc_ids: dict[SourceLoc, int] = {}
        self._tmp = 0
        self.statement = -1                     # location id of the kernel statement being lowered

    def emit(self, line: str) -> None:
        """Append ``line``, tagged ``# @<id>`` with the kernel statement it comes from (see :func:`statement_of`)."""
        tag = f"  # @{self.statement}" if self.statement >= 0 else ""
        self.lines.append("    " * self.depth + line + tag)

    @contextlib.contextmanager
    def block(self, header: str) -> Iterator[None]:
        """Emit ``header`` (ending in ':') and indent what is emitted inside."""
        self.emit(header)
        self.depth += 1
        mark = len(self.lines)
        try:
            yield
        finally:
            if len(self.lines) == mark:
                self.emit("pass")
            self.depth -= 1

    def tmp(self, hint: str = "t") -> str:
        self._tmp += 1
        return f"_{hint}{self._tmp}"

    def loc_id(self, loc: SourceLoc) -> int:
        if loc not in self._loc_ids:
            self._loc_ids[loc] = len(self.locs)
            self.locs.append(loc)
        return self._loc_ids[loc]

    def import_fn(self, module: str, attr: str) -> str:
        """Alias under which generated code calls ``module.attr``."""
        alias = module.rsplit(".", 1)[-1] + "__" + attr
        self.imports[alias] = f"{module}:{attr}"
        return alias


def statement_of(line: str) -> int:
    """The location id a generated line is tagged with (-1: none): how a debug-mode error finds its kernel line."""
    head, sep, tag = line.rpartition("  # @")
    return int(tag) if sep and tag.isdigit() else -1
