"""From generated source to a callable per-core kernel, cached on disk.

The generated module is written to the kernel cache (:mod:`.cache`) under a
name derived from the sha256 of its text (which includes a fingerprint of the
instruction library), so identical kernels share one file and any change to
the kernel, its helpers, its constants or npuemu itself gives a new file.
Numba's own ``cache=True`` stores the machine code next to that file, so a
second process skips compilation; ``<name>_<sha>.links`` lists the
instructions that machine code calls by symbol, loaded before it
(:mod:`npuemu.isa.linkage`).  Machine code is only loaded from an entry whose
manifest matches its files; a damaged entry is rebuilt.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from ..errors import KernelCompileError
from ..isa.linkage import LinkError, linking, load_links
from .compile_report import install as _install_compile_report
from .cache import (PACKAGE, check_entry, discard_machine_code, ensure_package, entry_files,
                    entry_intact, entry_lock, find_entry, lock_numba_cache_index, record_entry, roots,
                    write_atomic)
from .pipeline import KernelPipeline

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, Numba's own behaviour
    fcntl = None  # type: ignore[assignment]

_LOCK = threading.Lock()
lock_numba_cache_index()
_install_compile_report()      # NPUEMU_COMPILE_REPORT=<path>: one line per compilation


@dataclass
class GeneratedModule:
    """A generated kernel module, imported from the cache: its kernel function in both execution modes."""

    name: str                            # the kernel's name
    path: Path                           # <cache>/npuemu_kernels/<name>_<digest>.py
    source: str
    python_fn: Callable[..., Any]        # debug mode: the generated code run by CPython
    _numba_fn: Callable[..., Any] | None = None

    def numba_fn(self) -> Callable[..., Any]:
        """The Numba dispatcher of the kernel function, caching its machine code beside the module."""
        if self._numba_fn is None:
            from numba import njit
            if not self.path.exists():       # the cache was cleared under this process
                _write_source(self.path, self.source)
            self._numba_fn = njit(cache=True, nogil=True, pipeline_class=KernelPipeline)(self.python_fn)
        return self._numba_fn


def _module_name(path: Path) -> str:
    return f"{PACKAGE}.{path.stem}"


def load_module(name: str, source: str) -> tuple[Path, ModuleType]:
    """Write ``source`` (once) into the cache and import it."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    safe = "".join(c if c.isalnum() else "_" for c in name)[:40]
    filename = f"{safe}_{digest}.py"
    with _LOCK:
        modname = f"{PACKAGE}.{filename[:-3]}"
        module = sys.modules.get(modname)
        if module is not None:
            path = Path(module.__file__ or "")
            if not path.exists():           # the cache was cleared under this process: put the file back
                _write_source(path, source)
            return path, module
        path = find_entry(filename) or ensure_package(roots().write) / filename
        _write_source(path, source)
        spec = importlib.util.spec_from_file_location(modname, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - a lowering bug produced invalid Python
            raise KernelCompileError(
                f"internal error: the code generated for kernel '{name}' does not load "
                f"(generated source: {path}): {type(exc).__name__}: {exc}. Please report this with the "
                f"kernel.") from None
        sys.modules[modname] = module
    return path, module


def _write_source(path: Path, source: str) -> None:
    """Make ``path`` hold ``source``: written if missing, rewritten (and its machine code dropped) if damaged."""
    ensure_package(path.parent.parent)
    check_entry(path)
    try:
        on_disk = path.read_bytes()
    except FileNotFoundError:
        write_atomic(path, source.encode())
        return
    if on_disk != source.encode():
        discard_machine_code(path, "its generated source does not match its name")
        write_atomic(path, source.encode())


def generated_module(name: str, source: str) -> GeneratedModule:
    """Write (once) and import the generated module ``source`` of kernel ``name``."""
    path, module = load_module(name, source)
    return GeneratedModule(name, path, source, module.kernel)


def compile_native(ck: GeneratedModule, signature: tuple[Any, ...]) -> Callable[..., Any]:
    """The machine code of ``ck`` for ``signature`` (compiled, or loaded from the disk cache).

    Returns the compiled entry point itself: a launch calls it with arguments
    it built to match ``signature`` (``npuemu.codegen.abi``), so Numba's type
    dispatch is skipped.  Machine code is loaded only from an entry whose
    manifest matches its files; otherwise the entry is rebuilt.
    """
    fn = ck.numba_fn()
    if signature not in fn.overloads:
        with entry_lock(ck.path):
            intact = entry_intact(ck.path)
            if intact is False:
                discard_machine_code(ck.path, "its files do not match its manifest")
            elif intact is None and len(entry_files(ck.path)) > 1:
                discard_machine_code(ck.path, "it has no manifest")      # e.g. a process killed mid-save
            fresh = _compile(ck, fn, signature, load_links_first=bool(intact))
            if fresh or not intact:
                record_entry(ck.path)
    return fn.overloads[signature].entry_point


def _compile(ck: GeneratedModule, fn: Any, signature: tuple[Any, ...], load_links_first: bool) -> bool:
    """Compile (or load) ``fn`` for ``signature``; returns whether it was compiled rather than loaded."""
    from numba.core.errors import NumbaWarning
    links = ck.path.with_suffix(".links")
    misses = sum(fn.stats.cache_misses.values())
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaWarning)
            if load_links_first:
                _load_links_or_forget(fn, links)
            with linking(links):
                fn.compile(signature)     # loads from the disk cache, or compiles and saves
    except Exception as exc:  # noqa: BLE001 - NumbaError and whatever else Numba raises
        raise KernelCompileError(
            f"internal error: Numba could not compile the code generated for kernel '{ck.name}' "
            f"(generated source: {ck.path}). Please report this with the kernel.\n"
            f"{type(exc).__name__}: {exc}") from None
    return sum(fn.stats.cache_misses.values()) > misses


def _load_links_or_forget(fn: Any, links: Path) -> None:
    """Load the instructions a cached kernel calls by symbol; if that fails, drop the cached kernel."""
    try:
        load_links(links)
    except LinkError:
        fn._cache.flush()       # compile afresh rather than load code whose callees cannot be resolved
        links.unlink(missing_ok=True)
