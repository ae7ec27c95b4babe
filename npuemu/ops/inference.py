"""What an op call makes of its arguments: the tensors, the column they select, the outputs they imply.

Phase one of an op call (aclnn's ``GetWorkspaceSize``, ATB's ``Setup``) checks
the arguments against the :class:`~npuemu.ops.opdef.OpDef` before anything
runs:

* :func:`bind_inputs` / :func:`bind_outputs` take the user's arrays (NumPy,
  torch CPU tensors, ``npuemu.gm_buffer``) per declared input and output:
  required ones present, optional ones possibly None, dynamic ones lists
  sharing one dtype;
* :func:`choose_column` picks the column (one supported combination of
  dtypes and formats) the inputs select.  An exact match wins; otherwise the
  inputs are promoted as NumPy promotes, restricted to the op's columns: a
  column qualifies when every input converts to it safely
  (``np.can_cast(..., "safe")``), and the least such column is taken (the one
  every other qualifying column is a safe widening of), so float16 + float32
  runs in float32 and int32 + float16 finds no float column (NumPy would need
  float64);
* :func:`infer_outputs` gives each output's shape and dtype from
  ``op.infer_shape`` / ``op.infer_dtype`` (an output that follows an input
  with follow type ``all`` or ``shape`` takes its shape).

Errors are :class:`OpInputError`, naming the op and the argument.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..arrays import as_array
from ..errors import NpuemuError
from .opdef import DYNAMIC, OPTIONAL, Column, OpDef, TensorParam
from .tensor import ND, OpTensor

try:
    import ml_dtypes
    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a dependency
    _BF16 = None


class OpInputError(NpuemuError, ValueError):
    """An op was called with arguments it cannot take (count, dtype, format, shape); the message names them."""


class NoColumnError(OpInputError):
    """No column of the op takes the inputs' dtypes and formats, even after promotion (no binary can fit)."""


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype of an op dtype name (``bfloat16`` is ml_dtypes'; ``bool`` is NumPy's)."""
    if name == "bfloat16":
        if _BF16 is None:  # pragma: no cover
            raise OpInputError("bfloat16 tensors need the ml_dtypes package")
        return _BF16
    try:
        return np.dtype(name)
    except TypeError:
        raise OpInputError(f"data type {name!r} has no NumPy equivalent on the host") from None


def dtype_name(dt: np.dtype) -> str:
    """The op dtype name of a NumPy dtype."""
    dt = np.dtype(dt)
    return "bfloat16" if _BF16 is not None and dt == _BF16 else dt.name


@dataclass(frozen=True)
class HostTensor:
    """A user tensor as the host sees it.

    array: its storage as a NumPy array in its own dtype (bfloat16 as ml_dtypes'); format: the storage
    format; origin: the logical shape when it is not the array's (an :class:`~npuemu.ops.tensor.OpTensor`
    in FRACTAL_NZ); value: what the user passed, handed to the kernel as is when no copy is needed.
    """

    array: np.ndarray
    format: str = "ND"
    origin: tuple[int, ...] | None = None
    value: Any = None

    @property
    def dtype(self) -> str:
        return dtype_name(self.array.dtype)

    @property
    def shape(self) -> tuple[int, ...]:
        """The logical (origin) shape."""
        return self.origin if self.origin is not None else self.storage_shape

    @property
    def storage_shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.array.shape)

    @property
    def contiguous(self) -> bool:
        return bool(self.array.flags.c_contiguous)

    @property
    def arg(self) -> Any:
        """What a launch gets for this tensor: the user's own object."""
        return self.array if self.value is None else self.value


