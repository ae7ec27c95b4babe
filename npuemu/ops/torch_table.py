"""The torch ops of the op library, declared in one table (torch_npu's ``npu_native_functions.yaml``).

Each entry of :data:`TABLE` declares one op ``torch.ops.npuemu.<name>``:

``name``
    the torch op's name (also the op's key in :data:`npuemu.ops.library.LIBRARY`);
``schema``
    its torch schema: the OpDef's inputs as ``Tensor`` arguments in
    declaration order, then its attributes as keyword-only arguments with the
    OpDef's defaults (``float``, ``bool``, ``int``, ``str``, ``int[]``,
    ``float[]``), returning one ``Tensor`` per output;
``op``
    the npuemu op (:class:`~npuemu.ops.opdef.OpDef`) whose binaries the CPU
    implementation runs through :func:`npuemu.ops.call.call`, and whose
    ``infer_shape`` / ``infer_dtype`` give the fake (meta) implementation;
``autocast``
    what the op does under ``torch.autocast("cpu", ...)`` (:data:`AUTOCAST_POLICIES`):
    ``"fp32"`` runs in float32 (float16/bfloat16 inputs widened; the output is
    float32), ``"lower"`` runs in the autocast dtype (float32 inputs narrowed),
    ``"promote"`` runs in the widest floating dtype of the inputs, ``None``
    leaves the inputs as they are.

:func:`npuemu.ops.torch_ops.register` checks every entry against its OpDef
(arguments, defaults, attribute types) before it defines anything.
"""
from __future__ import annotations

from . import library as lib

#: autocast policies and what they do to floating inputs (float16, bfloat16, float32) under autocast
AUTOCAST_POLICIES = {
    "fp32": "cast to float32",
    "lower": "cast to the autocast dtype",
    "promote": "cast to the widest floating dtype among the inputs",
    None: "unchanged",
}

TABLE: list[dict] = [
    {"name": "add", "op": lib.ADD, "autocast": "promote",
     "schema": "add(Tensor x1, Tensor x2, *, float alpha=1.0) -> Tensor"},
    {"name": "mul", "op": lib.MUL, "autocast": "promote",
     "schema": "mul(Tensor x1, Tensor x2) -> Tensor"},
    {"name": "cast", "op": lib.CAST, "autocast": None,
     "schema": "cast(Tensor x, *, str dtype) -> Tensor"},
    {"name": "relu", "op": lib.RELU, "autocast": None,
     "schema": "relu(Tensor x) -> Tensor"},
    {"name": "gelu", "op": lib.GELU, "autocast": None,
     "schema": "gelu(Tensor x) -> Tensor"},
    {"name": "leaky_relu", "op": lib.LEAKY_RELU, "autocast": None,
     "schema": "leaky_relu(Tensor x, *, float alpha=0.01) -> Tensor"},
    {"name": "softmax", "op": lib.SOFTMAX, "autocast": "fp32",
     "schema": "softmax(Tensor x) -> Tensor"},
    {"name": "layernorm", "op": lib.LAYERNORM, "autocast": "fp32",
     "schema": "layernorm(Tensor x, Tensor gamma, Tensor beta, *, float eps=1e-05) -> Tensor"},
    {"name": "rmsnorm", "op": lib.RMSNORM, "autocast": "fp32",
     "schema": "rmsnorm(Tensor x, Tensor gamma, *, float eps=1e-06) -> Tensor"},
    {"name": "reduce_sum", "op": lib.REDUCE_SUM, "autocast": "fp32",
     "schema": "reduce_sum(Tensor x, *, bool keep_dims=False) -> Tensor"},
    {"name": "matmul", "op": lib.MATMUL, "autocast": "lower",
     "schema": "matmul(Tensor x1, Tensor x2, *, bool trans_b=False) -> Tensor"},
    {"name": "linear", "op": lib.LINEAR, "autocast": "lower",
     "schema": "linear(Tensor x, Tensor w, Tensor bias, *, str activation='gelu', float alpha=0.01, "
               "bool trans_b=False) -> Tensor"},
]

__all__ = ["TABLE", "AUTOCAST_POLICIES"]
