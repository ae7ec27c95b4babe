"""The variables of one function body being lowered: the kernel, or one inlined helper call."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from ..errors import SourceLoc
from .source import ParsedFunction
from .types import Value


@dataclass
class Scope:
    """Variables of one function body: the kernel, or one inlined helper call."""

    parsed: ParsedFunction
    prefix: str
    call_site: SourceLoc | None
    bindings: dict[str, Value] = field(default_factory=dict)
    returned: Value | None = None

    @functools.cached_property
    def namespace(self) -> dict[str, Any]:
        fn = self.parsed.fn
        ns = dict(fn.__globals__)
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    ns[name] = cell.cell_contents
                except ValueError:
                    pass
        return ns
