"""Checking a launch's arguments against the specialisation a binary was built for.

A binary launched through its kernel (``kernel[n](...)``) was selected by its
arguments, so they fit.  A binary loaded from disk is launched directly; its
key (:class:`~npuemu.binary.key.BinaryKey`) says what it was built for, and an
argument that does not fit (another dtype, another ConstExpr value, a float
for an int) is a :class:`~npuemu.errors.LaunchError` naming the parameter,
never a silent misreading of the argument's bytes.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..arrays import as_array
from ..binary.describe import describe, qualname
from ..binary.kernel_binary import KernelBinary
from ..binary.key import ArgSpec
from ..errors import LaunchError


def bind_arguments(binary: KernelBinary, block_dim: int, args: tuple[Any, ...],
                   kwargs: dict[str, Any]) -> dict[str, Any]:
    """``args``/``kwargs`` by parameter name, each checked against the binary's key."""
    name = binary.name
    try:
        n = operator.index(block_dim) if not isinstance(block_dim, bool) else 0
    except TypeError:
        n = 0
    if n <= 0:
        raise LaunchError(f"kernel '{name}': block_dim must be a positive int, got {block_dim!r}")
    specs = binary.key.args
    names = [s.name for s in specs]
    if len(args) > len(specs):
        raise LaunchError(f"kernel '{name}' takes {len(specs)} arguments ({', '.join(names)}), {len(args)} given")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise LaunchError(f"kernel '{name}' has no parameter '{k}' (parameters: {', '.join(names)})")
        if k in values:
            raise LaunchError(f"kernel '{name}': argument '{k}' given twice")
        values[k] = v
    missing = [s.name for s in specs if s.name not in values]
    if missing:
        raise LaunchError(f"kernel '{name}': missing argument(s) {', '.join(missing)}")
    for spec in specs:
        problem = _mismatch(spec, values[spec.name])
        if problem:
            raise LaunchError(f"kernel '{name}': argument '{spec.name}': {problem} (binary {binary.sha256[:12]} "
                              f"was built for {binary.key.describe()})")
    return values


def _mismatch(spec: ArgSpec, value: Any) -> str | None:
    """Why ``value`` does not fit parameter ``spec``, or None."""
    if spec.kind == "gm":
        arr = as_array(value)
        if arr is None:
            return f"expected an array of {spec.dtype}, got {type(value).__name__}"
        return None if arr[1].name == spec.dtype else f"expected {spec.dtype} elements, got {arr[1].name}"
    if spec.kind == "const":
        got = describe(value.item() if isinstance(value, np.generic) else value)
        if got is None and spec.value.startswith(("jit:", "fn:")):
            # A function ConstExpr: the runtime cannot fingerprint source (the frontend does, when it keys the
            # binary); the function's name must match.
            inner = getattr(value, "fn", value)
            got = spec.value if spec.value.split(":")[1] == qualname(inner) else qualname(inner)
        return None if got == spec.value else f"the binary is specialised for ConstExpr {spec.value}, got {value!r}"
    if spec.kind == "struct":
        got = f"{type(value).__module__}.{type(value).__qualname__}"
        return None if got == spec.type else f"expected a {spec.type} struct, got {type(value).__name__}"
    if spec.kind == "bool":
        return None if isinstance(value, (bool, np.bool_)) else f"expected a bool, got {type(value).__name__}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return f"expected {'an int' if spec.kind == 'int' else 'a float'}, got {type(value).__name__}"
    if spec.kind == "int" and isinstance(value, (float, np.floating)):
        return f"expected an int, got float {value!r}"
    return None
