"""Marker for kernel-language builtins.

Builtins are the functions and classes of ``npuemu.asc`` that only have a
meaning inside a ``@asc.jit`` kernel: the frontend lowers each call to the
emulated instruction.  Called from ordinary Python they raise a clear error
instead of silently doing nothing.

A builtin with several forms declares each with ``typing.overload`` before
its definition, as pyasc does; the forms are listed in its docstring (so
``help(asc.add)`` shows them) and the frontend binds calls to them.  A
family's table of supported data types is appended to the docstrings by
:func:`document_dtypes`, so the table is written once.
"""
from __future__ import annotations

import enum
import functools
import inspect
import typing
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, TypeVar

from ..errors import NotInKernelError

if TYPE_CHECKING:
    from .dtype import DataType

F = TypeVar("F", bound=Callable[..., Any])


def builtin(fn: F) -> F:
    """Mark ``fn`` as a kernel builtin; calling it from plain Python raises."""

    @functools.wraps(fn)
    def outside_kernel(*args: Any, **kwargs: Any) -> Any:
        raise NotInKernelError(
            f"asc.{fn.__name__}() can only be used inside an @asc.jit function")

    outside_kernel.__npuemu_builtin__ = fn.__name__  # type: ignore[attr-defined]
    forms = typing.get_overloads(fn)
    if forms:
        lines = "\n".join(f"    {fn.__name__}{signature_text(f)}" for f in forms)
        outside_kernel.__doc__ = f"{inspect.cleandoc(fn.__doc__ or '')}\n\nForms::\n\n{lines}"
    return outside_kernel  # type: ignore[return-value]


def signature_text(fn: Callable[..., Any]) -> str:
    """``fn``'s parameter list as written in its source: ``(dst: LocalTensor, count: int = 0)``."""
    parts = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self":
            continue
        text = p.name
        if p.annotation is not p.empty:
            text += f": {p.annotation if isinstance(p.annotation, str) else _name(p.annotation)}"
        if p.default is not p.empty:
            text += f" = {_default_text(p.default)}"
        parts.append(text)
    return f"({', '.join(parts)})"


def _name(obj: Any) -> str:
    return getattr(obj, "__name__", repr(obj))


def _default_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if callable(value) and hasattr(value, "__qualname__"):      # a factory default: its name, not its address
        return f"{value.__qualname__}()"
    return repr(value)


def dtype_text(entry: Any) -> str:
    """A supported data type, or a tuple of them (``float16 -> float32`` for a source/destination pair)."""
    if isinstance(entry, tuple):
        return " -> ".join(dtype_text(e) for e in entry)
    return entry.name


def document_dtypes(table: Mapping[Callable[..., Any], Iterable["DataType | tuple[DataType, ...]"]],
                    note: str = "") -> None:
    """Append to each builtin's docstring the data types ``table`` lists for it (Atlas A2/A3)."""
    for stub, dtypes in table.items():
        append_doc(stub, f"Data types (Atlas A2/A3{note}): {', '.join(dtype_text(d) for d in dtypes)}.")


# builtin -> (parameter, size rule) of each instruction that takes a scratch tensor (docs/reference.md)
TEMP_BUFFERS: dict[Callable[..., Any], tuple[str, str]] = {}


def document_temp_buffer(stub: Callable[..., Any], param: str, rule: str) -> None:
    """Record (and append to the docstring) how large ``stub``'s scratch tensor ``param`` must be."""
    TEMP_BUFFERS[stub] = (param, rule)
    append_doc(stub, f"Temporary buffer ``{param}``: {rule}")


def append_doc(stub: Callable[..., Any], paragraph: str) -> None:
    """Add ``paragraph`` at the end of ``stub``'s docstring."""
    stub.__doc__ = f"{inspect.cleandoc(stub.__doc__ or '')}\n\n{paragraph}"


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
