"""What an op's binaries are: one per column x implementation mode x attribute binary value.

A :class:`Variant` names one binary of an op (CANN builds one ``.o`` per entry
of the op's ``binList``, superkernel-binaries-tiling.md §2.1-2.2):

* a column of the op definition (the data type and format of every tensor);
* an implementation mode the op is built for;
* a value of every attribute declared with ``binary_values``;
* for an optional input, whether it is there; for a dynamic input, how many
  tensors the list holds (each tensor is one kernel parameter);
* for a static binary, the concrete shapes and every attribute's value.

:func:`entry` writes a variant as an index entry (CANN's ``binList`` entry:
``implMode``, ``deterministic``, ``inputs``/``outputs`` with ``dtype``,
``format``, ``paramType``, ``shape`` ``[-2]``, ``attrs``) from which the
selection key is formed, and :func:`kernel_signature` the kernel
specialisation it is compiled as.  Nothing here builds or reads files.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..language import dtype as dt
from ..language.struct import Struct
from .codes import OpDefError
from .opdef import DYNAMIC, OPTIONAL, OpDef

# the value an attribute without default or binary value has while a binary is built: only its kind
# reaches the kernel (a scalar parameter); a value that decides a ConstExpr needs binary_values
_PLACEHOLDERS: dict[str, Any] = {"bool": False, "int": 0, "float": 0.0, "str": "", "list_int": [], "list_float": []}


@dataclass(frozen=True)
class Variant:
    """One binary of an op (see the module docstring).

    counts: per input, 0 for an absent optional input, the list length of a dynamic input, else 1.
    shapes: a static binary's origin shape per tensor (inputs, lists flattened, then outputs); None: dynamic.
    static_attrs: a static binary's value of every attribute.
    deterministic: a static binary's deterministic flag (dynamic ones follow the op's setting).
    """

    column: int
    impl_mode: str
    attrs: tuple[tuple[str, Any], ...] = ()
    counts: tuple[int, ...] = ()
    shapes: tuple[tuple[int, ...], ...] | None = None
    static_attrs: tuple[tuple[str, Any], ...] = ()
    deterministic: bool = False

    @property
    def static(self) -> bool:
        return self.shapes is not None


def _freeze(v: Any) -> Any:
    return tuple(_freeze(x) for x in v) if isinstance(v, (list, tuple)) else v


def declared_variants(op: OpDef, dynamic_counts: Sequence[int] | None = None) -> list[Variant]:
    """Every dynamic binary the definition declares: columns x impl modes x attribute binary values x
    optional inputs present or not.  An op with dynamic inputs declares binaries per list length: give
    ``dynamic_counts`` (one per dynamic input); without them it declares none yet."""
    dyn = [i for i, p in enumerate(op.inputs) if p.param_type == DYNAMIC]
    if dyn and dynamic_counts is None:
        return []
    counts_dyn = dict(zip(dyn, dynamic_counts or ()))
    optional = [i for i, p in enumerate(op.inputs) if p.param_type == OPTIONAL]
    valued = [a for a in op.attrs if a.binary_values is not None]
    out = []
    for col in range(len(op.columns)):
        for mode in op.impl_modes:
            for values in itertools.product(*(a.binary_values for a in valued)):
                attrs = tuple((a.name, _freeze(v)) for a, v in zip(valued, values))
                for present in itertools.product((True, False), repeat=len(optional)):
                    absent = {i for i, here in zip(optional, present) if not here}
                    counts = tuple(0 if i in absent else counts_dyn.get(i, 1) for i in range(len(op.inputs)))
                    out.append(Variant(col, mode, attrs, counts))
    return out


def build_attrs(op: OpDef, variant: Variant) -> dict[str, Any]:
    """The attribute values a variant's binary is built with: its binary values (or, static, every
    value), else the defaults, else a placeholder of the attribute's type."""
    given = dict(variant.static_attrs) if variant.static else {}
    given.update(dict(variant.attrs))
    out = {}
    for a in op.attrs:
        out[a.name] = given[a.name] if a.name in given else (_PLACEHOLDERS[a.type] if a.required else a.default)
    return out


