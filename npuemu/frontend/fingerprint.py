"""Stable hashes of what a kernel's generated code depends on, computed without lowering it.

:func:`source_fingerprint` hashes a kernel's source text together with a
description of every name it refers to from outside: ``@asc.jit`` helpers and
plain functions by their own fingerprint (recursively), module constants by
value, enums by member, struct and other classes by their source, modules by
name, and npuemu's own API by its qualified name (its behaviour is covered
by :func:`compiler_fingerprint`).  Attribute chains rooted in a module or a
class (``cfg.TILE``, ``asc.TPosition.VECIN``) are resolved to the value they
name.  When something has no stable description (an arbitrary object, a
function without source), the fingerprint is ``None``: the kernel can still
be built and launched, but its binary is not looked up across processes.

A function's first line number is part of its hash: error messages name
source lines, so a kernel that moved within its file is built again.  Like
pyasc's and Triton's dependency hashes this is a best effort over what the
source names: a value reached only at run time through an object's
attributes is not seen.  Nothing here depends on file paths, so a checkout
moved to another folder keeps its fingerprints.
"""
from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import inspect
import textwrap
import types
from pathlib import Path
from typing import Any, Callable

from ..binary.describe import Describer, qualname

_PACKAGE = Path(__file__).resolve().parent.parent
_COMPILER_DIRS = ("language", "frontend", "codegen", "isa", "numerics", "binary")
_USER_SUBPACKAGES = ("npuemu.kernels", "npuemu.tiling")     # bundled user code: fingerprinted by source


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    """sha256 of the npuemu sources that turn a kernel into machine code (paths relative to the package)."""
    h = hashlib.sha256()
    for sub in _COMPILER_DIRS:
        for p in sorted((_PACKAGE / sub).rglob("*.py")):
            h.update(p.relative_to(_PACKAGE).as_posix().encode())
            h.update(b"\0")
            h.update(p.read_bytes())
    return h.hexdigest()


def source_fingerprint(fn: Callable[..., Any]) -> str | None:
    """sha256 of ``fn``'s source and of what it refers to; None if something has no stable description."""
    return _Fingerprinter().function(fn)


def describe_value(value: Any) -> str | None:
    """A stable text for a ConstExpr value or a global a kernel reads; None if there is none."""
    return _Fingerprinter().describe(value)


class _Fingerprinter(Describer):
    """One fingerprint computation; ``_active`` breaks cycles between helpers."""

    def __init__(self) -> None:
        self._active: set[int] = set()

    def function(self, fn: Callable[..., Any]) -> str | None:
        if id(fn) in self._active:
            return f"cycle:{fn.__module__}.{fn.__qualname__}"
        self._active.add(id(fn))
        try:
            return self._function(fn)
        finally:
            self._active.discard(id(fn))

    def _function(self, fn: Callable[..., Any]) -> str | None:
        try:
            text = textwrap.dedent(inspect.getsource(fn))
            tree = ast.parse(text)
        except (OSError, TypeError, SyntaxError):
            return None
        h = hashlib.sha256(text.encode())
        # where it starts: error messages name source lines, so a function that moved in its file is rebuilt
        h.update(f"\nline={getattr(getattr(fn, '__code__', None), 'co_firstlineno', 0)}".encode())
        namespace = _namespace(fn)
        for name in sorted(_free_references(tree)):
            value = _resolve(name, namespace)
            if value is _UNRESOLVED:
                continue            # a local the walk did not recognise, or an error lowering reports
            desc = self.describe(value)
            if desc is None:
                return None
            h.update(f"\n{name}={desc}".encode())
        return h.hexdigest()

    def other(self, v: Any) -> str | None:
        if isinstance(v, types.ModuleType):
            return f"module:{v.__name__}"
        inner = getattr(v, "fn", None)
        if _is_kernel_function(v) and callable(inner):
            fp = self.function(inner)
            return None if fp is None else f"jit:{qualname(inner)}:{fp}"
        if _is_npuemu_api(v):
            return f"npuemu:{qualname(v)}"
        if isinstance(v, (types.FunctionType, types.MethodType)):
            fp = self.function(v)
            return None if fp is None else f"fn:{qualname(v)}:{fp}"
        if isinstance(v, type):
            return self._class(v)
        if isinstance(v, (types.BuiltinFunctionType, types.BuiltinMethodType)):
            return f"builtin:{qualname(v)}"
        return None

    def _class(self, cls: type) -> str | None:
        module = cls.__module__ or ""
        if module == "builtins" or module.split(".")[0] in ("numpy", "ml_dtypes", "typing"):
            return f"type:{qualname(cls)}"
        try:
            text = inspect.getsource(cls)
        except (OSError, TypeError):
            return None
        return f"class:{qualname(cls)}:{hashlib.sha256(text.encode()).hexdigest()}"


_UNRESOLVED = object()


def _is_kernel_function(v: Any) -> bool:
    from .kernel import KernelFunction
    return isinstance(v, KernelFunction)


def _is_npuemu_api(v: Any) -> bool:
    """npuemu's own functions, classes and dtypes (not the bundled kernels and tiling functions)."""
    module = getattr(v, "__module__", None) or getattr(type(v), "__module__", "")
    if not isinstance(module, str) or not module.startswith("npuemu"):
        return False
    if isinstance(v, type) and module.startswith(_USER_SUBPACKAGES):
        return False
    return isinstance(v, (types.FunctionType, type)) and not module.startswith(_USER_SUBPACKAGES)


def _namespace(fn: Callable[..., Any]) -> dict[str, Any]:
    ns = dict(getattr(fn, "__globals__", {}))
    closure = getattr(fn, "__closure__", None)
    if closure:
        for name, cell in zip(fn.__code__.co_freevars, closure):
            try:
                ns[name] = cell.cell_contents
            except ValueError:      # an empty cell
                pass
    return ns


def _free_references(tree: ast.Module) -> set[str]:
    """Dotted names (``asc.TPosition.VECIN``, ``TILE``) the function reads from outside its own scope."""
    fn = tree.body[0]
    local: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.arg):
            local.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            local.add(node.id)
    refs: set[str] = set()

    def chain(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            base = chain(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    inner: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute):
            inner.add(id(node.value))
    for node in ast.walk(fn):
        if id(node) in inner or not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        dotted = chain(node)
        if dotted is not None and dotted.split(".")[0] not in local:
            refs.add(dotted)
        # decorators and annotations are evaluated by Python, not lowered: they are included all the same
    return refs


def _resolve(dotted: str, namespace: dict[str, Any]) -> Any:
    """The value ``dotted`` names, following attributes only through modules, classes and enums."""
    head, *rest = dotted.split(".")
    if head in namespace:
        value = namespace[head]
    elif hasattr(builtins, head):
        value = getattr(builtins, head)
    else:
        return _UNRESOLVED
    for attr in rest:
        if not isinstance(value, (types.ModuleType, type)):
            break                   # a run-time attribute (``x.dtype``): the base describes it
        try:
            value = getattr(value, attr)
        except AttributeError:
            break
    return value
