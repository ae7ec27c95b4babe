"""Stable text for the values a binary key holds (ConstExpr values, module constants).

The text depends only on the value, never on an object's address or on a
file path, so keys computed in different processes and checkouts agree.
Values with no such text (arbitrary objects) give ``None``; the frontend
extends :class:`Describer` with functions and classes, which it fingerprints
by source (``npuemu.frontend.fingerprint``).
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

_SCALARS = (type(None), bool, int, float, complex, str, bytes)


class Describer:
    """Describes plain data: numbers, strings, containers of them, enums, dtypes."""

    def describe(self, v: Any) -> str | None:
        if isinstance(v, _SCALARS):
            return f"{type(v).__name__}:{v!r}"
        if isinstance(v, (tuple, list)):
            items = [self.describe(x) for x in v]
            return None if None in items else f"{type(v).__name__}({','.join(items)})"   # type: ignore[arg-type]
        if isinstance(v, (set, frozenset)):
            items = [self.describe(x) for x in v]
            return None if None in items else f"set({','.join(sorted(items))})"          # type: ignore[arg-type]
        if isinstance(v, enum.Enum):
            return f"enum:{qualname(type(v))}.{v.name}={v.value!r}"
        if isinstance(v, np.generic):
            return f"{type(v).__name__}:{v.item()!r}"
        if isinstance(v, np.dtype):
            return f"np.dtype:{v.str}"
        from ..language.dtype import DataType
        if isinstance(v, DataType):
            return f"dtype:{v.name}"
        return self.other(v)

    def other(self, v: Any) -> str | None:
        """Anything that is not plain data: no stable text here."""
        return None


def describe(value: Any) -> str | None:
    """Stable text for plain data (see :class:`Describer`), None for anything else."""
    return Describer().describe(value)


def qualname(obj: Any) -> str:
    """``module.QualName`` of a class or function."""
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', getattr(obj, '__name__', '?'))}"
