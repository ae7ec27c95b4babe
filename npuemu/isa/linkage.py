"""Instructions that generated kernels call by symbol instead of inlining.

Numba compiles a call to another ``@njit`` function by linking the callee's
LLVM bitcode (and everything it calls) into the caller's module, where it is
optimised and turned into machine code again.  For a generated kernel that is
the whole instruction library it touches: a matmul kernel spent 24 of its 26
compile seconds re-optimising ``mmad``, ``fixpipe`` and the data movements,
work already done once when the instruction itself was compiled.

An :func:`instruction` is compiled once per argument types (and cached on
disk like any ``@njit(cache=True)`` function); its native entry point is
registered with LLVM under a stable name, and a generated kernel calls it
through that name, so the kernel's own compilation only covers the kernel.
Instructions are big loops over vector lanes or fractals, so the call costs
nothing measurable; the small scalar helpers (``arith``, tensor views, local
get/set) stay plain ``@njit`` functions and are still inlined.

A kernel's machine code saved by Numba's disk cache refers to those names,
which only resolve once the instructions have been loaded in the process.
While :func:`linking` is active around a kernel's compilation, every call
lowered in the kernel's own module is recorded in a *link file* beside the
generated source, before Numba saves anything; :func:`load_links` reads it
back and loads those instruction specialisations before the kernel is loaded
from the cache.  Calls from anywhere else (one instruction calling another,
a kernel compiled outside :func:`linking`) are linked the usual way, so no
cached code ever refers to a name nobody will load.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib
import json
import os
import pickle
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

from llvmlite import binding as ll
try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]
from numba.core import cgutils, imputils, sigutils
from numba.core.base import BaseContext
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

from ..numba_compat import require

require("instruction symbols", CPUDispatcher, "add_overload", "enable_caching", "compile")
require("instruction symbols", BaseContext, "remove_user_function", "declare_function", "add_linking_libs")
require("instruction symbols", imputils, "fix_returning_optional", "impl_ret_new_ref")


class LinkError(Exception):
    """A kernel's link file names an instruction that cannot be loaded (stale or corrupt file)."""


class _Recording(threading.local):
    active: "LinkFile | None" = None


_RECORDING = _Recording()


class LinkFile:
    """The instruction specialisations one generated kernel calls by symbol, one JSON line each.

    A line is ``[module, attribute, pickled argument types]``: enough to
    import the instruction and compile (or load) that specialisation.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.module_stem = path.stem           # the generated module's unique name (it ends in a digest)
        self._known: set[str] | None = None

    def _lines(self) -> list[str]:
        try:
            return self.path.read_text().splitlines()
        except FileNotFoundError:
            return []

    def add(self, module: str, name: str, argtypes: tuple[Any, ...]) -> None:
        """Append one callee unless listed (under a lock: concurrent compilers of one kernel write it once)."""
        if self._known is None:
            self._known = set(self._lines())
        line = json.dumps([module, name, base64.b64encode(pickle.dumps(argtypes)).decode()])
        if line in self._known:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "r") as f:
                present = set(f.read().splitlines())
            if line not in present:
                os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)                # closing releases the lock
        self._known.add(line)

    def load(self) -> None:
        """Load (or compile) every recorded instruction specialisation and register its symbol."""
        for line in dict.fromkeys(self._lines()):
            try:
                module, name, blob = json.loads(line)
                disp = getattr(importlib.import_module(module), name)
                argtypes = pickle.loads(base64.b64decode(blob))
            except Exception as exc:  # noqa: BLE001 - any damage means: do not trust the cached kernel
                raise LinkError(f"{self.path.name}: unreadable entry ({type(exc).__name__}: {exc})") from None
            if not isinstance(disp, InstructionDispatcher):
                raise LinkError(f"{self.path.name}: {module}.{name} is no longer an instruction")
            try:
                disp.compile(argtypes)
            except Exception as exc:  # noqa: BLE001 - the instruction changed under a stale cache entry
                raise LinkError(f"{self.path.name}: {module}.{name} does not compile for the recorded "
                                f"types ({type(exc).__name__})") from None
            disp.symbol(argtypes)


@contextlib.contextmanager
def linking(path: Path) -> Iterator[LinkFile]:
    """Record in ``path`` the instructions called by symbol while the kernel generated beside it compiles."""
    link = LinkFile(path)
    previous, _RECORDING.active = _RECORDING.active, link
    try:
        yield link
    finally:
        _RECORDING.active = previous


def load_links(path: Path) -> None:
    """Load what the kernel compiled with ``path`` as its link file calls (nothing if it has none)."""
    LinkFile(path).load()


COMPILE_WAIT = 600.0       # seconds a process waits for another's compile of one specialisation, at most


@contextlib.contextmanager
def _compiling(path: str) -> Iterator[None]:
    """Hold the file lock ``path`` while compiling: another process compiling the same specialisation
    finishes (and saves it to the cache) first, and this one loads it instead of compiling it again.

    Instructions call each other in a DAG, so two processes never wait for
    each other's locks in a cycle; still, a lock not had within
    :data:`COMPILE_WAIT` seconds is given up on and the compile goes ahead.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:              # a read-only cache: compile without the lock
        yield
        return
    try:
        deadline = time.monotonic() + COMPILE_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)                # closing releases the lock


