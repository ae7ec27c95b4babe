"""Marker for kernel-language builtins.

Builtins are the functions and classes of ``npuemu.asc`` that only have a
meaning inside a ``@asc.jit`` kernel: the frontend lowers each call to the
emulated instruction.  Called from ordinary Python they raise a clear error
instead of silently doing nothing.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from ..errors import NotInKernelError

F = TypeVar("F", bound=Callable[..., Any])


def builtin(fn: F) -> F:
    """Mark ``fn`` as a kernel builtin; calling it from plain Python raises."""

    @functools.wraps(fn)
    def outside_kernel(*args: Any, **kwargs: Any) -> Any:
        raise NotInKernelError(
            f"asc.{fn.__name__}() can only be used inside an @asc.jit function")

    outside_kernel.__npuemu_builtin__ = fn.__name__  # type: ignore[attr-defined]
    return outside_kernel  # type: ignore[return-value]


def builtin_class(cls: type) -> type:
    """Mark a class whose construction is only meaningful inside a kernel."""

    original_init = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise NotInKernelError(
            f"asc.{cls.__name__}(...) can only be created inside an @asc.jit function")

    __init__.__wrapped__ = original_init  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]
    cls.__npuemu_builtin__ = cls.__name__  # type: ignore[attr-defined]
    return cls


def builtin_name(obj: Any) -> str | None:
    return getattr(obj, "__npuemu_builtin__", None)
