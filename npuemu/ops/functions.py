"""Calling an op in one line, on NumPy arrays or torch CPU tensors, with a CPU fallback.

::

    y = npuemu.ops.call("Add", x1, x2, alpha=2.0)      # by registered name (npuemu.ops.registry)
    y = npuemu.ops.add(x1, x2, alpha=2.0)              # one function per op of the library
    y = npuemu.ops.softmax(t)                          # torch in, torch out

Keyword arguments are the op's attributes, ``out=`` (an output, or a list of
them, written in place) and the launch options (``platform``, ``impl_mode``,
``deterministic``, ``debug``, ``check``, ``timeout``, ``max_steps``,
``core_num``).  The call runs in two phases (:func:`npuemu.ops.executor.prepare`,
then ``executor.run()``): phase one checks the call, promotes input dtypes to
a column of the op and allocates the outputs; phase two selects the binary,
tiles and launches.  Inputs of an op that broadcasts (Add, Mul) are broadcast
to the output's shape first.

**CPU fallback.**  When no binary of the op fits the call (no column takes
the inputs' dtypes and formats, even after promotion, or
:class:`~npuemu.ops.select.SelectionError`), the op's NumPy implementation
(``op.cpu``) computes the result instead, as torch_npu runs an op the NPU
backend lacks on the CPU.  The first such call of each op and combination of
dtypes warns (:class:`OpFallbackWarning`, naming both).  ``set_fallback(False)``
or the environment variable ``NPUEMU_OP_FALLBACK=0`` turns the fallback off:
the call then raises the ``SelectionError``.
"""
from __future__ import annotations

import os
import threading
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from ..arrays import as_array
from ..errors import LaunchError
from . import library, registry
from .inference import NoColumnError
from .opdef import OpDef
from .select import SelectionError
from .tensor import OpTensor

#: keywords of a call that are launch options, not attributes
OPTIONS = frozenset({"platform", "impl_mode", "deterministic", "cache", "debug", "check", "timeout", "max_steps",
                     "core_num"})
_PHASE_ONE = frozenset({"platform", "impl_mode", "deterministic", "cache"})
ENV = "NPUEMU_OP_FALLBACK"


class OpFallbackWarning(UserWarning):
    """An op ran on the CPU (its NumPy implementation) because no binary fits the call."""


_lock = threading.Lock()
_fallback: bool | None = None           # set_fallback's choice; None: the environment decides
_warned: set[tuple[str, str]] = set()


def set_fallback(enabled: bool | None) -> None:
    """Run ops without a fitting binary on the CPU (True) or raise (False); None: as ``NPUEMU_OP_FALLBACK`` says."""
    global _fallback
    _fallback = None if enabled is None else bool(enabled)


def fallback_enabled() -> bool:
    """Whether a call without a fitting binary runs on the CPU (default: yes, unless ``NPUEMU_OP_FALLBACK=0``)."""
    if _fallback is not None:
        return _fallback
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def reset_fallback_warnings() -> None:
    """Forget which fallbacks have warned, so each warns again once (for tests)."""
    with _lock:
        _warned.clear()


# ----------------------------------------------------------------------------- tensors


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch")


def to_numpy(value: Any, what: str = "argument") -> np.ndarray:
    """The NumPy array behind an array argument, in its own dtype (a torch bfloat16 tensor as ml_dtypes')."""
    got = as_array(value)
    if got is None:
        raise LaunchError(f"{what} must be an array (NumPy, torch CPU tensor or npuemu.gm_buffer), "
                          f"got {type(value).__name__}")
    arr, kdt = got
    if kdt.host is not None and arr.dtype != kdt.host:
        arr = arr.view(kdt.host)          # same bytes, the dtype they hold (bfloat16 from torch's int16 view)
    return arr