class InstructionDispatcher(CPUDispatcher):
    """A Numba dispatcher whose calls from generated kernels go through a registered symbol."""

    _attr: tuple[str, str] | None = None

    def compile(self, sig: Any) -> Any:
        """Numba's compile, one process at a time per specialisation (pytest-xdist workers and parallel
        builds compile the same instructions at the same moment; the later ones load the first's)."""
        # under Numba's compiler lock: threads of this process serialise there before taking a file lock
        with global_compiler_lock:
            args, _ = sigutils.normalize_signature(sig)
            folder = getattr(self._cache, "cache_path", None)
            if fcntl is None or folder is None or tuple(args) in self.overloads:
                return super().compile(sig)
            digest = hashlib.sha256(f"{self.py_func.__module__}.{self.py_func.__qualname__}{args}"
                                    .encode()).hexdigest()[:24]
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError:
                return super().compile(sig)
            with _compiling(os.path.join(folder, f"npuemu-compile-{digest}.lock")):
                return super().compile(sig)

    def add_overload(self, cres: Any) -> None:
        super().add_overload(cres)
        if cres.objectmode:
            return
        # replace the call implementation Numba registered (link the callee's library) with ours
        ctx = self.targetctx
        require("instruction symbols", ctx, "_defns")
        with contextlib.suppress(KeyError):
            ctx.remove_user_function(cres.entry_point)
        impl = _call_impl(self, cres.fndesc, cres.library)
        ctx._defns[cres.entry_point].append(impl, impl.signature)

    def module_attribute(self) -> tuple[str, str] | None:
        """``(module, name)`` under which generated code imports this instruction, if it has one."""
        if self._attr is None:
            module = self.py_func.__module__
            for name, value in vars(sys.modules.get(module, object())).items():
                if value is self:
                    self._attr = (module, name)
                    break
        return self._attr

    def symbol(self, argtypes: tuple[Any, ...]) -> str:
        """The registered symbol of the specialisation for ``argtypes`` (registering it on first use)."""
        module, name = self.module_attribute() or (self.py_func.__module__, self.py_func.__qualname__)
        digest = hashlib.sha256(repr(tuple(str(t) for t in argtypes)).encode()).hexdigest()[:20]
        symbol = f"npuemu.{module}.{name}.{digest}"
        if not ll.address_of_symbol(symbol):
            cres = self.overloads[tuple(argtypes)]
            ll.add_symbol(symbol, cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))
        return symbol


def _call_impl(disp: InstructionDispatcher, fndesc: Any, library: Any) -> Callable[..., Any]:
    """The lowering of a call to one instruction specialisation (cf. ``numba.core.imputils.user_function``)."""

    def imp(context: Any, builder: Any, sig: Any, args: Any) -> Any:
        module = builder.module
        link = _RECORDING.active
        attr = disp.module_attribute()
        # only the kernel itself calls by symbol: its LLVM functions' mangled names contain its module name
        if link is not None and attr is not None and link.module_stem in builder.function.name:
            link.add(attr[0], attr[1], tuple(fndesc.argtypes))      # on disk before Numba caches the kernel
            fnty = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
            fn = cgutils.get_or_insert_function(module, fnty, disp.symbol(tuple(fndesc.argtypes)))
            context.call_conv.decorate_function(fn, fndesc.args, fndesc.argtypes, noalias=fndesc.noalias)
        else:
            fn = context.declare_function(module, fndesc)
            context.add_linking_libs([library])
        status, retval = context.call_conv.call_function(builder, fn, fndesc.restype, fndesc.argtypes, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        retval = imputils.fix_returning_optional(context, builder, sig, status, retval)
        return imputils.impl_ret_new_ref(context, builder, fndesc.restype, retval)

    imp.signature = fndesc.argtypes          # type: ignore[attr-defined]
    imp.libs = ()                            # type: ignore[attr-defined]
    return imp


def instruction(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@njit(cache=True, **options)`` for an instruction generated kernels call by symbol.

    Use it bare (``@instruction``) or with Numba options (``@instruction(error_model="numpy")``).
    """
    def wrap(py_func: Callable[..., Any]) -> InstructionDispatcher:
        disp = InstructionDispatcher(py_func=py_func, locals={}, targetoptions={"nopython": True, **options})
        disp.enable_caching()
        return disp

    return wrap(fn) if fn is not None else wrap
