"""pyasc's default kernel type for kernels that use the high-level Matmul API.

pyasc's compiler makes a kernel MIX_AIC_1_2 when its IR carries the mark the
Matmul API sets, unless ``kernel_type`` or ``matmul_cube_only`` says
otherwise (docs/matmul-api.md).  npuemu decides it before lowering (the
kernel type is part of a binary's key): a kernel uses the API when its body,
or an ``@asc.jit`` helper it calls, names ``asc.adv.Matmul`` or
``register_matmul``.
"""
from __future__ import annotations

import ast
import dataclasses
import weakref
from collections.abc import Callable
from typing import Any

from ..language import adv_matmul as lang
from ..language.enums import KernelType
from ..options import Options
from .kernel import KernelFunction
from .source import parse_function

_API = (lang.Matmul, lang.register_matmul)
_SEEN: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()


def with_default_kernel_type(kernel: KernelFunction, options: Options) -> Options:
    """``options`` with kernel type MIX_AIC_1_2 when none is chosen and the kernel uses the Matmul API."""
    if options.kernel_type is not None or options.matmul_cube_only:
        return options
    if uses_matmul_api(kernel.fn):
        return dataclasses.replace(options, kernel_type=KernelType.MIX_AIC_1_2)
    return options


def uses_matmul_api(fn: Callable[..., Any], depth: int = 0) -> bool:
    """Whether ``fn`` or a helper it calls (up to a few levels) names the Matmul API."""
    try:
        known = _SEEN.get(fn)
    except TypeError:
        known = None
    if known is not None:
        return known
    found = False
    if depth <= 8:
        ns = dict(getattr(fn, "__globals__", {}))
        if getattr(fn, "__closure__", None):
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                try:
                    ns[name] = cell.cell_contents
                except ValueError:
                    pass
        try:
            tree = parse_function(fn).tree
        except Exception:  # noqa: BLE001 - not a kernel-language function: it names nothing
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            obj = _resolve(node, ns)
            if obj is None:
                continue
            if any(obj is api for api in _API):
                found = True
                break
            if isinstance(obj, KernelFunction) and obj.fn is not fn and uses_matmul_api(obj.fn, depth + 1):
                found = True
                break
    try:
        _SEEN[fn] = found
    except TypeError:
        pass
    return found


def _resolve(node: ast.AST, ns: dict[str, Any]) -> Any:
    """The object a name or attribute chain (``asc.adv.Matmul``) denotes, or None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in ns:
        return None
    obj = ns[node.id]
    for p in reversed(parts):
        obj = getattr(obj, p, None)
        if obj is None:
            return None
    return obj
