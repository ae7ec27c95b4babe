"""Operator definitions, as CANN's ``OpDef`` declares them (superkernel-binaries-tiling.md §2.1).

::

    ADD = OpDef(
        "Add",
        inputs=[Input("x1", dtype=["float16", "float32", "bfloat16"]),
                Input("x2", follow="x1")],
        outputs=[Output("y", follow="x1")],
        attrs=[Attr("alpha", "float", default=1.0)],
        kernel=add_kernel, tiling=elementwise_tiling, infer_shape=broadcast_shape)

**Columns.**  Every ``dtype`` and ``format`` list of every input and output
has the same length K: column j, the tuple of every tensor's j-th entry, is
one supported combination and one kernel binary.  A parameter declared with
``dtype_list``/``format_list`` (``DataTypeList``/``FormatList``) combines with
every column of the others (a Cartesian product).  ``follow`` copies the
dtype, format or both (``follow_type``) from an earlier input, column by
column.  An omitted ``format`` is ND in every column.  An optional input may
be absent at call time; a dynamic input is a list of tensors that share one
dtype and format.

Definitions are checked when they are made: lists of different lengths, an
unknown dtype or format, a ``follow`` of nothing or of a later parameter, an
attribute default of the wrong type are :class:`~npuemu.ops.codes.OpDefError`
naming the op and the field.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .codes import DTYPES, OpDefError, format_name

REQUIRED, OPTIONAL, DYNAMIC = "required", "optional", "dynamic"
PARAM_TYPES = (REQUIRED, OPTIONAL, DYNAMIC)
FOLLOW_TYPES = ("all", "dtype", "format", "shape")
IMPL_MODES = ("high_precision", "high_performance")
DETERMINISTIC = ("true", "false", "ignore")
ATTR_TYPES: dict[str, Callable[[Any], bool]] = {
    "bool": lambda v: isinstance(v, bool),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "list_int": lambda v: isinstance(v, (list, tuple)) and all(ATTR_TYPES["int"](x) for x in v),
    "list_float": lambda v: isinstance(v, (list, tuple)) and all(ATTR_TYPES["float"](x) for x in v),
}
_NO_DEFAULT = object()


@dataclass(frozen=True)
class TensorParam:
    """One input or output of an op; build it with :func:`Input` / :func:`Output`."""

    name: str
    is_output: bool
    dtype: tuple[str, ...] = ()
    format: tuple[str, ...] = ()
    dtype_list: tuple[str, ...] = ()
    format_list: tuple[str, ...] = ()
    param_type: str = REQUIRED
    follow: str | None = None
    follow_type: str = "all"

    @property
    def kind(self) -> str:
        return "output" if self.is_output else "input"


def Input(name: str, dtype: Sequence[str] | None = None, format: Sequence[str] | None = None, *,  # noqa: A002,N802
          dtype_list: Sequence[str] | None = None, format_list: Sequence[str] | None = None,
          param_type: str = REQUIRED, follow: str | None = None, follow_type: str = "all") -> TensorParam:
    """An input (``this->Input(name).ParamType(...).DataType({...}).Format({...})``)."""
    return TensorParam(name, False, tuple(dtype or ()), tuple(format or ()), tuple(dtype_list or ()),
                       tuple(format_list or ()), param_type, follow, follow_type)


def Output(name: str, dtype: Sequence[str] | None = None, format: Sequence[str] | None = None, *,  # noqa: A002,N802
           dtype_list: Sequence[str] | None = None, format_list: Sequence[str] | None = None,
           param_type: str = REQUIRED, follow: str | None = None, follow_type: str = "all") -> TensorParam:
    """An output; as :func:`Input`."""
    return TensorParam(name, True, tuple(dtype or ()), tuple(format or ()), tuple(dtype_list or ()),
                       tuple(format_list or ()), param_type, follow, follow_type)


@dataclass(frozen=True)
class Attr:
    """An attribute: ``type`` is one of ``bool int float str list_int list_float``.

    ``binary_values`` lists the values binaries are built for (their key
    carries the value); None builds one binary for every value (the key
    ignores the attribute: CANN's ``value: null``).
    """

    name: str
    type: str
    default: Any = _NO_DEFAULT
    binary_values: tuple[Any, ...] | None = None

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


@dataclass(frozen=True)
class Column:
    """One supported combination: ``(dtype, format)`` per input and per output, in declaration order."""

    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[tuple[str, str], ...]

    def describe(self, op: "OpDef") -> str:
        parts = [f"{p.name}={d}/{f}" for p, (d, f) in zip(op.inputs, self.inputs)]
        parts += [f"{p.name}={d}/{f}" for p, (d, f) in zip(op.outputs, self.outputs)]
        return ", ".join(parts)


@dataclass(frozen=True)
class OpDef:
    """An operator: its parameters, the combinations it supports, and how to compute it.

    kernel: the ``@asc.jit`` kernel, launched as ``kernel[block_dim](*inputs, *outputs, [workspace,]
        tiling_data, *kernel_args(attrs))``.
    tiling: the tiling function (``TilingContext -> TilingResult``); the context's attributes are the op's.
    infer_shape: ``(input shapes, attrs) -> output shapes``; infer_dtype likewise (default: the column's).
    kernel_args: ``attrs -> extra kernel arguments`` after the tiling data (ConstExpr values, scalars).
    tiling_attrs: ``(input TensorDescs, attrs) -> dict`` of further attributes the tiling function reads
        (e.g. scratch bytes per element); the op's own attributes are always there.
    workspace_dtype: the kernel dtype its ``workspace`` parameter takes (None: uint8).
    impl_modes: the implementation modes the binaries are built for (``high_precision``,
        ``high_performance``); deterministic: ``"true"``, ``"false"`` or ``"ignore"``.
    nd_fallback: a tensor in a format the op does not support is taken as ND (CANN's SUPPORT_ND).
    cpu: a NumPy implementation ``(inputs, attrs) -> outputs`` for the CPU fallback.
    """

    name: str
    inputs: tuple[TensorParam, ...]
    outputs: tuple[TensorParam, ...]
    attrs: tuple[Attr, ...] = ()
    kernel: Any = None
    tiling: Callable[[Any], Any] | None = None
    infer_shape: Callable[..., Any] | None = None
    infer_dtype: Callable[..., Any] | None = None
    kernel_args: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None
    tiling_attrs: Callable[..., dict[str, Any]] | None = None
    workspace_dtype: Any = None
    impl_modes: tuple[str, ...] = ("high_performance",)
    deterministic: str = "ignore"
    nd_fallback: bool = False
    cpu: Callable[..., Any] | None = None
    columns: tuple[Column, ...] = field(init=False, default=())

    def __init__(self, name: str, *, inputs: Sequence[TensorParam], outputs: Sequence[TensorParam],
                 attrs: Sequence[Attr] = (), kernel: Any = None, tiling: Callable[[Any], Any] | None = None,
                 infer_shape: Callable[..., Any] | None = None, infer_dtype: Callable[..., Any] | None = None,
                 kernel_args: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None,
                 tiling_attrs: Callable[..., dict[str, Any]] | None = None, workspace_dtype: Any = None,
                 impl_modes: Sequence[str] = ("high_performance",), deterministic: str = "ignore",
                 nd_fallback: bool = False, cpu: Callable[..., Any] | None = None):
        values = dict(name=name, inputs=tuple(inputs), outputs=tuple(outputs), attrs=tuple(attrs), kernel=kernel,
                      tiling=tiling, infer_shape=infer_shape, infer_dtype=infer_dtype, kernel_args=kernel_args,
                      tiling_attrs=tiling_attrs, workspace_dtype=workspace_dtype,
                      impl_modes=tuple(impl_modes), deterministic=deterministic, nd_fallback=nd_fallback, cpu=cpu)
        for k, v in values.items():
            object.__setattr__(self, k, v)
        _check(self)
        object.__setattr__(self, "columns", _expand(self))

    def __repr__(self) -> str:
        return f"<OpDef {self.name}: {len(self.columns)} column(s)>"

    def param(self, name: str) -> TensorParam:
        for p in (*self.inputs, *self.outputs):
            if p.name == name:
                return p
        raise OpDefError(f"op {self.name} has no input or output {name!r}")

    def attr_values(self, given: dict[str, Any]) -> dict[str, Any]:
        """Every attribute's value for a call: ``given``, checked, with the defaults filled in."""
        unknown = sorted(set(given) - {a.name for a in self.attrs})
        if unknown:
            raise OpDefError(f"op {self.name} has no attribute {', '.join(unknown)} "
                             f"(attributes: {', '.join(a.name for a in self.attrs) or 'none'})")
        out = {}
        for a in self.attrs:
            if a.name in given:
                v = given[a.name]
            elif a.required:
                raise OpDefError(f"op {self.name}: attribute {a.name!r} ({a.type}) is required")
            else:
                v = a.default
            if not ATTR_TYPES[a.type](v):
                raise OpDefError(f"op {self.name}: attribute {a.name!r} must be {a.type}, got {v!r}")
            out[a.name] = v
        return out


# --------------------------------------------------------------------------- checks


def _fail(op: OpDef, where: str, message: str) -> None:
    raise OpDefError(f"op {op.name}: {where}: {message}")


def _check(op: OpDef) -> None:
    if not op.name or not isinstance(op.name, str):
        raise OpDefError(f"an op needs a name, got {op.name!r}")
    if not op.outputs:
        _fail(op, "outputs", "an op has at least one output")
    seen: set[str] = set()
    for p in (*op.inputs, *op.outputs):
        where = f"{p.kind} {p.name!r}"
        if p.name in seen:
            _fail(op, where, "declared twice")
        seen.add(p.name)
        if p.param_type not in PARAM_TYPES:
            _fail(op, where, f"param_type must be one of {', '.join(PARAM_TYPES)}, got {p.param_type!r}")
        if p.is_output and p.param_type == OPTIONAL:
            _fail(op, where, "outputs cannot be optional")
        if p.follow_type not in FOLLOW_TYPES:
            _fail(op, where, f"follow_type must be one of {', '.join(FOLLOW_TYPES)}, got {p.follow_type!r}")
        for field_name in ("dtype", "dtype_list"):
            for d in getattr(p, field_name):
                if d not in DTYPES:
                    _fail(op, f"{where} {field_name}", f"unknown data type {d!r}; known: {', '.join(DTYPES)}")
        for field_name in ("format", "format_list"):
            for f in getattr(p, field_name):
                try:
                    format_name(f)
                except OpDefError as exc:
                    _fail(op, f"{where} {field_name}", str(exc))
        if p.dtype and p.dtype_list:
            _fail(op, where, "give dtype (columns) or dtype_list (every column), not both")
        if p.format and p.format_list:
            _fail(op, where, "give format (columns) or format_list (every column), not both")
        if p.follow is not None:
            _check_follow(op, p, seen)
        elif not (p.dtype or p.dtype_list):
            _fail(op, where, "needs dtype, dtype_list or follow")
    _check_lengths(op)
    names = set()
    for a in op.attrs:
        if a.name in names:
            _fail(op, f"attribute {a.name!r}", "declared twice")
        names.add(a.name)
        if a.type not in ATTR_TYPES:
            _fail(op, f"attribute {a.name!r}", f"type must be one of {', '.join(ATTR_TYPES)}, got {a.type!r}")
        for v in ([] if a.required else [a.default]) + list(a.binary_values or ()):
            if not ATTR_TYPES[a.type](v):
                _fail(op, f"attribute {a.name!r}", f"value {v!r} is not a {a.type}")
    for m in op.impl_modes:
        if m not in IMPL_MODES:
            _fail(op, "impl_modes", f"unknown implementation mode {m!r}; known: {', '.join(IMPL_MODES)}")
    if not op.impl_modes:
        _fail(op, "impl_modes", "at least one implementation mode")
    if op.deterministic not in DETERMINISTIC:
        _fail(op, "deterministic", f"must be one of {', '.join(DETERMINISTIC)}, got {op.deterministic!r}")


def _check_follow(op: OpDef, p: TensorParam, seen: set[str]) -> None:
    where = f"{p.kind} {p.name!r} follow"
    inputs = [q.name for q in op.inputs]
    if p.follow not in inputs:
        _fail(op, where, f"follows {p.follow!r}, which is not an input of the op "
                         f"(inputs: {', '.join(inputs) or 'none'})")
    if not p.is_output and inputs.index(p.follow) >= inputs.index(p.name):
        _fail(op, where, f"follows {p.follow!r}, which is not declared before it")
    if p.follow_type == "shape" and not p.is_output:
        _fail(op, where, "a shape can only be followed by an output")
    target = op.param(p.follow)
    if target.follow is not None and target.follow_type != p.follow_type:
        _fail(op, where, f"a follow chain must keep one follow_type ({target.name!r} follows by "
                         f"{target.follow_type!r}, {p.name!r} by {p.follow_type!r})")
    own_dtype = p.follow_type in ("format", "shape")
    own_format = p.follow_type in ("dtype", "shape")
    if not own_dtype and (p.dtype or p.dtype_list):
        _fail(op, where, f"follow_type {p.follow_type!r} copies the data type: do not also give dtype")
    if not own_format and (p.format or p.format_list):
        _fail(op, where, f"follow_type {p.follow_type!r} copies the format: do not also give format")
    if own_dtype and not (p.dtype or p.dtype_list):
        _fail(op, where, f"follow_type {p.follow_type!r} copies no data type: give dtype or dtype_list")


def _check_lengths(op: OpDef) -> None:
    lengths = {}
    for p in (*op.inputs, *op.outputs):
        if p.dtype:
            lengths[f"{p.kind} {p.name!r} dtype"] = len(p.dtype)
        if len(p.format) > 1 or (p.format and p.dtype and len(p.dtype) == 1):
            lengths[f"{p.kind} {p.name!r} format"] = len(p.format)
    if len(set(lengths.values())) > 1:
        listed = "; ".join(f"{k}: {n}" for k, n in lengths.items())
        _fail(op, "columns", f"every dtype and format list must have the same length (one entry per "
                             f"binary); got {listed}")


# --------------------------------------------------------------------------- columns


def _expand(op: OpDef) -> tuple[Column, ...]:
    """Every supported combination, in declaration order (columns, then the Cartesian products)."""
    params = (*op.inputs, *op.outputs)
    k = max((len(p.dtype) for p in params if p.dtype), default=1)
    k = max([k] + [len(p.format) for p in params if len(p.format) > 1])
    axes: list[tuple[str, str, tuple[str, ...]]] = []      # (param, "dtype"|"format", values) of the lists
    for p in params:
        if p.dtype_list:
            axes.append((p.name, "dtype", p.dtype_list))
        if p.format_list:
            axes.append((p.name, "format", p.format_list))
    out: list[Column] = []
    for j in range(k):
        for combo in itertools.product(*(values for _, _, values in axes)):
            chosen = {(name, what): v for (name, what, _), v in zip(axes, combo)}
            resolved: dict[str, tuple[str, str]] = {}
            for p in params:
                resolved[p.name] = _entry(p, j, chosen, resolved)
            out.append(Column(tuple(resolved[p.name] for p in op.inputs),
                              tuple(resolved[p.name] for p in op.outputs)))
    return tuple(dict.fromkeys(out))       # identical columns (a follow of a list) once


def _entry(p: TensorParam, j: int, chosen: dict[tuple[str, str], str],
           resolved: dict[str, tuple[str, str]]) -> tuple[str, str]:
    followed = resolved.get(p.follow) if p.follow else None
    if followed is not None and p.follow_type in ("all", "dtype"):
        dtype = followed[0]
    elif p.dtype_list:
        dtype = chosen[(p.name, "dtype")]
    else:
        dtype = p.dtype[j] if len(p.dtype) > 1 else p.dtype[0]
    if followed is not None and p.follow_type in ("all", "format"):
        fmt = followed[1]
    elif p.format_list:
        fmt = chosen[(p.name, "format")]
    elif p.format:
        fmt = p.format[j] if len(p.format) > 1 else p.format[0]
    else:
        fmt = "ND"
    return dtype, format_name(fmt)
