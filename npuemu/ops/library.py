"""npuemu's op library: the bundled kernels (``npuemu.kernels``) declared as operators.

Each :class:`~npuemu.ops.opdef.OpDef` here names its kernel and tiling
function and says what the kernels' host functions (``kernels/_host.py``'s
``launch_elementwise`` / ``launch_rows``, ``kernels/_cube.py``'s
``launch_matmul``) decide around a launch: the tiling attributes
(``tiling_attrs``), the arguments after the tiling data (``kernel_args``), the
output shapes and dtypes, and a NumPy implementation for the CPU fallback
(``cpu``, the kernels' ``reference`` functions where they exist).  The ops
are registered in :mod:`npuemu.ops.registry` when this module is imported;
:data:`LIBRARY` maps each op's Python name (``npuemu.ops.add``, the torch op
``torch.ops.npuemu.add``) to its definition.

What an op does differently from its kernel's host function:

* **Add** (``y = x1 + alpha * x2``) runs the elementwise template with an
  ``axpy`` step (``kernels/axpy.py``'s ``add_scaled_tile``) instead of
  ``kernels/add.py``'s ``add_kernel``, which has no alpha: one binary per
  column then serves every alpha, and alpha = 1 gives ``add_kernel``'s bits
  (``x2 * 1`` is exact, then one rounding of the sum).  alpha != 1 rounds the
  product to the tensor dtype first, as ``axpy`` does.
* **RmsNorm** runs ``kernels/rmsnorm.py``'s ``rmsnorm_kernel`` (inputs x,
  gamma), **MatMul** ``kernels/matmul.py``'s ``matmul_op_kernel`` (fixpipe's
  conversion follows the output dtype) and **Linear** ``kernels/linear.py``'s
  ``linear_op_kernel`` with ``linear_tiling`` (the vector chunk travels in
  the tiling data): an op's launch passes only what its attributes decide.
* **MatMul** and **Linear** take B as the kernels read a 16- or 32-bit B
  (``[K, N]``, or ``[N, K]`` with ``trans_b``); the host function's int8
  path, which transposes B, is not an op here.
* **Cast** runs ``kernels/cast.py``'s ``cast_op_kernel``, which rounds to
  nearest even (``CAST_NONE`` into float32, ``CAST_RINT`` otherwise); its
  ``dtype`` attribute only names the output dtype, which selects the column.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

import npuemu.asc as asc
from npuemu.errors import UsageError
from npuemu.language import dtype as dt
from npuemu.kernels._cube import matmul_reference
from npuemu.kernels._elementwise import binary_kernel, unary_kernel
from npuemu.kernels.axpy import add_scaled_tile
from npuemu.kernels.cast import cast_op_kernel
from npuemu.kernels.gelu import gelu_tile
from npuemu.kernels.gelu import reference as gelu_reference
from npuemu.kernels.leaky_relu import leaky_relu_tile
from npuemu.kernels.linear import linear_op_kernel, linear_tiling
from npuemu.kernels.linear import reference as linear_reference
from npuemu.kernels.matmul import matmul_op_kernel
from npuemu.kernels.mul import mul_tile
from npuemu.kernels.reduce_sum import reduce_sum_kernel
from npuemu.kernels.relu import relu_tile
from npuemu.kernels.rmsnorm import rmsnorm_kernel
from npuemu.kernels._norm import norm_kernel
from npuemu.kernels.softmax import softmax_kernel
from npuemu.tiling.elementwise import elementwise_tiling
from npuemu.tiling.matmul import matmul_tiling
from npuemu.tiling.rows import row_tiling

from . import registry
from .opdef import Attr, Input, OpDef, Output

FLOATS = ("float32", "float16", "bfloat16")
Shapes = Sequence[Any]


def _fail(op: str, message: str) -> None:
    raise UsageError(f"op {op}: {message}")


# ----------------------------------------------------------------------------- shape and dtype inference


def same_shape(shapes: Shapes, attrs: dict[str, Any]) -> list[tuple[int, ...]]:
    """One output shaped like the first input."""
    return [tuple(shapes[0])]


def broadcast_shape(shapes: Shapes, attrs: dict[str, Any]) -> list[tuple[int, ...]]:
    """NumPy's broadcast of the inputs (the kernels take equal shapes: a caller broadcasts before launching)."""
    try:
        return [tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))]
    except ValueError:
        raise UsageError(f"shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast") from None


