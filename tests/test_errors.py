"""The exception hierarchy: every error a user can trigger is an NpuemuError, with a clear message."""
from __future__ import annotations

import inspect

import pytest

import npuemu.asc as asc
from npuemu import errors


def test_every_npuemu_error_is_defined_in_errors_and_documented():
    from npuemu.host import TilingError as HostTilingError
    from npuemu.host.tiling import TilingError as TilingModuleError
    from npuemu.language.builtin import NotInKernelError
    assert NotInKernelError is errors.NotInKernelError
    assert HostTilingError is TilingModuleError is errors.TilingError
    assert issubclass(errors.TilingError, ValueError)                # what a tiling function rejects is a value
    for cls in (errors.NotInKernelError, errors.TilingError):
        assert issubclass(cls, errors.NpuemuError) and cls.__module__ == "npuemu.errors"
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, errors.NpuemuError):
            assert cls.__doc__, name


def test_builtins_outside_a_kernel_raise_not_in_kernel_error():
    with pytest.raises(errors.NotInKernelError, match=r"asc.add\(\) can only be used inside an @asc.jit"):
        asc.add(None, None, None, 8)
