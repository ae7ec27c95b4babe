"""Every process of a sweep runs the same code: a fingerprint per process, compared with the client's.

A worker that runs another npuemu (its version, or its sources: a checkout
with local edits has the version of its last release), another Numba or
llvmlite (they decide the machine code and Numba's cache format) or another
NumPy would run different code than the client checked and built binaries
with.  Such a worker is refused with a :class:`~npuemu.errors.WorkerVersionError`
naming the worker and every field that differs, before any case runs on it
(:func:`check_workers`), and again by each case (:func:`verify`), so a worker
that joins the cluster later cannot slip through.
"""
from __future__ import annotations

import functools
import hashlib
import platform as _platform
from pathlib import Path
from typing import Any, Mapping

from ..errors import WorkerVersionError

FIELDS = ("npuemu", "sources", "numba", "llvmlite", "numpy", "python")


@functools.lru_cache(maxsize=1)
def sources_fingerprint() -> str:
    """sha256 of npuemu's Python sources (the package, its kernels and tiling functions; paths relative)."""
    import npuemu
    import npuemu.kernels
    import npuemu.tiling
    h = hashlib.sha256()
    for name, pkg in (("npuemu", npuemu), ("kernels", npuemu.kernels), ("tiling", npuemu.tiling)):
        root = Path(pkg.__file__).resolve().parent
        for p in sorted(root.rglob("*.py")):
            if "__pycache__" in p.parts or (name == "npuemu" and p.parent != root and
                                             p.relative_to(root).parts[0] in ("kernels", "tiling")):
                continue
            h.update(f"{name}/{p.relative_to(root).as_posix()}".encode() + b"\0")
            h.update(p.read_bytes())
    return h.hexdigest()


def fingerprint() -> dict[str, str]:
    """What this process runs: npuemu's version and source hash, Numba, llvmlite, NumPy, Python (major.minor)."""
    import llvmlite
    import numba
    import numpy

    import npuemu
    return {"npuemu": str(npuemu.__version__), "sources": sources_fingerprint(), "numba": numba.__version__,
            "llvmlite": llvmlite.__version__, "numpy": numpy.__version__,
            "python": ".".join(_platform.python_version_tuple()[:2])}


def differences(expected: Mapping[str, str], found: Mapping[str, str]) -> list[str]:
    """``field: worker X, client Y`` for each field that differs."""
    out = []
    for name in FIELDS:
        want, got = expected.get(name), found.get(name)
        if want != got:
            if name == "sources":
                want, got = (want or "?")[:12], (got or "?")[:12]
            out.append(f"{name}: worker {got}, client {want}")
    return out


def refusal(worker: str, expected: Mapping[str, str], found: Mapping[str, str]) -> WorkerVersionError | None:
    """The error refusing ``worker`` (None when it runs what the client runs)."""
    diff = differences(expected, found)
    if not diff:
        return None
    return WorkerVersionError(
        f"worker {worker} is refused: it runs other code than this client ({'; '.join(diff)}). Install the "
        f"same npuemu (same version and sources), Numba and llvmlite on every worker and restart it "
        f"(`dask worker` from the client's environment); a worker would otherwise run stale code")


def verify(expected: Mapping[str, str], worker: str = "this worker") -> None:
    """Raise :class:`WorkerVersionError` unless this process runs what ``expected`` describes."""
    error = refusal(worker, expected, fingerprint())
    if error is not None:
        raise error


def check_workers(client: Any, expected: Mapping[str, str] | None = None) -> int:
    """Compare every worker of ``client`` with this process; raise for the first one that differs.

    Returns the number of workers checked.
    """
    expected = dict(expected or fingerprint())
    found = client.run(fingerprint)
    refused = [refusal(addr, expected, fp) for addr, fp in sorted(found.items())]
    refused = [r for r in refused if r is not None]
    if refused:
        if len(refused) > 1:
            raise WorkerVersionError(f"{refused[0]} (and {len(refused) - 1} more worker(s) of {len(found)})")
        raise refused[0]
    return len(found)
