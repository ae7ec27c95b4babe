"""From generated source to a callable per-core kernel, cached on disk.

The generated module is written to the kernel cache directory under a name
derived from the SHA-256 of its text (which includes a fingerprint of the
instruction library), so identical kernels share one file and any change to
the kernel, its helpers, its constants or npuemu itself gives a new file.
Numba's own ``cache=True`` stores the machine code next to that file, so a
second process skips compilation; ``<name>_<sha>.links`` lists the
instructions that machine code calls by symbol, loaded before it
(:mod:`npuemu.isa.linkage`).  Files are never rewritten once they exist:
Numba keys its cache on the source file's timestamp.

Several processes may share one cache (pytest-xdist workers, parallel CI
jobs): generated files are written atomically, and Numba's cache index is
updated under a file lock (see :func:`_lock_numba_cache_index`).
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

from numba.core.compiler import CompilerBase, DefaultPassBuilder

from ..errors import KernelCompileError
from ..isa.linkage import LinkError, linking, load_links
from ..numba_compat import require

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, Numba's own behaviour
    fcntl = None  # type: ignore[assignment]

_LOCK = threading.Lock()


@contextlib.contextmanager
def _directory_lock(path: str, exclusive: bool) -> Iterator[None]:
    """An advisory lock on directory ``path`` held by this block (nothing where flock is unavailable)."""
    try:
        fd = os.open(path, os.O_RDONLY) if fcntl is not None else -1
    except OSError:              # the directory does not exist yet: nothing to load, Numba creates it to save
        fd = -1
    try:
        if fd >= 0:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        if fd >= 0:
            os.close(fd)         # closing releases the lock


def _lock_numba_cache_index() -> None:
    """Make Numba's cache saves atomic across processes.

    Numba keeps the machine code of a function's overloads in numbered files
    (``<fn>.<n>.nbc``) listed in one index (``<fn>.nbi``).  To add an overload
    it reads the index, takes the first unused number, rewrites the index and
    writes the data file: each write is atomic, the sequence is not.  Two
    processes that save different overloads of one function at once (two
    pytest-xdist workers compiling the same instruction for float16 and
    float32, say) can both take number 1; the index then lists one overload
    while the file holds the other's machine code, and every later process
    that loads it runs the wrong code (seen with eight processes compiling one
    function for eight argument types: wrong results from the cache).  Holding
    an exclusive lock on the cache directory for the whole save, and a shared
    one while loading, serialises those sequences; saves take milliseconds,
    compilation itself still runs in parallel.  Patching the class covers the
    instruction library's ``@njit(cache=True)`` functions as well as the
    generated kernels.
    """
    from numba.core import caching
    require("cache index lock", caching, "IndexDataCacheFile")
    cls = caching.IndexDataCacheFile
    require("cache index lock", cls, "save", "load", "_load_index", "_save_index")
    if getattr(cls.save, "_npuemu_locked", False):
        return
    save, load = cls.save, cls.load

    def locked_save(self: Any, key: Any, data: Any) -> None:
        with _directory_lock(self._cache_path, exclusive=True):
            save(self, key, data)

    def locked_load(self: Any, key: Any) -> Any:
        with _directory_lock(self._cache_path, exclusive=False):
            return load(self, key)

    locked_save._npuemu_locked = True    # type: ignore[attr-defined]
    cls.save, cls.load = locked_save, locked_load


_lock_numba_cache_index()


def cache_dir() -> Path:
    """Where generated kernels and their machine code live (``NPUEMU_CACHE_DIR`` overrides)."""
    env = os.environ.get("NPUEMU_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "npuemu"


@dataclass
class GeneratedModule:
    """A generated kernel module, imported from the cache: its kernel function in both execution modes."""

    name: str                            # the kernel's name
    path: Path                           # <cache>/npuemu_kernels/<name>_<digest>.py
    source: str
    python_fn: Callable[..., Any]        # debug mode: the generated code run by CPython
    _numba_fn: Callable[..., Any] | None = None

    def numba_fn(self) -> Callable[..., Any]:
        if self._numba_fn is None:
            from numba import njit
            self._numba_fn = njit(cache=True, nogil=True, pipeline_class=KernelPipeline)(self.python_fn)
        return self._numba_fn


class KernelPipeline(CompilerBase):
    """Numba's nopython pipeline without SSA reconstruction, for generated kernels.

    Numba rebuilds SSA form in pure Python, at a cost that grows with the
    variables times the basic blocks: for a generated kernel (hundreds of
    int64 locals, a block per loop and per blocking wait) that was about a
    third of its compile time.  The generated code gives every local a single
    type from its first assignment on, which is what SSA form buys typing, so
    lowering it with plain mutable locals (Numba's path before it adopted SSA,
    still its object-mode path) is equivalent.
    """

    def define_pipelines(self) -> list[Any]:
        self.state.flags.enable_ssa = False
        return [DefaultPassBuilder.define_nopython_pipeline(self.state)]


PACKAGE = "npuemu_kernels"


def _module_name(path: Path) -> str:
    return f"{PACKAGE}.{path.stem}"


def ensure_package(root: Path) -> None:
    """Make ``<cache>/npuemu_kernels`` an importable package (Numba pickles kernels by module name)."""
    pkg = root / PACKAGE
    init = pkg / "__init__.py"
    if not init.exists():
        pkg.mkdir(parents=True, exist_ok=True)
        _write_once(init, '"""Kernels generated by npuemu (a cache: safe to delete)."""\n')
    if str(root) not in sys.path:
        sys.path.append(str(root))


def _write_once(path: Path, text: str) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        os.link(tmp, path)          # atomic, and never replaces a file another process wrote
    except FileExistsError:
        pass
    except OSError:
        if not path.exists():
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` so that no reader ever sees part of it: a temporary file, flushed, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_module(name: str, source: str) -> tuple[Path, ModuleType]:
    """Write ``source`` (once) into the cache and import it."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    safe = "".join(c if c.isalnum() else "_" for c in name)[:40]
    root = cache_dir()
    path = root / PACKAGE / f"{safe}_{digest}.py"
    modname = _module_name(path)
    with _LOCK:
        if modname in sys.modules:
            return path, sys.modules[modname]
        ensure_package(root)
        _write_once(path, source)
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