def to_torch(arr: np.ndarray) -> Any:
    """A torch CPU tensor sharing ``arr``'s memory (bfloat16 through an int16 view)."""
    import torch          # only reached for calls that passed torch tensors
    arr = np.ascontiguousarray(arr)
    if arr.dtype.name == "bfloat16":
        return torch.from_numpy(arr.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(arr)


def _broadcast(op: OpDef, inputs: Sequence[Any]) -> list[Any]:
    """Inputs of a broadcasting op as views of the output's shape (phase one makes them contiguous)."""
    if op.infer_shape is not library.broadcast_shape:
        return list(inputs)
    arrays = [to_numpy(x, f"op {op.name}: input {i}") for i, x in enumerate(inputs)]
    (shape,) = library.broadcast_shape([a.shape for a in arrays], {})
    return [x if a.shape == shape else np.broadcast_to(a, shape) for x, a in zip(inputs, arrays)]


# ----------------------------------------------------------------------------- the call


def _resolve(op: str | OpDef) -> OpDef:
    return op if isinstance(op, OpDef) else registry.get(op)


def _combination(op: OpDef, inputs: Sequence[Any]) -> str:
    """``x1=float64/ND, x2=float64/ND``: what the call asked the op for."""
    parts = []
    for p, x in zip(op.inputs, inputs):
        if x is None:
            parts.append(f"{p.name}=absent")
            continue
        first = x[0] if isinstance(x, (list, tuple)) else x
        if isinstance(first, OpTensor):
            first, fmt = first.data, first.format
        else:
            fmt = "ND"
        parts.append(f"{p.name}={to_numpy(first).dtype.name}/{fmt}")
    return ", ".join(parts)


def _fall_back(op: OpDef, inputs: Sequence[Any], attrs: dict[str, Any], out: Any, error: SelectionError) -> Any:
    if op.cpu is None or not fallback_enabled():
        raise error
    combo = _combination(op, inputs)
    with _lock:
        first = (op.name, combo) not in _warned
        _warned.add((op.name, combo))
    if first:
        warnings.warn(f"op {op.name} has no binary for {combo}; it falls back to run on the CPU (NumPy). "
                      f"npuemu.ops.set_fallback(False) or {ENV}=0 makes this an error", OpFallbackWarning,
                      stacklevel=4)
    arrays = [None if x is None else to_numpy(x, f"op {op.name}: input {p.name!r}")
              for p, x in zip(op.inputs, inputs)]
    results = list(op.cpu(arrays, attrs))
    return _deliver(results, out, any(_is_torch(x) for x in inputs))


def _deliver(results: list[np.ndarray], out: Any, torch_in: bool) -> Any:
    """The results as the caller wants them: written into ``out``, or new arrays (torch tensors for torch in)."""
    if out is not None:
        targets = list(out) if isinstance(out, (list, tuple)) else [out]
        for dst, r in zip(targets, results):
            view = to_numpy(dst, "out")
            np.copyto(view, r.astype(view.dtype, copy=False).reshape(view.shape), casting="unsafe")
        return out
    if torch_in:
        results = [to_torch(r) for r in results]
    return results[0] if len(results) == 1 else tuple(results)


def call(op: str | OpDef, *inputs: Any, out: Any = None, **kwargs: Any) -> Any:
    """Run ``op`` (an :class:`OpDef` or a registered name) on ``inputs``; returns the output(s).

    Keywords: the op's attributes, ``out=``, and the launch options in
    :data:`OPTIONS`.  Without a fitting binary the op runs on the CPU (see the
    module docstring) unless the fallback is off.
    """
    from .executor import prepare        # the two-phase API (aclnn)
    opdef = _resolve(op)
    attrs = {k: v for k, v in kwargs.items() if k not in OPTIONS}
    phase_one = {k: v for k, v in kwargs.items() if k in _PHASE_ONE}
    launch = {k: v for k, v in kwargs.items() if k in OPTIONS and k not in _PHASE_ONE}
    values = opdef.attr_values(attrs)
    args = _broadcast(opdef, inputs)
    try:
        ex = prepare(opdef, *args, out=out, launch_options=launch, **phase_one, **attrs)
    except NoColumnError as error:
        # phase one found no column for the inputs: no binary can fit, as a selection would say
        return _fall_back(opdef, inputs, values, out, SelectionError(str(error)))
    except SelectionError as error:
        return _fall_back(opdef, inputs, values, out, error)
    try:
        results = ex.run()
    except SelectionError as error:
        return _fall_back(opdef, inputs, values, out, error)
    if out is not None:
        return out
    results = list(results) if isinstance(results, tuple) else [results]
    return _deliver(results, None, any(_is_torch(x) for x in inputs))


# ----------------------------------------------------------------------------- one function per op


def op_function(name: str, op: OpDef) -> Callable[..., Any]:
    """``npuemu.ops.<name>(*inputs, **attrs)``: :func:`call` of ``op``."""
    def fn(*inputs: Any, **kwargs: Any) -> Any:
        return call(op, *inputs, **kwargs)
    attrs = ", ".join(f"{a.name}={a.default!r}" if not a.required else a.name for a in op.attrs)
    params = ", ".join(p.name for p in op.inputs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}({params}{', ' if attrs else ''}{attrs}, out=None, **options)``: op {op.name} "
                  f"(:data:`npuemu.ops.library.{_constant(op)}`) through :func:`npuemu.ops.functions.call`.\n\n"
                  f"Supported: {'; '.join(c.describe(op) for c in op.columns)}.")
    return fn


def _constant(op: OpDef) -> str:
    return next(k.upper() for k, v in library.LIBRARY.items() if v is op)


FUNCTIONS: dict[str, Callable[..., Any]] = {name: op_function(name, op) for name, op in library.LIBRARY.items()}
globals().update(FUNCTIONS)

__all__ = ["call", "set_fallback", "fallback_enabled", "reset_fallback_warnings", "OpFallbackWarning", "OPTIONS",
           "FUNCTIONS", "op_function", "to_numpy", "to_torch", *FUNCTIONS]
