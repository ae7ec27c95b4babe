"""The op library as torch custom ops: ``torch.ops.npuemu.<name>`` on CPU tensors.

::

    import npuemu.ops.torch_ops as torch_ops
    torch_ops.register()                               # once; idempotent and thread-safe
    y = torch.ops.npuemu.add(x1, x2, alpha=2.0)        # runs npuemu.ops.functions.call(ADD, ...)
    f = torch.compile(lambda x, w: torch.ops.npuemu.softmax(torch.ops.npuemu.matmul(x, w)), fullgraph=True)

:func:`register` defines every op of :data:`npuemu.ops.torch_table.TABLE`
with ``torch.library`` in the namespace ``npuemu``, with three kernels each:

* **CPU**: :func:`npuemu.ops.functions.call` of the entry's OpDef (its
  binaries, or the CPU fallback), with the tensors as inputs and the
  keyword arguments as attributes; the result is a new tensor of the shape
  and dtype the fake kernel gives;
* **fake** (meta): the output's shape from the OpDef's ``infer_shape`` and
  its dtype from its ``infer_dtype`` of the column the inputs select
  (promotion as phase one does it; without a column, the CPU fallback's
  dtypes), so ``FakeTensorMode`` and ``torch.compile`` trace the op without
  running it;
* **AutocastCPU**: the entry's autocast policy (:data:`npuemu.ops.torch_table.AUTOCAST_POLICIES`)
  casts the floating inputs (float16, bfloat16, float32; float64 is left
  alone, as torch's autocast does), then runs the op with autocast off.

torch is an optional dependency (``pip install npuemu[torch]``): this module
imports without it, and :func:`register` raises :class:`TorchNotInstalledError`.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import NpuemuError
from .codes import DTYPES
from .opdef import OpDef
from .torch_table import AUTOCAST_POLICIES, TABLE

NAMESPACE = "npuemu"
AUTOCAST_KEY = "AutocastCPU"
#: the schema type of each attribute type of an OpDef
SCHEMA_TYPES = {"float": "float", "bool": "bool", "int": "int", "str": "str", "list_int": "int[]",
                "list_float": "float[]"}


class TorchNotInstalledError(NpuemuError, ImportError):
    """The torch ops need torch, which is not installed."""


_lock = threading.Lock()
_lib: Any = None                 # the torch.library.Library the ops are defined in (kept alive here)
_registered = False


def _torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise TorchNotInstalledError("npuemu's torch ops need torch: pip install npuemu[torch]") from exc
    return torch


# ----------------------------------------------------------------------------- dtypes


def torch_dtype(name: str) -> Any:
    """The torch dtype of an op dtype name (``bfloat16`` is ``torch.bfloat16``)."""
    torch = _torch()
    if name not in DTYPES or not isinstance(getattr(torch, name, None), torch.dtype):
        raise NpuemuError(f"data type {name!r} has no torch equivalent")
    return getattr(torch, name)


def dtype_name(dtype: Any) -> str:
    """The op dtype name of a torch dtype (``torch.half`` is ``float16``)."""
    name = str(dtype).rpartition(".")[2]
    if name not in DTYPES:
        raise NpuemuError(f"torch dtype {dtype} has no npuemu data type (known: {', '.join(DTYPES)})")
    return name


# ----------------------------------------------------------------------------- the table


def check_entry(entry: dict) -> None:
    """An entry's schema must declare its OpDef: inputs as Tensors in order, attributes keyword-only."""
    torch = _torch()
    op: OpDef = entry["op"]
    where = f"torch op {entry['name']!r} (op {op.name})"
    if entry["autocast"] not in AUTOCAST_POLICIES:
        raise NpuemuError(f"{where}: autocast policy {entry['autocast']!r} is not one of "
                          f"{', '.join(map(repr, AUTOCAST_POLICIES))}")
    schema = torch._C.parse_schema(entry["schema"])
    if schema.name != entry["name"]:
        raise NpuemuError(f"{where}: the schema names {schema.name!r}")
    tensors = [a for a in schema.arguments if not a.kwarg_only]
    if [a.name for a in tensors] != [p.name for p in op.inputs] or any(str(a.type) != "Tensor" for a in tensors):
        raise NpuemuError(f"{where}: the schema's positional arguments must be the op's inputs as Tensors "
                          f"({', '.join(p.name for p in op.inputs)}), got {', '.join(map(str, tensors))}")
    attrs = [a for a in schema.arguments if a.kwarg_only]
    if [a.name for a in attrs] != [a.name for a in op.attrs]:
        raise NpuemuError(f"{where}: the schema's keyword arguments must be the op's attributes "
                          f"({', '.join(a.name for a in op.attrs) or 'none'})")
    for arg, attr in zip(attrs, op.attrs):
        if str(arg.type) != SCHEMA_TYPES[attr.type]:
            raise NpuemuError(f"{where}: argument {arg.name!r} must be {SCHEMA_TYPES[attr.type]} ({attr.type})")
        default = None if attr.required else attr.default
        if arg.default_value != default:
            raise NpuemuError(f"{where}: argument {arg.name!r} defaults to {arg.default_value!r}, "
                              f"the op's attribute to {default!r}")
    if len(schema.returns) != len(op.outputs):
        raise NpuemuError(f"{where}: the schema returns {len(schema.returns)} value(s), "
                          f"the op has {len(op.outputs)} output(s)")


