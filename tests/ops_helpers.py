"""Ops for the executor and graph tests, built on the bundled elementwise kernels, and a recording launcher.

``Launcher`` has ``npuemu.ops.run.run_op``'s signature and launches through
``npuemu.host.run_op`` (tiling cache included), queuing on the stream when
asked not to wait; it records each call so tests can see what phase two
launched.  The tests share these OpDefs, so each kernel is built once per
dtype for the whole run.
"""
from __future__ import annotations

from typing import Any

import npuemu.asc as asc
from npuemu.host import run_op as host_run_op
from npuemu.host.run import DEFAULT_CACHE, tensor_desc
from npuemu.kernels._elementwise import binary_kernel, unary_kernel
from npuemu.kernels.add import add_kernel
from npuemu.kernels.cast import cast_kernel
from npuemu.kernels.mul import mul_tile
from npuemu.kernels.relu import relu_tile
from npuemu.ops.l0 import tiling_attrs
from npuemu.ops.opdef import Input, OpDef, Output
from npuemu.tiling.elementwise import elementwise_tiling

FLOATS = ["float16", "float32", "bfloat16"]


def _same_shape(shapes, attrs):
    return [shapes[0]]


def _elementwise_attrs(scratch_f32: int):
    def attrs(descs, _attrs):
        d = descs[0]
        return {"scratch_bytes_per_element": 4 * scratch_f32 if d.itemsize == 2 else 0,
                "widen": d.dtype == "bfloat16"}
    return attrs


ADD = OpDef("Add", inputs=[Input("x1", dtype=FLOATS), Input("x2", follow="x1")], outputs=[Output("y", follow="x1")],
            kernel=add_kernel, tiling=elementwise_tiling, infer_shape=_same_shape,
            tiling_attrs=_elementwise_attrs(2))
MUL = OpDef("Mul", inputs=[Input("x1", dtype=FLOATS), Input("x2", follow="x1")], outputs=[Output("y", follow="x1")],
            kernel=binary_kernel, tiling=elementwise_tiling, infer_shape=_same_shape,
            kernel_args=lambda attrs: (0.0, mul_tile, False), tiling_attrs=_elementwise_attrs(3))
RELU = OpDef("Relu", inputs=[Input("x", dtype=FLOATS)], outputs=[Output("y", follow="x")],
             kernel=unary_kernel, tiling=elementwise_tiling,
             kernel_args=lambda attrs: (0.0, relu_tile, False), tiling_attrs=_elementwise_attrs(2))
# float16 -> float32 only (exact: CAST_NONE), so the executor casts other pairs on the host
CAST = OpDef("Cast", inputs=[Input("x", dtype=["float16"])], outputs=[Output("y", dtype=["float32"])],
             kernel=cast_kernel, tiling=elementwise_tiling, infer_shape=_same_shape,
             kernel_args=lambda attrs: (asc.RoundMode.CAST_NONE,),
             tiling_attrs=_elementwise_attrs(0))


class Launcher:
    """Stands in for ``npuemu.ops.run.run_op``: launches through ``npuemu.host.run_op`` and records the calls."""

    def __init__(self, **defaults: Any):
        self.calls: list[dict[str, Any]] = []
        self.defaults = defaults

    def __call__(self, op, inputs, outputs, attrs=None, *, platform=None, stream=None, wait=True, impl_mode=None,
                 deterministic=False, workspace=None, cache=DEFAULT_CACHE, **launch):
        attrs = op.attr_values(dict(attrs or {}))
        descs = [tensor_desc(x) for x in inputs if x is not None]
        targs = tiling_attrs(op, descs, attrs)
        args = op.kernel_args(attrs) if op.kernel_args else ()
        self.calls.append(dict(op=op.name, inputs=list(inputs), outputs=list(outputs), stream=stream, wait=wait,
                               workspace=workspace, impl_mode=impl_mode, deterministic=deterministic, **launch))
        options = {**self.defaults, **launch}

        def go():
            return host_run_op(op.kernel, op.tiling, [x for x in inputs if x is not None], outputs, args=args,
                               attrs=targs, platform=platform, cache=cache, deterministic=deterministic,
                               **options)
        if stream is None:
            return go()
        stream.enqueue(go, f"op {op.name}")
        if wait:
            stream.synchronize()
        return None