def _row_params(op: str) -> Callable[[Shapes, dict[str, Any]], list[tuple[int, ...]]]:
    """Shape inference of a norm: x ``[..., cols]`` and per-column parameters ``[cols]``."""
    def infer(shapes: Shapes, attrs: dict[str, Any]) -> list[tuple[int, ...]]:
        x = tuple(shapes[0])
        if not x:
            _fail(op, "x needs at least one dimension")
        for s in shapes[1:]:
            if tuple(s) != x[-1:]:
                _fail(op, f"gamma and beta must have x's last dimension ({x[-1]}), got {list(s)}")
        return [x]
    infer.__name__ = f"{op.lower()}_shape"
    return infer


def row_sum_shape(shapes: Shapes, attrs: dict[str, Any]) -> list[tuple[int, ...]]:
    """ReduceSum over the last axis: ``[...]``, or ``[..., 1]`` with ``keep_dims``."""
    x = tuple(shapes[0])
    if not x:
        _fail("ReduceSum", "x needs at least one dimension")
    return [x[:-1] + ((1,) if attrs.get("keep_dims") else ())]


def _mnk(op: str, a: tuple[int, ...], b: tuple[int, ...], trans_b: bool) -> tuple[int, int, int]:
    if len(a) != 2 or len(b) != 2:
        _fail(op, f"x1 and x2 must be 2-D, got shapes {list(a)} and {list(b)}")
    (m, k), (n, kb) = a, (b if trans_b else b[::-1])
    if k != kb:
        _fail(op, f"K of x1 ({k}) and x2 ({kb}) differ: shapes {list(a)} and {list(b)}"
                  f"{' (x2 is [N, K] with trans_b)' if trans_b else ''}")
    return m, n, k


def matmul_shape(shapes: Shapes, attrs: dict[str, Any]) -> list[tuple[int, ...]]:
    """``[M, N]`` of ``x1 [M, K] @ x2 [K, N]`` (``x2 [N, K]`` with ``trans_b``)."""
    m, n, _ = _mnk("MatMul", tuple(shapes[0]), tuple(shapes[1]), attrs.get("trans_b", False))
    return [(m, n)]


def linear_shape(shapes: Shapes, attrs: dict[str, Any]) -> list[tuple[int, ...]]:
    """MatMul's shape; ``bias`` has N elements."""
    m, n, _ = _mnk("Linear", tuple(shapes[0]), tuple(shapes[1]), attrs.get("trans_b", False))
    if tuple(shapes[2]) != (n,):
        _fail("Linear", f"bias must have N = {n} elements, got shape {list(shapes[2])}")
    return [(m, n)]


def first_dtype(dtypes: Sequence[str], attrs: dict[str, Any]) -> list[str]:
    """One output of the first input's dtype."""
    return [dtypes[0]]


def cast_dtype(dtypes: Sequence[str], attrs: dict[str, Any]) -> list[str]:
    """Cast's output has the dtype its ``dtype`` attribute names."""
    return [attrs["dtype"]]


# ----------------------------------------------------------------------------- tiling attributes


def elementwise_attrs(scratch_f32: int) -> Callable[..., dict[str, Any]]:
    """What ``launch_elementwise(..., scratch_f32=n)`` passes: float32 scratch per element for 16-bit dtypes."""
    def attrs(inputs: Sequence[Any], op_attrs: dict[str, Any]) -> dict[str, Any]:
        wide = inputs[0].itemsize == 2         # bfloat16 (and float16 for gelu) compute in float32 scratch
        return {"scratch_bytes_per_element": 4 * scratch_f32 if wide else 0, "widen": False}
    attrs.__name__ = f"elementwise_attrs_{scratch_f32}"
    return attrs


def _row_attrs(scratch_per_col: Callable[[Any], int], fixed: int, split: bool = False) -> Callable[..., dict]:
    """What the row kernels' host functions pass to ``row_tiling`` (UB budget per tile element and column)."""
    def attrs(inputs: Sequence[Any], op_attrs: dict[str, Any]) -> dict[str, Any]:
        x = inputs[0]
        out = {"tile_bytes_per_element": 2 * x.itemsize, "scratch_bytes_per_col": scratch_per_col(x),
               "fixed_bytes": fixed}
        if split:
            out["split_cols"] = True
        return out
    return attrs


