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

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

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
