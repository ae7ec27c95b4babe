"""The Numba internals npuemu relies on, checked once against the versions it supports.

npuemu extends Numba in three places that are not public API:

* ``cache index lock`` (``codegen/compiler.py``): ``numba.core.caching.IndexDataCacheFile.save/load``
  are wrapped in a file lock so parallel processes can share one cache;
* ``library cache locators`` (``isa/library_cache.py``): locator classes are put in front of
  ``numba.core.caching``'s ``_CacheImpl._locator_classes`` to stamp the instruction library's caches
  with the hash of every file they import;
* ``instruction symbols`` (``isa/linkage.py``): a ``CPUDispatcher`` subclass replaces the call
  lowering Numba registers in the target context's ``_defns`` table, so generated kernels call
  instructions by symbol.

Each place calls :func:`require` with the attributes it touches.  Outside the
supported range, or when an attribute is missing, the import fails with a
:class:`~npuemu.errors.NumbaVersionError` saying which Numba to install,
instead of a traceback from deep inside Numba or, worse, wrong results.  The
range is the one ``pyproject.toml`` declares; CI installs the newest Numba in
it.
"""
from __future__ import annotations

import functools
from typing import Any

import numba

from .errors import NumbaVersionError

SUPPORTED = ((0, 60), (0, 68))          # oldest and newest minor version, inclusive (pyproject.toml)


def _version(text: str) -> tuple[int, int]:
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (0, 0)


@functools.lru_cache(maxsize=None)
def supported_version() -> bool:
    """Whether the installed Numba is in the supported range."""
    low, high = SUPPORTED
    return low <= _version(numba.__version__) <= high


def require(feature: str, owner: Any, *attributes: str) -> None:
    """Fail clearly unless Numba is supported and ``owner`` has every one of ``attributes``."""
    missing = [a for a in attributes if not hasattr(owner, a)]
    if supported_version() and not missing:
        return
    low, high = SUPPORTED
    what = f"{getattr(owner, '__module__', '')}.{getattr(owner, '__qualname__', getattr(owner, '__name__', owner))}"
    detail = f"; {what} has no {', '.join(missing)}" if missing else ""
    raise NumbaVersionError(
        f"npuemu's {feature} needs Numba {low[0]}.{low[1]} to {high[0]}.{high[1]}, found {numba.__version__}"
        f"{detail}. Install a supported version: pip install 'numba>={low[0]}.{low[1]},<{high[0]}.{high[1] + 1}'")