softmax_attrs = _row_attrs(lambda x: 8, 96)                   # two float32 work rows, 32-byte temporaries
norm_attrs = _row_attrs(lambda x: 24, 96)                     # six float32 work rows
reduce_sum_attrs = _row_attrs(lambda x: 8 if x.dtype == "bfloat16" else x.itemsize, 256, split=True)


def linear_attrs(inputs: Sequence[Any], op_attrs: dict[str, Any]) -> dict[str, Any]:
    """The cube side keeps float32 sums in the workspace for the vector side."""
    return {"workspace_c_bytes": 4}


# ----------------------------------------------------------------------------- NumPy implementations


def host_dtype(name: str) -> np.dtype:
    """The NumPy dtype of an op dtype name (bfloat16: ml_dtypes')."""
    try:
        host = dt.by_name(name).host
    except (KeyError, ValueError, TypeError):
        host = None
    if host is None:
        raise UsageError(f"data type {name!r} has no NumPy equivalent")
    return np.dtype(host)


def _bf16(a: np.ndarray) -> bool:
    return a.dtype.name == "bfloat16"


def _elementwise_cpu(f: Callable[..., np.ndarray], *arrays: np.ndarray) -> np.ndarray:
    """``f`` in the inputs' dtype, bfloat16 computed in float32 and rounded once (as the kernels do)."""
    if any(_bf16(a) for a in arrays):
        out_dtype = arrays[0].dtype
        return np.asarray(f(*(a.astype(np.float32) for a in arrays)), np.float32).astype(out_dtype)
    return np.asarray(f(*arrays))


def _scalar(a: np.ndarray, value: float) -> Any:
    """A scalar attribute in the tensor's dtype (the vector unit converts it first)."""
    return a.dtype.type(value)


def add_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    alpha = attrs["alpha"]
    if alpha == 1:
        return (_elementwise_cpu(lambda a, b: a + b, *inputs),)
    return (_elementwise_cpu(lambda a, b: a + b * _scalar(b, alpha), *inputs),)      # axpy: two roundings


def mul_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    return (_elementwise_cpu(lambda a, b: a * b, *inputs),)


def relu_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    return (_elementwise_cpu(lambda a: np.maximum(a, np.zeros((), a.dtype)), *inputs),)


def leaky_relu_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    return (_elementwise_cpu(lambda a: np.where(a >= 0, a, a * _scalar(a, attrs["alpha"])), *inputs),)


def gelu_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    return (gelu_reference(inputs[0]),)


def cast_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    """Round to nearest even; to an integer type NaN becomes 0 and values saturate (the kernel's cast)."""
    x, target = inputs[0], host_dtype(attrs["dtype"])
    if target.kind in "iu":
        info = np.iinfo(target)
        wide = np.rint(np.nan_to_num(x.astype(np.float64), nan=0.0, posinf=info.max, neginf=info.min))
        return (np.clip(wide, info.min, info.max).astype(target),)
    if _bf16(x) or target.name == "bfloat16":
        return (x.astype(np.float32).astype(target),)         # exact widening, then one rounding
    return (x.astype(target),)


def _rows(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float64).reshape(-1, x.shape[-1])


def softmax_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    x = inputs[0]
    a = _rows(x)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return ((e / e.sum(axis=1, keepdims=True)).reshape(x.shape).astype(x.dtype),)


def layernorm_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    x, gamma, beta = inputs
    a = _rows(x)
    mean = a.mean(axis=1, keepdims=True)
    var = ((a - mean) ** 2).mean(axis=1, keepdims=True)
    r = (a - mean) / np.sqrt(var + attrs["eps"]) * gamma.astype(np.float64) + beta.astype(np.float64)
    return (r.reshape(x.shape).astype(x.dtype),)


def rmsnorm_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    x, gamma = inputs
    a = _rows(x)
    r = a / np.sqrt((a * a).mean(axis=1, keepdims=True) + attrs["eps"]) * gamma.astype(np.float64)
    return (r.reshape(x.shape).astype(x.dtype),)


def reduce_sum_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    x = inputs[0]
    wide = x.sum(axis=-1, dtype=x.dtype) if x.dtype.kind in "iub" else x.astype(np.float64).sum(axis=-1)
    return (np.asarray(wide, dtype=x.dtype).reshape(row_sum_shape([x.shape], attrs)[0]),)