def generated_module(name: str, source: str) -> GeneratedModule:
    """Write (once) and import the generated module ``source`` of kernel ``name``."""
    path, module = load_module(name, source)
    return GeneratedModule(name, path, source, module.kernel)


def compile_native(ck: GeneratedModule, signature: tuple[Any, ...]) -> Callable[..., Any]:
    """The machine code of ``ck`` for ``signature`` (compiled, or loaded from the disk cache).

    Returns the compiled entry point itself: a launch calls it with arguments
    it built to match ``signature`` (``npuemu.codegen.abi``), so Numba's type
    dispatch is skipped.
    """
    from numba.core.errors import NumbaWarning
    fn = ck.numba_fn()
    links = ck.path.with_suffix(".links")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaWarning)
            if signature not in fn.overloads:
                _load_links_or_forget(fn, links)
                with linking(links):
                    fn.compile(signature)     # loads from the disk cache, or compiles and saves
        return fn.overloads[signature].entry_point
    except Exception as exc:  # noqa: BLE001 - NumbaError and whatever else Numba raises
        raise KernelCompileError(
            f"internal error: Numba could not compile the code generated for kernel '{ck.name}' "
            f"(generated source: {ck.path}). Please report this with the kernel.\n"
            f"{type(exc).__name__}: {exc}") from None


def _load_links_or_forget(fn: Any, links: Path) -> None:
    """Load the instructions a cached kernel calls by symbol; if that fails, drop the cached kernel."""
    try:
        load_links(links)
    except LinkError:
        fn._cache.flush()       # compile afresh rather than load code whose callees cannot be resolved
        links.unlink(missing_ok=True)