def host_tensor(value: Any, what: str) -> HostTensor:
    """The :class:`HostTensor` behind an array argument or OpTensor; ``what`` names it in errors."""
    if isinstance(value, HostTensor):
        return value
    fmt, origin, data = "ND", None, value
    if isinstance(value, OpTensor):
        fmt, data = value.format, value.data
        origin = value.shape if value.shape != value.storage_shape else None
    got = as_array(data)
    if got is None:
        raise OpInputError(f"{what} must be an array (NumPy, torch CPU tensor, npuemu.gm_buffer or "
                           f"npuemu.ops.tensor.OpTensor), got {type(value).__name__}")
    arr, kdt = got
    host = kdt.host
    if host is not None and arr.dtype != host:
        # a gm_buffer or a torch bfloat16 tensor: the same bytes in the dtype they hold
        if arr.dtype.itemsize == kdt.sizeof():
            arr = arr.view(host)
        elif arr.flags.c_contiguous:
            arr = arr.reshape(-1).view(host)
        else:
            raise OpInputError(f"{what}: a non-contiguous {arr.dtype} array cannot be read as {kdt.name}")
    return HostTensor(arr, fmt, origin, value)


Bound = Any          # per declared parameter: None (absent optional), a HostTensor, or a list of them (dynamic)


def _bind_one(op: OpDef, p: TensorParam, value: Any) -> Bound:
    what = f"op {op.name}: {p.kind} {p.name!r}"
    if value is None:
        if p.param_type == OPTIONAL:
            return None
        raise OpInputError(f"{what} is required")
    if p.param_type == DYNAMIC:
        if not isinstance(value, (list, tuple)) or not value:
            raise OpInputError(f"{what} is dynamic: give a non-empty list of tensors")
        items = [host_tensor(v, f"{what}[{i}]") for i, v in enumerate(value)]
        kinds = {(t.dtype, t.format) for t in items}
        if len(kinds) > 1:
            raise OpInputError(f"{what}: the tensors of a dynamic {p.kind} share one dtype and format, got "
                               f"{', '.join(sorted(f'{d}/{f}' for d, f in kinds))}")
        return items
    return host_tensor(value, what)


def bind_inputs(op: OpDef, inputs: Sequence[Any]) -> list[Bound]:
    """The user's inputs, one entry per declared input (trailing optional ones may be left out)."""
    inputs = list(inputs)
    if len(inputs) > len(op.inputs):
        raise OpInputError(f"op {op.name} takes {len(op.inputs)} input(s) "
                           f"({', '.join(p.name for p in op.inputs)}), got {len(inputs)}")
    inputs += [None] * (len(op.inputs) - len(inputs))
    return [_bind_one(op, p, v) for p, v in zip(op.inputs, inputs)]


def bind_outputs(op: OpDef, outputs: Sequence[Any] | None) -> list[Bound] | None:
    """The user's outputs, one per declared output, or None when the call lets phase one allocate them."""
    if outputs is None:
        return None
    if not isinstance(outputs, (list, tuple)):
        outputs = [outputs]
    if len(outputs) != len(op.outputs):
        raise OpInputError(f"op {op.name} has {len(op.outputs)} output(s) "
                           f"({', '.join(p.name for p in op.outputs)}), got {len(outputs)}")
    return [_bind_one(op, p, v) for p, v in zip(op.outputs, outputs)]


def first(b: Bound) -> HostTensor | None:
    """The tensor that stands for a parameter's dtype and format (a dynamic one's first)."""
    return b[0] if isinstance(b, list) else b


def _formats(op: OpDef, bound: list[Bound]) -> list[str | None]:
    """Each input's format as selection takes it: its own if a column has it there, else ND when a column
    has ND there or the op is format-agnostic (``nd_fallback``)."""
    out: list[str | None] = []
    for i, b in enumerate(bound):
        t = first(b)
        if t is None:
            out.append(None)
            continue
        known = {c.inputs[i][1] for c in op.columns}
        out.append(t.format if t.format in known else ND if ND in known or op.nd_fallback else t.format)
    return out


def _safe(a: str, b: str) -> bool:
    return a == b or bool(np.can_cast(np_dtype(a), np_dtype(b), "safe"))