def _product(a: np.ndarray, b: np.ndarray, trans_b: bool) -> np.ndarray:
    """float32 products (float64 for float64 inputs) rounded once to ``a``'s dtype (what fixpipe does)."""
    if a.dtype == np.float64 or b.dtype == np.float64:
        return a.astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
    return matmul_reference(a, b, trans_b)


def matmul_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    return (_product(inputs[0], inputs[1], attrs["trans_b"]),)


def linear_cpu(inputs: Sequence[np.ndarray], attrs: dict[str, Any]) -> tuple[np.ndarray]:
    x, w, bias = inputs
    linear_kernel_args(attrs)                   # the activation is checked as for a launch
    return (linear_reference(x, w, bias, attrs["activation"], attrs["alpha"], attrs["trans_b"]),)


# ----------------------------------------------------------------------------- the ops


def _elementwise(name: str, n_inputs: int, kernel: Any, tile: Any, *, alpha: str | None = None,
                 widen_half: bool = False, scratch_f32: int, cpu: Callable[..., Any],
                 attrs: Sequence[Attr] = ()) -> OpDef:
    """An op on ``kernels/_elementwise.py``'s template: ``kernel(*inputs, y, tiling, alpha, tile, widen_half)``."""
    names = ["x"] if n_inputs == 1 else ["x1", "x2"]
    inputs = [Input(names[0], dtype=FLOATS)] + [Input(n, follow=names[0]) for n in names[1:]]

    def kernel_args(op_attrs: dict[str, Any]) -> tuple[Any, ...]:
        return (float(op_attrs[alpha]) if alpha else 0.0, tile, widen_half)
    kernel_args.__name__ = f"{name.lower()}_kernel_args"
    return OpDef(name, inputs=inputs, outputs=[Output("y", follow=names[0])], attrs=attrs, kernel=kernel,
                 tiling=elementwise_tiling, tiling_attrs=elementwise_attrs(scratch_f32), kernel_args=kernel_args,
                 infer_shape=broadcast_shape if n_inputs > 1 else same_shape, infer_dtype=first_dtype, cpu=cpu)


ADD = _elementwise("Add", 2, binary_kernel, add_scaled_tile, alpha="alpha", scratch_f32=3, cpu=add_cpu,
                   attrs=[Attr("alpha", "float", default=1.0)])
MUL = _elementwise("Mul", 2, binary_kernel, mul_tile, scratch_f32=3, cpu=mul_cpu)
RELU = _elementwise("Relu", 1, unary_kernel, relu_tile, scratch_f32=2, cpu=relu_cpu)
GELU = _elementwise("Gelu", 1, unary_kernel, gelu_tile, widen_half=True, scratch_f32=2, cpu=gelu_cpu)
LEAKY_RELU = _elementwise("LeakyRelu", 1, unary_kernel, leaky_relu_tile, alpha="alpha", scratch_f32=2,
                          cpu=leaky_relu_cpu, attrs=[Attr("alpha", "float", default=0.01)])

# (source, destination) pairs the cast kernel is tested with, one column each
CAST_PAIRS = (("float32", "float16"), ("float16", "float32"), ("float32", "bfloat16"), ("bfloat16", "float32"),
              ("float32", "int32"), ("int32", "float32"))


CAST = OpDef("Cast", inputs=[Input("x", dtype=[s for s, _ in CAST_PAIRS])],
             outputs=[Output("y", dtype=[d for _, d in CAST_PAIRS])], attrs=[Attr("dtype", "str")],
             kernel=cast_op_kernel, tiling=elementwise_tiling, tiling_attrs=elementwise_attrs(0),
             infer_shape=same_shape, infer_dtype=cast_dtype, cpu=cast_cpu)

SOFTMAX = OpDef("Softmax", inputs=[Input("x", dtype=FLOATS)], outputs=[Output("y", follow="x")],
                kernel=softmax_kernel, tiling=row_tiling, tiling_attrs=softmax_attrs, infer_shape=same_shape,
                infer_dtype=first_dtype, cpu=softmax_cpu)

def centred(attrs: dict[str, Any]) -> tuple[Any, ...]:
    return (True,)                      # norm_kernel's ``center``: LayerNorm subtracts the mean