# --------------------------------------------------------------------------- index entries


def _json_value(attr_type: str, v: Any) -> Any:
    """An attribute value as an index entry holds it: floats as floats (the key encodes by JSON type)."""
    if v is None:
        return None
    if attr_type == "float":
        return float(v)
    if attr_type == "list_float":
        return [float(x) for x in v]
    if attr_type == "list_int":
        return [int(x) for x in v]
    return v


def entry(op: OpDef, variant: Variant) -> dict[str, Any]:
    """The variant as an index entry (CANN's binList entry), without its ``binInfo``."""
    col = op.columns[variant.column]
    shapes = iter(variant.shapes or ())
    match = "FormatAgnostic" if op.nd_fallback else "FormatDefault"

    def tensor(p: Any, index: int, dtype: str, fmt: str) -> dict[str, Any]:
        shape = list(next(shapes)) if variant.static else [-2]
        return {"name": p.name, "index": index, "dtype": dtype, "format": fmt, "paramType": p.param_type,
                "shape": shape, "format_match_mode": match}

    inputs: list[Any] = []
    for i, (p, (dtype, fmt)) in enumerate(zip(op.inputs, col.inputs)):
        n = variant.counts[i] if variant.counts else 1
        if n == 0:
            inputs.append(None)
        elif p.param_type == DYNAMIC:
            inputs.append([tensor(p, i, dtype, fmt) for _ in range(n)])
        else:
            inputs.append(tensor(p, i, dtype, fmt))
    outputs = [tensor(p, i, dtype, fmt) for i, (p, (dtype, fmt)) in enumerate(zip(op.outputs, col.outputs))]
    values = dict(variant.static_attrs) if variant.static else dict(variant.attrs)
    attrs = [{"name": a.name, "dtype": a.type, "value": _json_value(a.type, values.get(a.name))} for a in op.attrs]
    det = ("true" if variant.deterministic else "false") if variant.static else op.deterministic
    return {"opType": op.name, "implMode": variant.impl_mode, "deterministic": det, "int64Mode": False,
            "inputs": inputs, "outputs": outputs, "attrs": attrs}


def describe(op: OpDef, variant: Variant) -> str:
    """``x1=float16/ND, ..., high_performance[, alpha=2.0][, shapes ...]`` for messages and progress."""
    col = op.columns[variant.column]
    parts = []
    for i, (p, (d, f)) in enumerate(zip(op.inputs, col.inputs)):
        n = variant.counts[i] if variant.counts else 1
        parts.append(f"{p.name}=absent" if n == 0 else f"{p.name}={d}/{f}" + (f" x{n}" if p.param_type == DYNAMIC
                                                                                  else ""))
    parts += [f"{p.name}={d}/{f}" for p, (d, f) in zip(op.outputs, col.outputs)]
    text = ", ".join(parts) + f"; {variant.impl_mode}"
    if variant.attrs:
        text += "; " + ", ".join(f"{k}={v!r}" for k, v in variant.attrs)
    if variant.static:
        text += "; static " + " ".join("x".join(map(str, s)) or "scalar" for s in variant.shapes or ())
    return text


# --------------------------------------------------------------------------- the kernel's parameters


@dataclass(frozen=True)
class KernelLayout:
    """Where an op's tensors, workspace, tiling data and extra arguments sit in its kernel's parameters."""

    params: tuple[str, ...]
    tensors: int                    # GM tensor parameters: inputs (lists flattened), then outputs
    workspace: bool                 # a parameter named ``workspace`` follows them
    tiling_param: str
    tiling_struct: type


