"""Numba cache invalidation for the instruction library as a whole.

Numba stamps a cached function with a hash of *its own* source file only.
The instruction library's functions call and inline each other across files
(``checks.local_access`` inlines ``local_shadow.local``; every instruction
inlines ``state`` constants), so editing one file would leave the machine
code of its callers in other files stale: they would keep running the old code.
This module stamps every ``@njit(cache=True)`` function under ``npuemu/isa``
and ``npuemu/numerics`` with the hash of its file *and every library file it
imports, transitively*: a function can only inline what its module imports,
so an edit invalidates exactly the caches that may hold the old code.  It is
imported by ``npuemu/isa/__init__.py``, before any instruction is defined.
"""
from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from numba.core import caching

from ..numba_compat import require

_ROOT = Path(__file__).resolve().parent.parent
_LIBRARY_DIRS = (_ROOT / "isa", _ROOT / "numerics")
_FINGERPRINT: str | None = None


def library_fingerprint() -> str:
    """Hash of the instruction library sources (``npuemu/isa``, ``npuemu/numerics``)."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        h = hashlib.sha256()
        for d in _LIBRARY_DIRS:
            for p in sorted(d.glob("*.py")):
                h.update(p.name.encode())
                h.update(p.read_bytes())
        _FINGERPRINT = h.hexdigest()[:16]
    return _FINGERPRINT


# ``from .mod import a, b`` / ``from .. import (a,\n b)`` at the start of a line
_RELATIVE_IMPORT = re.compile(r"^from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)


@lru_cache(maxsize=None)
def _imports(path: Path) -> frozenset[Path]:
    """The library files ``path`` imports directly (relative imports only: the library uses no others).

    Read with a pattern, not parsed: every instruction module's stamp is
    needed when its functions are defined, so this runs on ``import
    npuemu.asc``, where parsing the library took half a second.  The library
    imports only at module level (tests/test_library_cache.py compares the
    pattern's findings with the AST's).
    """
    found: set[Path] = set()
    for dots, module, names in _RELATIVE_IMPORT.findall(path.read_text(encoding="utf-8")):
        base = path.parent
        for _ in range(len(dots) - 1):
            base = base.parent
        target = base.joinpath(*module.split(".")) if module else base
        listed = [n.split(" as ")[0].strip() for n in names.strip("()").replace("\n", " ").split(",")]
        candidates = [target.with_suffix(".py")] + [target / f"{n}.py" for n in listed if n.isidentifier()]
        found.update(c for c in candidates if c.parent in _LIBRARY_DIRS and c.is_file())
    return frozenset(found)


@lru_cache(maxsize=None)
def module_stamp(py_file: str) -> str:
    """Hash of ``py_file`` and of the library files it imports, transitively."""
    seen: set[Path] = set()
    todo = [Path(py_file).resolve()]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(_imports(p) - seen)
    h = hashlib.sha256()
    for p in sorted(seen):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _in_library(py_file: str) -> bool:
    try:
        parent = Path(py_file).resolve().parent
    except OSError:
        return False
    return parent in _LIBRARY_DIRS


def _library_locator(base: type) -> type:
    """``base`` (a Numba cache locator) restricted to the library, stamped with :func:`module_stamp`."""

    class LibraryLocator(base):                    # type: ignore[misc, valid-type]
        def get_source_stamp(self) -> Any:
            return module_stamp(self._py_file)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if not _in_library(py_file):
                return None
            return super().from_function(py_func, py_file)

    LibraryLocator.__name__ = f"Library{base.__name__}"
    return LibraryLocator


def install() -> None:
    """Put the library locators in front of Numba's own (idempotent)."""
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    require("library cache locators", impl if impl is not None else caching, "_locator_classes")
    require("library cache locators", caching, "UserProvidedCacheLocator", "InTreeCacheLocator",
            "UserWideCacheLocator", "_SourceFileBackedLocatorMixin")
    classes = impl._locator_classes
    if any(getattr(c, "_npuemu_library", False) for c in classes):
        return
    # the same precedence as Numba: NUMBA_CACHE_DIR, then __pycache__, then the user-wide directory
    bases = (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator)
    ours = [_library_locator(b) for b in bases]
    for c in ours:
        c._npuemu_library = True
    classes[:0] = ours


install()
