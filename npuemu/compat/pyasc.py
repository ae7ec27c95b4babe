"""Run pyasc scripts unmodified on npuemu.

Usage::

    python -m npuemu.compat.pyasc SCRIPT [ARGS...]
    python -m npuemu.compat.pyasc -m MODULE [ARGS...]     # e.g. -m pytest test_vadd.py

The runner installs an import hook that serves pyasc's modules from npuemu
(``import asc``, ``import asc.runtime.config as config``, ``import
asc.lib.runtime as rt``, ``from asc.language.core.dtype import KnownTypes``,
...), then runs SCRIPT as ``__main__`` the way ``python SCRIPT`` would.  A
pyasc name npuemu does not implement raises :class:`UnsupportedAPIError`
naming it, where the script touches it.  Once the script imports torch,
torch_npu's ``npu`` device is CPU memory (``torch.rand(n, device="npu")``,
``x.npu()``, ``torch.npu.synchronize()``, ``import torch_npu``), until the
script ends (:mod:`npuemu.compat._torch_npu`).

:func:`install` does the same for the current interpreter (tests, notebooks)
and undoes it when used as a context manager.  Importing npuemu never installs
anything.  See docs/pyasc-compat.md for the module and name map.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import traceback
import types
from typing import Any, Sequence

from ..errors import NpuemuError
from .. import platform as _platform
from . import _pyasc_runtime as _rt
from ._torch_npu import NpuDevice
from .errors import PyascCompatError, UnsupportedAPIError, UnsupportedModuleError

__all__ = ["install", "Installation", "run_path", "run_module", "main", "PyascCompatError",
           "UnsupportedAPIError", "UnsupportedModuleError"]


# --------------------------------------------------------------------------- the served modules

# Module kinds.  KERNEL modules hold the kernel language (npuemu.asc): pyasc's
# language packages all feed its flat ``asc`` namespace, so each of them
# resolves names there.  PACKAGE modules only lead to their submodules.
# HOST modules hold CANN's host matmul tiling library (npuemu.host.matmul_tiling).
KERNEL, DTYPE, STRUCT, JIT, CONFIG, RUNTIME, STATE, PACKAGE, ADV, HOST = (
    "kernel", "dtype", "struct", "jit", "config", "runtime", "state", "package", "adv", "host")

MODULES: dict[str, str] = {
    "asc": KERNEL,
    "asc.language": KERNEL,
    "asc.language.core": KERNEL,
    "asc.language.core.dtype": DTYPE,
    "asc.language.core.struct": STRUCT,
    "asc.language.basic": KERNEL,
    "asc.language.fwk": KERNEL,
    "asc.language.adv": ADV,
    "asc.runtime": PACKAGE,
    "asc.runtime.config": CONFIG,
    "asc.runtime.jit": JIT,
    "asc.runtime.compiler": PACKAGE,
    "asc.runtime.launcher": PACKAGE,
    "asc.lib": PACKAGE,
    "asc.lib.runtime": RUNTIME,
    "asc.lib.runtime.state": STATE,
    "asc.lib.host": HOST,
    "asc.lib.host.wrappers": HOST,
    "asc.lib.profiling": PACKAGE,
}

# deeper pyasc modules (asc.language.basic.vec_binary, ...) by prefix
PREFIXES: tuple[tuple[str, str], ...] = (
    ("asc.language.core.", KERNEL),
    ("asc.language.basic.", KERNEL),
    ("asc.language.fwk.", KERNEL),
    ("asc.language.adv.", ADV),
    ("asc.lib.host.", PACKAGE),
)

# attributes that name a module other than parent.attr
ALIASES: dict[str, str] = {"asc.adv": "asc.language.adv"}

ORIGIN = "npuemu pyasc compatibility"


def module_kind(fullname: str) -> str | None:
    """The kind of the served module ``fullname``, or None if npuemu does not provide it."""
    kind = MODULES.get(fullname)
    if kind is None:
        kind = next((k for prefix, k in PREFIXES if fullname.startswith(prefix)), None)
    return kind


def _kernel_namespace() -> types.ModuleType:
    from .. import asc
    return asc


def _adv_namespace() -> types.ModuleType:
    from .. import adv
    return adv


def _contents(kind: str) -> dict[str, Any]:
    """The names a served module of ``kind`` starts with."""
    if kind in (KERNEL, ADV):
        ns = _kernel_namespace() if kind == KERNEL else _adv_namespace()
        # submodules (npuemu.asc.adv) are served as pyasc modules of their own, with pyasc's names
        return {k: v for k, v in vars(ns).items() if not k.startswith("_") and not isinstance(v, types.ModuleType)}
    if kind == DTYPE:
        from ..language import dtype as dt
        names = {t.name: t for t in (*dt.ALL, dt.void)}
        names.update(DataType=dt.DataType, KnownTypes=dt.KnownTypes, half=dt.half, float_=dt.float_,
                     double=dt.double, int_=dt.int_, bool_=dt.bool_)
        return names
    if kind == STRUCT:
        from ..language.struct import Field, Struct, StructField
        return {"Struct": Struct, "Field": Field, "StructField": StructField}
    if kind == JIT:
        from ..jit import JITFunction, jit
        return {"jit": jit, "JITFunction": JITFunction}
    if kind == CONFIG:
        return dict(_rt.CONFIG_NAMES)
    if kind == RUNTIME:
        return dict(_rt.RUNTIME_NAMES)
    if kind == HOST:
        from ..host.matmul_tiling import HOST_NAMES
        from ..language.adv_tiling import TCubeTiling
        # pyasc's own docstrings build the struct as host.TCubeTiling(); it is asc.adv.TCubeTiling
        return {**HOST_NAMES, "TCubeTiling": TCubeTiling}
    return {}


def _make_getattr(fullname: str, kind: str):
    """PEP 562 ``__getattr__`` of a served module: submodules, late names, then a clear error."""

    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            # dunder and private probes (pickle, inspect, IPython) expect a plain AttributeError
            raise AttributeError(f"module {fullname!r} has no attribute {name!r}")
        child = ALIASES.get(f"{fullname}.{name}", f"{fullname}.{name}")
        if child in MODULES:
            return importlib.import_module(child)
        if kind == KERNEL and hasattr(_kernel_namespace(), name):
            return getattr(_kernel_namespace(), name)     # added to npuemu.asc after this module was made
        if kind == ADV and hasattr(_adv_namespace(), name):
            return getattr(_adv_namespace(), name)
        if kind == STATE and name in _rt.STATE_GETTERS:
            return _rt.STATE_GETTERS[name]()
        raise UnsupportedAPIError(f"{fullname}.{name} is not supported by npuemu yet", name=name)

    return __getattr__


class AscImporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``asc`` and its submodules from npuemu."""

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "asc" and not fullname.startswith("asc."):
            return None
        if module_kind(fullname) is None:
            raise UnsupportedModuleError(f"{fullname} is not supported by npuemu yet", name=fullname)
        # every served module is a package, so that any deeper pyasc module path reaches this finder
        return importlib.machinery.ModuleSpec(fullname, self, origin=ORIGIN, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None     # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        name = module.__name__
        kind = module_kind(name)
        assert kind is not None
        module.__doc__ = f"pyasc's {name}, served by npuemu (see npuemu.compat.pyasc)."
        module.__dict__.update(_contents(kind))
        module.__getattr__ = _make_getattr(name, kind)  # type: ignore[method-assign]


# --------------------------------------------------------------------------- install / uninstall


def _served_modules() -> list[str]:
    return [name for name in sys.modules if name == "asc" or name.startswith("asc.")]


class Installation:
    """What :func:`install` returns: a context manager whose exit (or :meth:`uninstall`) undoes it.

    Only the call that actually installed the layer undoes it; a nested
    ``install()`` returns a handle whose exit leaves the outer one in place.
    """

    def __init__(self, importer: AscImporter | None, saved_modules: dict[str, types.ModuleType],
                 saved_platform: Any, npu_device: NpuDevice | None = None):
        self._importer = importer
        self._saved_modules = saved_modules
        self._saved_platform = saved_platform
        self._npu_device = npu_device

    @property
    def active(self) -> bool:
        """True while this handle's installation is in effect."""
        return self._importer is not None and self._importer in sys.meta_path

    def uninstall(self) -> None:
        """Remove the import hooks, the ``asc`` modules and torch's npu device; restore what was there before."""
        global _current
        if not self.active:
            return
        if self._npu_device is not None:
            self._npu_device.uninstall()
        sys.meta_path.remove(self._importer)  # type: ignore[arg-type]
        for name in _served_modules():
            del sys.modules[name]
        sys.modules.update(self._saved_modules)
        _platform.set_default_platform(self._saved_platform)
        self._importer = None
        _current = None

    def __enter__(self) -> "Installation":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.uninstall()


_current: Installation | None = None


def install() -> Installation:
    """Make ``import asc`` (and pyasc's submodules) resolve to npuemu in this interpreter.

    Any ``asc`` modules already imported (a real pyasc) are set aside and put
    back on uninstall, as is npuemu's default platform, which pyasc's
    ``config.set_platform`` changes.  Each installation starts with a fresh
    pyasc runtime state (backend, device, streams).  Once torch is imported,
    torch_npu's ``npu`` device maps to CPU memory (``torch.rand(n,
    device="npu")``, ``x.npu()``, ``torch.npu.synchronize()``, ``import
    torch_npu``) until uninstall; see :mod:`npuemu.compat._torch_npu`.
    """
    global _current
    if _current is not None and _current.active:
        return Installation(None, {}, None)
    saved_modules = {name: sys.modules.pop(name) for name in _served_modules()}
    saved_platform = _platform.set_default_platform(None)
    _platform.set_default_platform(saved_platform)      # only read it: the selection stays as it was
    _rt.reset_state()
    importer = AscImporter()
    sys.meta_path.insert(0, importer)
    npu_device = NpuDevice()
    npu_device.install()
    _current = Installation(importer, saved_modules, saved_platform, npu_device)
    return _current


# --------------------------------------------------------------------------- the runner


def run_path(path: str, args: Sequence[str] = ()) -> None:
    """Run the script at ``path`` as ``__main__`` with ``sys.argv = [path, *args]``, like ``python path``."""
    saved_argv, saved_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.argv = [path, *args]
    script_dir = os.path.dirname(os.path.abspath(path))
    if sys.path:
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    try:
        with install():
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved_argv
        if saved_path0 is not None:
            sys.path[0] = saved_path0


def run_module(name: str, args: Sequence[str] = ()) -> None:
    """Run module ``name`` as ``__main__`` with ``args``, like ``python -m name args``."""
    saved_argv = sys.argv
    sys.argv = [name, *args]
    try:
        with install():
            runpy.run_module(name, run_name="__main__", alter_sys=True)
    finally:
        sys.argv = saved_argv


USAGE = """\
usage: python -m npuemu.compat.pyasc SCRIPT [ARGS...]
       python -m npuemu.compat.pyasc -m MODULE [ARGS...]

Run a pyasc script (or module) unmodified on npuemu: `import asc` and pyasc's
runtime modules resolve to npuemu's emulator.  See docs/pyasc-compat.md.
"""


def print_script_error(exc: BaseException) -> None:
    """Print ``exc`` like ``python SCRIPT`` would, without the runner's frames.

    Leading frames of this module and runpy are noise.  An npuemu error's
    message already says what went wrong (and where, for kernels), so frames
    inside npuemu after the script's last line are dropped too; any other
    exception keeps them, as it may be a bug in npuemu.
    """
    runner = {os.path.abspath(__file__), os.path.abspath(runpy.__file__)}
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frames = list(traceback.extract_tb(exc.__traceback__))
    while frames and (frames[0].filename.startswith("<frozen runpy")
                      or os.path.abspath(frames[0].filename) in runner):
        frames.pop(0)
    if isinstance(exc, NpuemuError):
        while len(frames) > 1 and os.path.abspath(frames[-1].filename).startswith(package):
            frames.pop()
    report = traceback.TracebackException(type(exc), exc, exc.__traceback__)
    report.stack = traceback.StackSummary.from_list(frames)
    sys.stderr.write("".join(report.format()))


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        sys.stderr.write(USAGE)
        return 2
    if argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE)
        return 0
    try:
        if argv[0] == "-m":
            if len(argv) < 2:
                sys.stderr.write("npuemu.compat.pyasc: -m needs a module name\n" + USAGE)
                return 2
            run_module(argv[1], argv[2:])
        else:
            if not os.path.isfile(argv[0]):
                sys.stderr.write(f"npuemu.compat.pyasc: can't open file {argv[0]!r}: no such file\n")
                return 2
            run_path(argv[0], argv[1:])
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - report the script's own error like `python` does
        print_script_error(exc)
        return 1
    return 0


if __name__ == "__main__":
    # run through the importable module, so the script and the runner share one copy of the state
    from npuemu.compat.pyasc import main as _main
    sys.exit(_main())