def choose_column(op: OpDef, inputs: list[Bound], out_dtypes: Sequence[str] | None = None,
                  require_outputs: bool = False) -> Column:
    """The column the inputs select, promoting their dtypes if no column takes them as they are.

    ``out_dtypes`` (from ``op.infer_dtype``, or the user's outputs) picks among
    columns that differ only in their outputs; ``require_outputs`` makes it a
    condition rather than a preference.
    """
    dtypes = [t.dtype if (t := first(b)) is not None else None for b in inputs]
    formats = _formats(op, inputs)
    present = [i for i, d in enumerate(dtypes) if d is not None]

    def formats_fit(c: Column) -> bool:
        return all(c.inputs[i][1] == formats[i] for i in present)

    def outputs_fit(c: Column) -> bool:
        return out_dtypes is None or all(d is None or c.outputs[j][0] == d for j, d in enumerate(out_dtypes))

    usable = [c for c in op.columns if formats_fit(c) and (not require_outputs or outputs_fit(c))]
    exact = [c for c in usable if all(c.inputs[i][0] == dtypes[i] for i in present)]
    if exact:
        return next((c for c in exact if outputs_fit(c)), exact[0])
    wider = [c for c in usable if all(_safe(dtypes[i], c.inputs[i][0]) for i in present)]
    least = [c for c in wider
             if all(all(_safe(c.inputs[i][0], o.inputs[i][0]) for i in present) for o in wider)]
    if least or wider:
        pool = least or wider
        return next((c for c in pool if outputs_fit(c)), pool[0])
    given = ", ".join(f"{p.name}={d}/{f}" for p, d, f in zip(op.inputs, dtypes, formats) if d is not None)
    supported = "; ".join(c.describe(op) for c in op.columns)
    raise NoColumnError(f"op {op.name} does not support {given}, nor a promotion of it (NumPy rules, restricted "
                       f"to the op's combinations); supported: {supported}")


def _shape_of(b: Bound) -> Any:
    if b is None:
        return None
    return [t.shape for t in b] if isinstance(b, list) else b.shape


def infer_outputs(op: OpDef, inputs: list[Bound], column: Column, attrs: dict[str, Any]
                  ) -> list[tuple[tuple[int, ...] | None, str]]:
    """``(shape, dtype)`` per output; a shape nothing determines is None (the caller must give the output)."""
    shapes: list[Any] = [None] * len(op.outputs)
    if op.infer_shape is not None:
        got = op.infer_shape([_shape_of(b) for b in inputs], attrs)
        if len(op.outputs) == 1 and isinstance(got, tuple) and all(isinstance(d, (int, np.integer)) for d in got):
            got = [got]         # one output's shape given bare
        got = list(got)
        if len(got) != len(op.outputs):
            raise OpInputError(f"op {op.name}: infer_shape returned {len(got)} shape(s) for "
                               f"{len(op.outputs)} output(s)")
        shapes = [tuple(int(d) for d in s) for s in got]
    else:
        names = [p.name for p in op.inputs]
        for j, p in enumerate(op.outputs):
            if p.follow is not None and p.follow_type in ("all", "shape"):
                shapes[j] = _shape_of(inputs[names.index(p.follow)])
    dtypes = [d for d, _ in column.outputs]
    if op.infer_dtype is not None:
        dtypes = list(op.infer_dtype([d for d, _ in column.inputs], attrs))
    return list(zip(shapes, dtypes))


def check_output(op: OpDef, j: int, given: HostTensor, shape: tuple[int, ...] | None, dtype: str) -> None:
    """A user output must have the inferred shape and a dtype the result converts to (NumPy's ``same_kind``)."""
    p = op.outputs[j]
    if shape is not None and given.shape != tuple(shape):
        raise OpInputError(f"op {op.name}: output {p.name!r} has shape {list(given.shape)}, the op makes "
                           f"{list(shape)}")
    if not np.can_cast(np_dtype(dtype), given.array.dtype, "same_kind"):
        raise OpInputError(f"op {op.name}: output {p.name!r} is {given.dtype}, and the op's {dtype} result "
                           f"cannot be cast to it")
    if not given.array.flags.writeable:
        raise OpInputError(f"op {op.name}: output {p.name!r} is read-only")


__all__ = ["OpInputError", "HostTensor", "host_tensor", "bind_inputs", "bind_outputs", "choose_column",
           "infer_outputs", "check_output", "np_dtype", "dtype_name", "first"]