def _split(op: OpDef, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """The op's inputs and its attributes from a kernel's arguments (attributes may come positionally)."""
    n = len(op.inputs)
    attrs = dict(zip((a.name for a in op.attrs), args[n:]))
    attrs.update(kwargs)
    return list(args[:n]), attrs


def output_meta(op: OpDef, inputs: Sequence[Any], attrs: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    """``(shape, dtype name)`` of each output for tensors ``inputs``, as a call of the op makes them."""
    from .inference import HostTensor, NoColumnError, choose_column, np_dtype
    values = op.attr_values(attrs)
    shapes = [tuple(x.shape) for x in inputs]
    dtypes = [dtype_name(x.dtype) for x in inputs]
    got = op.infer_shape(shapes, values) if op.infer_shape is not None else [shapes[0]] * len(op.outputs)
    out_shapes = [tuple(s) for s in got]
    try:
        column = choose_column(op, [HostTensor(np.empty(0, np_dtype(d))) for d in dtypes])
    except NoColumnError:
        column = None                       # the CPU fallback runs on the inputs as they are
    in_dtypes = dtypes if column is None else [d for d, _ in column.inputs]
    if op.infer_dtype is not None:
        out_dtypes = list(op.infer_dtype(in_dtypes, values))
    elif column is not None:
        out_dtypes = [d for d, _ in column.outputs]
    else:
        out_dtypes = [in_dtypes[0]] * len(op.outputs)
    return list(zip(out_shapes, out_dtypes))


def _single(results: list[Any]) -> Any:
    return results[0] if len(results) == 1 else tuple(results)


def _cpu_kernel(op: OpDef) -> Callable[..., Any]:
    """The CPU kernel: :func:`npuemu.ops.functions.call`, its results as new tensors of the fake's shape and dtype."""
    def kernel(*args: Any, **kwargs: Any) -> Any:
        from .functions import call
        torch = _torch()
        inputs, attrs = _split(op, args, kwargs)
        inputs = [x.detach() if isinstance(x, torch.Tensor) else x for x in inputs]
        meta = output_meta(op, inputs, attrs)
        got = call(op, *inputs, **attrs)
        got = list(got) if isinstance(got, tuple) else [got]
        storages = {x.untyped_storage().data_ptr() for x in inputs}
        results = []
        for y, (shape, dtype) in zip(got, meta):
            if not isinstance(y, torch.Tensor):
                y = torch.from_numpy(np.asarray(y))
            y = y.to(torch_dtype(dtype)).reshape(shape)
            if y.untyped_storage().data_ptr() in storages:
                y = y.clone()               # an op's output never aliases its inputs
            results.append(y)
        return _single(results)
    kernel.__name__ = f"{op.name}_cpu"
    return kernel


def _fake_kernel(op: OpDef) -> Callable[..., Any]:
    """The fake kernel: empty outputs of the shapes and dtypes the OpDef infers."""
    def kernel(*args: Any, **kwargs: Any) -> Any:
        inputs, attrs = _split(op, args, kwargs)
        return _single([inputs[0].new_empty(shape, dtype=torch_dtype(dtype))
                        for shape, dtype in output_meta(op, inputs, attrs)])
    kernel.__name__ = f"{op.name}_fake"
    return kernel


def autocast_dtype(policy: str | None, inputs: Sequence[Any]) -> Any:
    """The dtype a policy runs the floating inputs in under CPU autocast (None: as they are)."""
    torch = _torch()
    floats = [x.dtype for x in inputs if isinstance(x, torch.Tensor) and x.dtype in _autocast_floats(torch)]
    if policy is None or not floats:
        return None
    if policy == "fp32":
        return torch.float32
    if policy == "lower":
        get = getattr(torch, "get_autocast_dtype", None)
        return get("cpu") if get is not None else torch.get_autocast_cpu_dtype()
    widest = floats[0]
    for d in floats[1:]:
        widest = torch.promote_types(widest, d)
    return widest


def _autocast_floats(torch: Any) -> tuple[Any, ...]:
    return (torch.float16, torch.bfloat16, torch.float32)


def _autocast_kernel(qualname: str, policy: str | None) -> Callable[..., Any]:
    """Cast the floating inputs as the policy says, then run the op with CPU autocast excluded."""
    torch = _torch()
    key = getattr(torch._C.DispatchKey, AUTOCAST_KEY)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        target = autocast_dtype(policy, args)
        if target is not None:
            floats = _autocast_floats(torch)
            args = tuple(x.to(target) if isinstance(x, torch.Tensor) and x.dtype in floats else x for x in args)
        namespace, name = qualname.split("::")
        with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(key)):
            return getattr(getattr(torch.ops, namespace), name)(*args, **kwargs)
    return kernel


# ----------------------------------------------------------------------------- registration


def _define(torch: Any, lib: Any, entry: dict) -> None:
    name, op = entry["name"], entry["op"]
    qualname = f"{NAMESPACE}::{name}"
    lib.define(entry["schema"])
    lib.impl(name, _cpu_kernel(op), "CPU")
    register_fake = getattr(torch.library, "register_fake", None) or torch.library.impl_abstract
    register_fake(qualname, _fake_kernel(op), lib=lib)
    autocast = _autocast_kernel(qualname, entry["autocast"])
    lib.impl(name, autocast, AUTOCAST_KEY)
    overload = getattr(getattr(torch.ops, NAMESPACE), name).default
    key = getattr(torch._C.DispatchKey, AUTOCAST_KEY)
    if key not in overload.py_kernels:
        overload.py_impl(key)(autocast)        # the Python dispatcher (torch.compile) takes it from here


def register() -> None:
    """Define ``torch.ops.npuemu.<name>`` for every entry of the table (once; later calls return at once).

    Raises :class:`TorchNotInstalledError` without torch, and
    :class:`~npuemu.errors.NpuemuError` for an entry whose schema does not
    declare its OpDef.
    """
    global _lib, _registered
    if _registered:
        return
    torch = _torch()
    with _lock:
        if _registered:
            return
        for entry in TABLE:
            check_entry(entry)
        namespace = getattr(torch.ops, NAMESPACE)
        missing = [e for e in TABLE if not _defined(namespace, e["name"])]
        if missing:
            lib = torch.library.Library(NAMESPACE, "FRAGMENT")
            for entry in missing:
                _define(torch, lib, entry)
            _lib = lib
        _registered = True


def _defined(namespace: Any, name: str) -> bool:
    try:
        getattr(namespace, name)
    except (AttributeError, RuntimeError):
        return False
    return True


def registered() -> bool:
    """Whether :func:`register` has defined the ops."""
    return _registered


def names() -> list[str]:
    """The torch ops' names, in table order (``torch.ops.npuemu.<name>``)."""
    return [e["name"] for e in TABLE]


__all__ = ["register", "registered", "check_entry", "names", "torch_dtype", "dtype_name", "output_meta",
           "autocast_dtype", "TorchNotInstalledError", "NAMESPACE", "TABLE"]
