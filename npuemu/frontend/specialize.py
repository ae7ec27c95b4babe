"""Specialisation: what each launch argument makes of the kernel binary.

A launch's arguments are classified into :class:`ArgKind` values: a GM
address of some dtype, a run-time scalar, a struct of tiling data, or a
ConstExpr value.  The kinds (with the options and platform) select the
binary; the values themselves are passed to it at launch.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import as_array
from ..errors import LaunchError
from ..language.struct import Struct


@dataclass(frozen=True)
class ArgKind:
    """The static description of one kernel argument (part of the specialisation key)."""

    kind: str                      # 'gm' | 'int' | 'float' | 'bool' | 'struct' | 'const'
    dtype: Any = None              # DataType for gm; struct class for struct; value type for const
    const: Any = None


def classify(name: str, value: Any, constexpr: bool) -> ArgKind:
    if constexpr:
        if isinstance(value, np.generic):
            value = value.item()
        try:
            hash(value)
        except TypeError:
            raise LaunchError(f"ConstExpr argument '{name}' must be hashable, got {type(value).__name__}") from None
        # the type is part of the key: 1, 1.0 and True are equal but lower differently
        return ArgKind("const", dtype=type(value), const=value)
    arr = as_array(value)
    if arr is not None:
        return ArgKind("gm", dtype=arr[1])
    if isinstance(value, Struct):
        return ArgKind("struct", dtype=type(value))
    if isinstance(value, (bool, np.bool_)):
        return ArgKind("bool")
    if isinstance(value, (int, np.integer)):
        return ArgKind("int")
    if isinstance(value, (float, np.floating)):
        return ArgKind("float")
    raise LaunchError(f"kernel argument '{name}' has unsupported type {type(value).__name__}: pass NumPy "
                      f"arrays, torch CPU tensors, int, float, bool, a Struct or an asc.ConstExpr value")


def specialize(kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[tuple[ArgKind, ...], dict[str, Any]]:
    """The argument kinds of a launch of ``kernel`` (a KernelFunction) and its arguments by name."""
    try:
        bound = kernel.signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise LaunchError(f"kernel '{kernel.__name__}': {exc}") from None
    bound.apply_defaults()
    kinds = []
    for name in kernel.signature.parameters:
        try:
            kinds.append(classify(name, bound.arguments[name], name in kernel.constexpr))
        except LaunchError as exc:
            raise LaunchError(f"kernel '{kernel.__name__}': {exc}") from None
    return tuple(kinds), dict(bound.arguments)


def signature_kinds(kernel: Any, signature: Any, by_name: dict[str, Any]) -> tuple[ArgKind, ...]:
    """The argument kinds a :meth:`JITFunction.compile` signature describes.

    ``signature`` is a sequence in parameter order or a mapping by name (and
    ``by_name`` adds entries).  Per parameter: a ConstExpr parameter takes its
    value; a GM parameter a kernel dtype (``asc.float16``), a NumPy dtype or
    dtype name, or an example array; a scalar ``int``, ``float`` or ``bool``
    (or an example value); a struct parameter its ``Struct`` class.  A
    parameter with a default may be left out.
    """
    params = kernel.signature.parameters
    if signature is None:
        given: dict[str, Any] = {}
    elif isinstance(signature, dict):
        given = dict(signature)
    elif isinstance(signature, (tuple, list)):
        if len(signature) > len(params):
            raise LaunchError(f"kernel '{kernel.__name__}' has {len(params)} parameters, the signature lists "
                              f"{len(signature)}")
        given = dict(zip(params, signature))
    else:
        raise LaunchError(f"kernel '{kernel.__name__}': a signature is a list in parameter order or a dict by "
                          f"parameter name, got {type(signature).__name__}")
    given.update(by_name)
    unknown = sorted(set(given) - set(params))
    if unknown:
        raise LaunchError(f"kernel '{kernel.__name__}' has no parameter {', '.join(unknown)} "
                          f"(parameters: {', '.join(params)})")
    kinds = []
    for name, p in params.items():
        if name not in given and p.default is p.empty:
            raise LaunchError(f"kernel '{kernel.__name__}': the signature does not describe parameter '{name}'")
        spec = given.get(name, p.default)
        try:
            kinds.append(_spec_kind(name, spec, name in kernel.constexpr))
        except LaunchError as exc:
            raise LaunchError(f"kernel '{kernel.__name__}': {exc}") from None
    return tuple(kinds)


def _spec_kind(name: str, spec: Any, constexpr: bool) -> ArgKind:
    from ..language import dtype as dt
    if constexpr:
        return classify(name, spec, True)
    if any(spec is t for t in (int, float, bool)):
        return ArgKind(spec.__name__)
    if isinstance(spec, type) and issubclass(spec, Struct):
        return ArgKind("struct", dtype=spec)
    if isinstance(spec, dt.DataType) and spec is not dt.void:
        return ArgKind("gm", dtype=spec)
    if isinstance(spec, str):
        try:
            return ArgKind("gm", dtype=dt.by_name(spec))
        except KeyError:
            raise LaunchError(f"parameter '{name}': unknown dtype name {spec!r}") from None
    if isinstance(spec, np.dtype) or (isinstance(spec, type) and issubclass(spec, np.generic)):
        try:
            return ArgKind("gm", dtype=dt.from_numpy(np.dtype(spec)))
        except TypeError:
            raise LaunchError(f"parameter '{name}': arrays of dtype {np.dtype(spec)} cannot be passed to "
                              f"kernels") from None
    return classify(name, spec, False)       # an example value