LAYERNORM = OpDef("LayerNorm", inputs=[Input("x", dtype=FLOATS), Input("gamma", follow="x"),
                                       Input("beta", follow="x")],
                  outputs=[Output("y", follow="x")], attrs=[Attr("eps", "float", default=1e-5)],
                  kernel=norm_kernel, tiling=row_tiling, tiling_attrs=norm_attrs, kernel_args=centred,
                  infer_shape=_row_params("LayerNorm"), infer_dtype=first_dtype, cpu=layernorm_cpu)

RMSNORM = OpDef("RmsNorm", inputs=[Input("x", dtype=FLOATS), Input("gamma", follow="x")],
                outputs=[Output("y", follow="x")], attrs=[Attr("eps", "float", default=1e-6)],
                kernel=rmsnorm_kernel, tiling=row_tiling, tiling_attrs=norm_attrs,
                infer_shape=_row_params("RmsNorm"), infer_dtype=first_dtype, cpu=rmsnorm_cpu)

REDUCE_SUM = OpDef("ReduceSum", inputs=[Input("x", dtype=FLOATS)], outputs=[Output("y", follow="x")],
                   attrs=[Attr("keep_dims", "bool", default=False)], kernel=reduce_sum_kernel, tiling=row_tiling,
                   tiling_attrs=reduce_sum_attrs, infer_shape=row_sum_shape, infer_dtype=first_dtype,
                   cpu=reduce_sum_cpu)

# trans_b is a ConstExpr of the kernels: binaries are built for both values (the key carries it)
TRANS_B = Attr("trans_b", "bool", default=False, binary_values=(False, True))

def matmul_kernel_args(attrs: dict[str, Any]) -> tuple[Any, ...]:
    return (bool(attrs["trans_b"]),)


MATMUL = OpDef("MatMul", inputs=[Input("x1", dtype=FLOATS), Input("x2", follow="x1")],
               outputs=[Output("y", follow="x1")], attrs=[TRANS_B], kernel=matmul_op_kernel, tiling=matmul_tiling,
               kernel_args=matmul_kernel_args, infer_shape=matmul_shape, infer_dtype=first_dtype,
               cpu=matmul_cpu)

ACTIVATIONS = {"gelu": gelu_tile, "leaky_relu": leaky_relu_tile}

def linear_kernel_args(attrs: dict[str, Any]) -> tuple[Any, ...]:
    if attrs["activation"] not in ACTIVATIONS:
        _fail("Linear", f"activation must be one of {', '.join(ACTIVATIONS)}, got {attrs['activation']!r}")
    return (bool(attrs["trans_b"]), ACTIVATIONS[attrs["activation"]], float(attrs["alpha"]))


LINEAR = OpDef("Linear", inputs=[Input("x", dtype=FLOATS), Input("w", follow="x"), Input("bias", follow="x")],
               outputs=[Output("y", follow="x")],
               attrs=[Attr("activation", "str", default="gelu", binary_values=tuple(ACTIVATIONS)),
                      Attr("alpha", "float", default=0.01), TRANS_B],
               kernel=linear_op_kernel, tiling=linear_tiling, tiling_attrs=linear_attrs,
               kernel_args=linear_kernel_args,
               workspace_dtype=asc.float32, infer_shape=linear_shape, infer_dtype=first_dtype, cpu=linear_cpu)

#: Python name -> op: ``npuemu.ops.<name>`` and ``torch.ops.npuemu.<name>``
LIBRARY: dict[str, OpDef] = {
    "add": ADD, "mul": MUL, "cast": CAST, "relu": RELU, "gelu": GELU, "leaky_relu": LEAKY_RELU,
    "softmax": SOFTMAX, "layernorm": LAYERNORM, "rmsnorm": RMSNORM, "reduce_sum": REDUCE_SUM,
    "matmul": MATMUL, "linear": LINEAR,
}

for _op in LIBRARY.values():
    registry.register(_op)

__all__ = ["LIBRARY", "FLOATS", "CAST_PAIRS", "ACTIVATIONS", "host_dtype", "ADD", "MUL", "CAST", "RELU", "GELU", "LEAKY_RELU", "SOFTMAX", "LAYERNORM", "RMSNORM", "REDUCE_SUM", "MATMUL",
    "LINEAR"]
