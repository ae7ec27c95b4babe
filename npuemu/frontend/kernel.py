"""The kernel object: a function written in the kernel language, its signature and its options.

A :class:`KernelFunction` is passive: it knows what the user wrote and
nothing about building or launching.  The builder
(:mod:`npuemu.frontend.build`) turns it into binaries, the launcher
(:mod:`npuemu.frontend.launcher`) runs them, and
:class:`npuemu.jit.JITFunction` puts the three behind ``@asc.jit``.
The lowering recognises helpers by this class, so it never imports the
decorator module.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from ..errors import KernelCompileError, LaunchError, SourceLoc, UnsupportedSyntaxError
from ..options import OPTION_NAMES, from_environment
from .source import parse_function


class KernelFunction:
    """A kernel or helper written in the kernel language."""

    def __init__(self, fn: Callable[..., Any], **options: Any):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__qualname__ = getattr(fn, "__qualname__", fn.__name__)
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.signature = inspect.signature(fn)
        variadic = [p.name for p in self.signature.parameters.values()
                    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if variadic:
            raise UnsupportedSyntaxError(
                f"in kernel '{fn.__name__}': *{variadic[0]}: variable arguments are not supported in kernels",
                param_loc(fn, variadic[0]))
        clash = sorted(OPTION_NAMES & set(self.signature.parameters))
        if clash:
            raise UnsupportedSyntaxError(
                f"in kernel '{fn.__name__}': parameter name(s) {', '.join(clash)} clash with launch options "
                f"(kernel[n](..., {clash[0]}=...) sets the option); rename them", param_loc(fn, clash[0]))
        from_environment(**options)     # validate option names and values now
        self.options = dict(options)

    def __repr__(self) -> str:
        return f"<asc.jit kernel {self.fn.__module__}.{self.fn.__qualname__}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise LaunchError(f"'{self.__name__}' is an @asc.jit kernel: launch it as {self.__name__}[core_num](...), "
                          f"or call it from another kernel")

    @property
    def key_name(self) -> str:
        """The kernel's name in binary keys and generated headers: its qualified name within its module.

        The module's name is left out: a script run as ``__main__`` and the same
        file imported by its name (a pytest worker) build the same binary.
        """
        return self.fn.__qualname__

    @functools.cached_property
    def constexpr(self) -> frozenset[str]:
        """Parameters annotated ``asc.ConstExpr[...]``: their values are part of the specialisation."""
        return frozenset(n for n, p in self.signature.parameters.items() if is_constexpr(p.annotation))

    @functools.cached_property
    def fingerprint(self) -> str | None:
        """sha256 of the kernel's source and what it refers to (None: no stable description)."""
        from .fingerprint import source_fingerprint
        return source_fingerprint(self.fn)


def is_constexpr(annotation: Any) -> bool:
    """Whether a parameter annotation is ``asc.ConstExpr`` (also as a string annotation)."""
    from ..language.core import ConstExpr
    return getattr(annotation, "__origin__", None) is ConstExpr or annotation is ConstExpr or (
        isinstance(annotation, str) and "ConstExpr" in annotation)


def param_loc(fn: Callable[..., Any], param: str) -> SourceLoc | None:
    """Where parameter ``param`` of ``fn`` is declared (None when the source is unavailable)."""
    try:
        parsed = parse_function(fn)
    except KernelCompileError:
        return None
    a = parsed.tree.args
    params = (*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg)
    node = next((p for p in params if p is not None and p.arg == param), parsed.tree)
    return SourceLoc(parsed.filename, parsed.first_line + node.lineno - 1, node.col_offset + parsed.indent,
                     parsed.name, parsed.line_text(node.lineno))
