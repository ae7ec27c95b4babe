"""Parsed source of kernel and helper functions, with their real file positions."""
from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import KernelCompileError


@dataclass(frozen=True)
class ParsedFunction:
    fn: Callable[..., Any]
    tree: ast.FunctionDef
    filename: str
    first_line: int          # file line of the first line of ``lines``
    lines: tuple[str, ...]   # the function's source lines, as in the file
    indent: int = 0          # columns removed by dedenting: add to a node's col_offset for the file column

    def line_text(self, lineno_in_tree: int) -> str:
        idx = lineno_in_tree - 1
        return self.lines[idx] if 0 <= idx < len(self.lines) else ""

    @property
    def name(self) -> str:
        return self.fn.__name__

    @functools.cached_property
    def param_names(self) -> frozenset[str]:
        """Names of the function's parameters."""
        a = self.tree.args
        return frozenset(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs))

    @functools.cached_property
    def assigned_names(self) -> dict[str, int]:
        """How many times each local name is (re)bound in the body (parameters not counted)."""
        counts: dict[str, int] = {}

        def bump(target: ast.AST, n: int = 1) -> None:
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + n
            elif isinstance(target, (ast.Tuple, ast.List)):
                for elt in target.elts:
                    bump(elt, n)
            elif isinstance(target, ast.Starred):
                bump(target.value, n)

        for node in ast.walk(self.tree):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    bump(t)
            elif isinstance(node, (ast.AugAssign,)):
                bump(node.target, 2)        # reads then rebinds: always runtime storage
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                bump(node.target)
            elif isinstance(node, ast.For):
                bump(node.target, 2)        # rebound every iteration
            elif isinstance(node, ast.With):
                for item in node.items:     # a loop context (``with mm.iterate() as count``): every iteration
                    if item.optional_vars is not None:
                        bump(item.optional_vars, 2)
            elif isinstance(node, ast.NamedExpr):
                bump(node.target)
        return counts


@functools.lru_cache(maxsize=None)
def _parse_code(fn: Callable[..., Any]) -> ParsedFunction:
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as exc:
        raise KernelCompileError(
            f"cannot read the source of {getattr(fn, '__qualname__', fn)!r}: kernels must be defined "
            f"in a .py file (not typed at an interactive prompt or built with exec)") from exc
    src = textwrap.dedent("".join(lines))
    indent = len(lines[0]) - len(src.splitlines(keepends=True)[0]) if lines and src else 0
    module = ast.parse(src)
    fdef = next((n for n in module.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fdef is None or isinstance(fdef, ast.AsyncFunctionDef):
        raise KernelCompileError(f"{fn.__qualname__} is not a plain function")
    return ParsedFunction(fn, fdef, filename, first, tuple(line.rstrip("\n") for line in lines), indent)


def parse_function(fn: Callable[..., Any]) -> ParsedFunction:
    return _parse_code(fn)
