"""torch_npu's ``npu`` device under the pyasc runner: torch tensors on the NPU are CPU tensors here.

pyasc scripts make their inputs with ``torch.rand(n, device="npu")``,
``x.npu()``, ``x.to("npu")`` and wait with ``torch.npu.synchronize()``, which
needs torch_npu.  npuemu runs kernels on CPU memory, so while the pyasc layer
is installed, and once ``torch`` is imported:

- a ``TorchFunctionMode`` rewrites every argument ``"npu"`` / ``"npu:N"`` of a
  torch call (factory functions, ``Tensor.to``, ``Tensor.new_*``,
  ``torch.device(...)`` itself) to ``"cpu"``;
- ``Tensor.npu()`` (returns the tensor) and ``Tensor.is_npu`` (True for CPU
  tensors) are added;
- ``torch.npu`` and ``torch_npu`` are small modules: device queries answer for
  the one emulated device, ``synchronize`` runs the launches queued on npuemu's
  streams, any other name raises :class:`UnsupportedAPIError`.

:class:`NpuDevice` undoes all of it on :meth:`NpuDevice.uninstall`.  torch's
own PrivateUse1 backend (``rename_privateuse1_backend``) is not used: it can be
registered once per process and never removed, and needs an allocator and
kernels for the device.  See docs/pyasc-compat.md ("The npu device").
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import re
import sys
import types
from typing import Any, Callable

from ..errors import LaunchError
from . import _pyasc_runtime as _rt
from .errors import UnsupportedAPIError

__all__ = ["is_npu_device", "to_cpu_device", "map_npu_args", "NpuDevice"]

_NPU = re.compile(r"npu(:\d+)?")


def is_npu_device(value: Any) -> bool:
    """True for the device strings torch_npu adds: ``"npu"`` and ``"npu:N"``."""
    return isinstance(value, str) and _NPU.fullmatch(value) is not None


def to_cpu_device(value: Any) -> Any:
    """``"cpu"`` for an npu device string, ``value`` unchanged otherwise."""
    return "cpu" if is_npu_device(value) else value


def map_npu_args(args: tuple, kwargs: dict[str, Any]) -> tuple[tuple, dict[str, Any]]:
    """A torch call's arguments with every npu device string replaced by ``"cpu"``.

    Any string argument that is exactly ``npu`` or ``npu:N`` is a device (no
    torch function takes such a string as anything else); other values,
    including strings inside lists, are left alone.
    """
    return tuple(to_cpu_device(a) for a in args), {k: to_cpu_device(v) for k, v in kwargs.items()}


def _device_index(device: Any) -> int:
    """The index in ``npu:N``, ``N`` or a device object (0 when none is given)."""
    if device is None:
        return _rt.current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    text = device if isinstance(device, str) else str(device)
    if is_npu_device(text) or text.startswith("cpu"):
        return int(text.partition(":")[2] or 0)
    raise LaunchError(f"torch.npu: {device!r} is not an npu device")


def _unsupported(module: str) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise UnsupportedAPIError(f"{module}.{name} is not supported by npuemu yet", name=name)
    return __getattr__


def make_npu_module(torch: Any) -> types.ModuleType:
    """The ``torch.npu`` module: the one emulated device, shared with ``asc.lib.runtime``."""
    npu = types.ModuleType("torch.npu", "torch.npu under npuemu: the npu device is CPU memory.")

    def set_device(device: Any) -> None:
        _rt.set_device(_device_index(device))

    def synchronize(device: Any = None) -> None:
        """Run every launch still queued on npuemu's streams."""
        _rt.synchronize_device()

    def get_device_name(device: Any = None) -> str:
        return _rt.current_platform()

    def manual_seed(seed: int) -> None:
        torch.manual_seed(seed)         # npu tensors are CPU tensors: they draw from the CPU generator

    names: dict[str, Any] = {
        "is_available": lambda: True, "is_initialized": lambda: True, "init": lambda: None,
        "device_count": _rt.device_count, "current_device": _rt.current_device, "set_device": set_device,
        "synchronize": synchronize, "get_device_name": get_device_name, "manual_seed": manual_seed,
        "manual_seed_all": manual_seed, "empty_cache": lambda: None,
    }
    for name, fn in names.items():
        if getattr(fn, "__name__", "") == "<lambda>":
            fn.__name__ = name
    npu.__dict__.update(names)
    npu.__getattr__ = _unsupported("torch.npu")  # type: ignore[method-assign]
    return npu