def kernel_layout(op: OpDef, tensors: int) -> KernelLayout:
    """The layout of ``op.kernel``'s parameters for a call with ``tensors`` GM tensors."""
    kernel = op.kernel
    if kernel is None or not hasattr(kernel, "compile") or not hasattr(kernel, "signature"):
        raise OpDefError(f"op {op.name}: kernel must be an @asc.jit kernel, got {kernel!r}")
    params = tuple(kernel.signature.parameters)
    workspace = len(params) > tensors and params[tensors] == "workspace"
    at = tensors + int(workspace)
    if at >= len(params):
        raise OpDefError(f"op {op.name}: kernel '{kernel.__name__}' takes {len(params)} parameters "
                         f"({', '.join(params)}); the op passes {tensors} tensors, then the tiling data")
    name = params[at]
    struct = _annotation(kernel, name)
    if not (isinstance(struct, type) and issubclass(struct, Struct)):
        raise OpDefError(f"op {op.name}: kernel '{kernel.__name__}' parameter '{name}' takes the tiling data; "
                         f"annotate it with the tiling Struct class (got {struct!r})")
    return KernelLayout(params, tensors, workspace, name, struct)


def _annotation(kernel: Any, name: str) -> Any:
    """A parameter's annotation, resolved in the kernel's module when written as a string."""
    ann = kernel.signature.parameters[name].annotation
    if isinstance(ann, str):
        try:
            ann = eval(ann, getattr(kernel.fn, "__globals__", {}))  # noqa: S307 - the kernel's own annotation
        except Exception:       # an annotation that does not evaluate is reported as not a Struct
            return ann
    return ann


def tensor_count(variant: Variant, op: OpDef) -> int:
    """GM tensor parameters of a variant: every input tensor (an absent optional one still takes its
    parameter: the kernel's signature is fixed) and every output."""
    counts = variant.counts or (1,) * len(op.inputs)
    return sum(max(n, 1) for n in counts) + len(op.outputs)


def kernel_args(op: OpDef, attrs: Mapping[str, Any]) -> tuple[Any, ...]:
    """``op.kernel_args(attrs)`` as a tuple (none without it)."""
    return tuple(op.kernel_args(dict(attrs))) if op.kernel_args is not None else ()


def kernel_signature(op: OpDef, variant: Variant, attrs: Mapping[str, Any] | None = None) -> list[Any]:
    """The kernel specialisation of a variant, for ``kernel.compile``: the column's dtypes for the
    tensors, the workspace dtype, the tiling Struct class, then ``kernel_args(attrs)``."""
    col = op.columns[variant.column]
    layout = kernel_layout(op, tensor_count(variant, op))
    counts = variant.counts or (1,) * len(op.inputs)
    sig: list[Any] = []
    for n, (dtype, _) in zip(counts, col.inputs):
        sig += [dtype] * max(n, 1)
    sig += [dtype for dtype, _ in col.outputs]
    if layout.workspace:
        sig.append(workspace_dtype(op))
    sig.append(layout.tiling_struct)
    extra = kernel_args(op, build_attrs(op, variant) if attrs is None else attrs)
    if len(sig) + len(extra) > len(layout.params):
        raise OpDefError(f"op {op.name}: kernel '{op.kernel.__name__}' takes {len(layout.params)} parameters "
                         f"({', '.join(layout.params)}), but the op passes {len(sig) + len(extra)} "
                         f"(tensors, {'workspace, ' if layout.workspace else ''}tiling data, {len(extra)} from "
                         f"kernel_args)")
    return sig + list(extra)


def workspace_dtype(op: OpDef) -> Any:
    """The kernel dtype of the workspace parameter (``op.workspace_dtype`` or uint8)."""
    wd = op.workspace_dtype
    if wd is None:
        return dt.uint8
    if isinstance(wd, str):
        try:
            return dt.by_name(wd)
        except KeyError:
            raise OpDefError(f"op {op.name}: unknown workspace_dtype {wd!r}") from None
    return wd
