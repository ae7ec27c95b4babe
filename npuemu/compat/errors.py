"""The errors of the pyasc compatibility layer.

They live apart so that the torch device shim can raise them without importing the runner; users meet
and import them as ``npuemu.compat.pyasc.*``, which is the module they name.
"""
from __future__ import annotations

from ..errors import NpuemuError


class PyascCompatError(NpuemuError):
    """Base class of the errors of the pyasc compatibility layer."""


class UnsupportedAPIError(PyascCompatError, AttributeError):
    """A pyasc name npuemu does not implement (an AttributeError, so ``hasattr`` stays usable)."""


class UnsupportedModuleError(PyascCompatError, ModuleNotFoundError):
    """An ``asc`` module that npuemu's compatibility layer does not provide."""


for _cls in (PyascCompatError, UnsupportedAPIError, UnsupportedModuleError):
    _cls.__module__ = "npuemu.compat.pyasc"