def make_torch_npu_module(npu: types.ModuleType) -> types.ModuleType:
    """The ``torch_npu`` module: ``torch_npu.npu`` is ``torch.npu``; nothing else is provided."""
    mod = types.ModuleType("torch_npu", "torch_npu under npuemu (see npuemu.compat.pyasc).")
    mod.npu = npu  # type: ignore[attr-defined]
    mod.__getattr__ = _unsupported("torch_npu")  # type: ignore[method-assign]
    return mod


def _npu_method(self: Any, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``Tensor.npu()``: the tensor itself, which already is in the npu device's (CPU) memory."""
    return self


def _is_npu(self: Any) -> bool:
    return self.device.type == "cpu"


_MISSING = object()


class NpuDevice(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The npu device: installed on torch when it is (or once it gets) imported, removed by :meth:`uninstall`.

    As an import hook it serves ``torch_npu`` (when torch is installed) and
    applies itself right after ``import torch`` finishes.
    """

    def __init__(self) -> None:
        self._torch: Any = None
        self._mode: Any = None
        self._saved_attrs: list[tuple[Any, str, Any]] = []
        self._saved_modules: dict[str, Any] = {}
        self._npu: types.ModuleType | None = None
        self._torch_npu: types.ModuleType | None = None

    # ------------------------------------------------------------------ install / uninstall

    def install(self) -> None:
        """Apply to an already imported torch, else wait for ``import torch`` (and serve ``torch_npu``)."""
        sys.meta_path.insert(0, self)
        if sys.modules.get("torch") is not None:
            self.apply(sys.modules["torch"])

    @property
    def applied(self) -> bool:
        """True while torch has the npu device."""
        return self._torch is not None

    def apply(self, torch: Any) -> None:
        """Give ``torch`` the npu device (see the module docstring)."""
        if self.applied:
            return
        self._torch = torch
        self._npu = make_npu_module(torch)
        self._torch_npu = make_torch_npu_module(self._npu)
        for name, module in (("torch.npu", self._npu), ("torch_npu", self._torch_npu)):
            self._saved_modules[name] = sys.modules.get(name, _MISSING)
            sys.modules[name] = module
        self._set(torch, "npu", self._npu)
        self._set(torch.Tensor, "npu", _npu_method)
        self._set(torch.Tensor, "is_npu", property(_is_npu))

        class NpuToCpu(torch.overrides.TorchFunctionMode):
            """Every ``npu`` device argument of a torch call becomes ``cpu``."""

            def __torch_function__(self, func, types, args=(), kwargs=None):
                args, kwargs = map_npu_args(args, kwargs or {})
                return func(*args, **kwargs)

        self._mode = NpuToCpu()
        self._mode.__enter__()

    def _set(self, owner: Any, name: str, value: Any) -> None:
        self._saved_attrs.append((owner, name, owner.__dict__.get(name, _MISSING)))
        setattr(owner, name, value)

    def uninstall(self) -> None:
        """Remove the hook and everything :meth:`apply` added; restore what was there before."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        if not self.applied:
            return
        try:
            self._mode.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 - the script left torch's mode stack unbalanced; undo the rest anyway
            pass
        for owner, name, old in reversed(self._saved_attrs):
            if old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        for name, old in self._saved_modules.items():
            if old is _MISSING:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
        self._saved_attrs.clear()
        self._saved_modules.clear()
        self._torch = self._mode = self._npu = self._torch_npu = None

    # ------------------------------------------------------------------ the import hook

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "torch_npu":
            if not self.applied and self._real_spec("torch") is None:
                return None                 # no torch: `import torch_npu` fails as it always did
            return importlib.machinery.ModuleSpec(fullname, self, origin="npuemu torch_npu compatibility")
        if fullname == "torch" and not self.applied:
            spec = self._real_spec(fullname)
            if spec is not None and spec.loader is not None:
                spec.loader = _AfterExec(spec.loader, self.apply)
            return spec
        return None

    def _real_spec(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, None)
            if spec is not None:
                return spec
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        import torch  # noqa: F401 - applies the npu device (this hook's _AfterExec)
        if not self.applied:
            self.apply(sys.modules["torch"])
        assert self._torch_npu is not None
        return self._torch_npu

    def exec_module(self, module: types.ModuleType) -> None:
        return None


class _AfterExec(importlib.abc.Loader):
    """Runs ``callback(module)`` once ``loader`` has executed the module, then steps aside."""

    def __init__(self, loader: Any, callback: Callable[[Any], None]):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        # the module keeps its own loader, so nothing later sees this wrapper
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._callback(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
