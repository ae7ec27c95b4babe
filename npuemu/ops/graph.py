"""Graph ops as ATB builds them: ops composed into one op, set up once and executed as one call.

ATB's ``GraphOpBuilder`` (seeds/002) names the graph's inputs and outputs,
adds operations between named tensors and builds one operation that
frameworks call like any other::

    g = Graph("AddMulRelu", inputs=["x", "y", "z"], outputs=["out"])
    g.add(ADD, ["x", "y"], ["sum"])
    g.add(MUL, ["sum", "z"], ["prod"])
    g.reshape("prod", "flat", lambda shape: (-1,))     # a view, no copy
    g.add(RELU, ["flat"], ["out"])
    op = g.build()

    size = op.setup([x, y, z])        # Setup: shapes node by node, tiling, one workspace plan
    out = op.execute(np.empty(size, np.uint8))          # Execute: every node, in order, as one call

A tensor named by no graph input or output is an *intermediate*: it lives in
the graph's workspace.  :meth:`GraphOp.setup` infers every node's output
shapes and dtypes from its op (``infer_shape`` / ``infer_dtype``), checks that
each node's inputs match one of its op's columns exactly (a graph has no
implicit casts: add a Cast node), tiles each node through the tiling cache,
and plans ONE workspace for the whole graph with
:class:`~npuemu.ops.workspace.MaxAllocator`, so intermediates whose
lifetimes do not overlap share bytes: the workspace of a chain is smaller
than the sum of its parts (:attr:`GraphOp.linear_workspace_size`, every
intermediate in its own bytes).  :meth:`GraphOp.execute` queues every node
on one stream (``npuemu.ops.run.run_op(..., wait=False)``) and synchronises
unless given a stream; it may run any number of times after one setup, with
the same arrays or new ones of the same shapes and dtypes.

Nodes may be added in any order that has no cycle: the build orders them
topologically (keeping the order they were added where the data allows).
Graph inputs and outputs are C-contiguous arrays (NumPy, torch CPU tensors,
``npuemu.gm_buffer``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import NpuemuError
from ..host.run import DEFAULT_CACHE
from ..runtime.stream import Stream
from .inference import (HostTensor, OpInputError, bind_inputs, check_output, choose_column, host_tensor,
                        infer_outputs, np_dtype)
from .l0 import INPUT, OUTPUT, L0Op, Launcher, Program, Slot, check_stream
from .opdef import OpDef
from .workspace import LinearAllocator, WorkspacePlan


class GraphError(NpuemuError, ValueError):
    """A graph is malformed (a tensor made twice or never, a cycle, a node's arguments), named in the message."""


Names = Sequence[Any]       # per op parameter: a tensor name, None (absent optional input), or a list of names


@dataclass(frozen=True)
class GraphNode:
    """One operation of a graph: ``op`` reads the tensors named ``inputs`` and writes those named ``outputs``."""

    op: OpDef | None
    inputs: tuple[Any, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)
    reshape: Callable[[tuple[int, ...]], Sequence[int]] | None = None     # set for a Reshape (op is None)

    @property
    def kind(self) -> str:
        return "Reshape" if self.op is None else self.op.name

    def reads(self) -> list[str]:
        out: list[str] = []
        for n in self.inputs:
            if isinstance(n, (list, tuple)):
                out.extend(n)
            elif n is not None:
                out.append(n)
        return out


class Graph:
    """A graph being built (ATB's ``GraphOpBuilder``): :meth:`add` operations, :meth:`build` the op."""

    def __init__(self, name: str, inputs: Sequence[str], outputs: Sequence[str]):
        self.name = name
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.nodes: list[GraphNode] = []
        for kind, names in (("input", self.inputs), ("output", self.outputs)):
            if len(set(names)) != len(names):
                raise GraphError(f"graph {name}: a graph {kind} is named twice in {list(names)}")
        both = set(self.inputs) & set(self.outputs)
        if both:
            raise GraphError(f"graph {name}: {sorted(both)} is both a graph input and a graph output")

    def add(self, op: OpDef, inputs: Names, outputs: Sequence[str], **attrs: Any) -> "Graph":
        """Add ``op`` reading tensors ``inputs`` (per op input) and writing ``outputs``; returns the graph."""
        where = f"graph {self.name}, node {len(self.nodes)} ({op.name})"
        if len(inputs) > len(op.inputs):
            raise GraphError(f"{where}: {len(inputs)} inputs for an op with {len(op.inputs)}")
        if len(outputs) != len(op.outputs):
            raise GraphError(f"{where}: {len(outputs)} outputs for an op with {len(op.outputs)}")
        op.attr_values(dict(attrs))                     # a wrong attribute fails here, not at setup
        ins = tuple(tuple(n) if isinstance(n, (list, tuple)) else n for n in inputs)
        self.nodes.append(GraphNode(op, ins, tuple(outputs), dict(attrs)))
        return self

    def reshape(self, src: str, dst: str, shape: Callable[[tuple[int, ...]], Sequence[int]]) -> "Graph":
        """Tensor ``dst`` is ``src`` seen with shape ``shape(src_shape)`` (``-1`` allowed): a view, no copy."""
        self.nodes.append(GraphNode(None, (src,), (dst,), {}, shape))
        return self

    def build(self) -> "GraphOp":
        """Check the graph and order its nodes; the result is set up with :meth:`GraphOp.setup`."""
        made: dict[str, int] = {}
        for i, node in enumerate(self.nodes):
            for t in node.outputs:
                if t in self.inputs:
                    raise GraphError(f"graph {self.name}: node {i} ({node.kind}) writes graph input {t!r}")
                if t in made:
                    raise GraphError(f"graph {self.name}: tensor {t!r} is written by node {made[t]} and node {i}")
                made[t] = i
        for i, node in enumerate(self.nodes):
            for t in node.reads():
                if t not in made and t not in self.inputs:
                    raise GraphError(f"graph {self.name}: node {i} ({node.kind}) reads {t!r}, which is neither a "
                                     f"graph input nor written by a node")
        missing = [t for t in self.outputs if t not in made]
        if missing:
            raise GraphError(f"graph {self.name}: no node writes graph output(s) {missing}")
        for i, node in enumerate(self.nodes):
            for t in node.outputs:
                if node.op is None and t in self.outputs:
                    raise GraphError(f"graph {self.name}: graph output {t!r} is a reshape of another tensor; "
                                     f"let an op write it")
        return GraphOp(self.name, self.inputs, self.outputs, _topological(self.name, self.nodes, made))


def _topological(name: str, nodes: list[GraphNode], made: dict[str, int]) -> list[GraphNode]:
    """Kahn's order, taking the earliest added node that is ready each time."""
    needs = [{made[t] for t in n.reads() if t in made} for n in nodes]
    done: set[int] = set()
    order: list[GraphNode] = []
    while len(order) < len(nodes):
        ready = next((i for i in range(len(nodes)) if i not in done and needs[i] <= done), None)
        if ready is None:
            stuck = sorted({t for i in range(len(nodes)) if i not in done for t in nodes[i].outputs})
            raise GraphError(f"graph {name}: the nodes writing {stuck} depend on each other (a cycle)")
        done.add(ready)
        order.append(nodes[ready])
    return order


def _phantom(shape: Sequence[int], dtype: str) -> HostTensor:
    """An intermediate as shape inference and column choice see it: shape and dtype, no memory."""
    return HostTensor(np.broadcast_to(np.empty((), np_dtype(dtype)), tuple(shape)))


class GraphOp:
    """A built graph: :meth:`setup` once per set of shapes, :meth:`execute` as often as wanted."""

    def __init__(self, name: str, inputs: tuple[str, ...], outputs: tuple[str, ...], nodes: list[GraphNode]):
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.nodes = nodes
        self.program: Program | None = None
        self.tensors: dict[str, tuple[tuple[int, ...], str]] = {}     # name -> (shape, dtype) after setup
        self.host_time = 0.0
        self.output_arrays: list[Any] = []
        self._slots: dict[str, Slot] = {}

    def __repr__(self) -> str:
        state = f"workspace {self.workspace_size} bytes" if self.program is not None else "not set up"
        return f"<GraphOp {self.name}: {' -> '.join(n.kind for n in self.nodes)}; {state}>"

    # ------------------------------------------------------------------ setup

    def setup(self, inputs: Sequence[Any], outputs: Sequence[Any] | None = None, *, platform: Any = None,
              deterministic: bool = False, impl_mode: str | None = None, cache: Any = DEFAULT_CACHE,
              launcher: Launcher | None = None, **launch_options: Any) -> int:
        """ATB's ``Setup``: infer, check and tile every node, plan the workspace; returns its size in bytes.

        ``outputs=None`` allocates the graph outputs (:attr:`output_arrays`).
        """
        t0 = time.perf_counter()
        ins = self._user(inputs, self.inputs, "input")
        given = None if outputs is None else self._user(outputs, self.outputs, "output")
        prog = Program(self.name, platform=platform, deterministic=deterministic, impl_mode=impl_mode, cache=cache,
                       launcher=launcher, launch_options=launch_options)
        slots: dict[str, Slot] = {}
        specs: dict[str, HostTensor] = {}
        for n, t in zip(self.inputs, ins):
            slots[n] = prog.slot(n, t.storage_shape, t.dtype, t.format, INPUT, t.origin)
            prog.bind(slots[n], t.array, t.arg)
            specs[n] = t
        allocated: list[Any] = []
        for i, node in enumerate(self.nodes):
            where = f"graph {self.name}, node {i} ({node.kind})"
            if node.op is None:
                slots[node.outputs[0]], specs[node.outputs[0]] = self._reshape(prog, node, slots, specs, where)
                continue
            bound = [None if n is None else [specs[m] for m in n] if isinstance(n, tuple) else specs[n]
                     for n in node.inputs]
            bound += [None] * (len(node.op.inputs) - len(bound))
            bind_inputs(node.op, bound)                 # required, optional and dynamic inputs as declared
            attrs = node.op.attr_values(dict(node.attrs))
            column = self._column(node.op, bound, attrs, where)
            results = []
            for j, (name, (shape, dtype)) in enumerate(zip(node.outputs, infer_outputs(node.op, bound, column,
                                                                                         attrs))):
                if shape is None:
                    raise GraphError(f"{where}: the shape of {name!r} cannot be inferred (op {node.op.name} has "
                                     f"no infer_shape)")
                if name in self.outputs:
                    k = self.outputs.index(name)
                    t = given[k] if given is not None else HostTensor(np.empty(shape, np_dtype(dtype)))
                    if given is None:
                        allocated.append((k, t.array))
                    check_output(node.op, j, t, shape, dtype)
                    if t.dtype != dtype:
                        raise GraphError(f"{where}: graph output {name!r} is {t.dtype}, the node makes {dtype}")
                    s = prog.slot(name, t.storage_shape, t.dtype, t.format, OUTPUT, t.origin)
                    prog.bind(s, t.array, t.arg)
                    specs[name] = t
                else:
                    s = prog.slot(name, shape, dtype)
                    specs[name] = _phantom(shape, dtype)
                slots[name] = s
                results.append(s)
            operands = [None if n is None else [slots[m] for m in n] if isinstance(n, tuple) else slots[n]
                        for n in node.inputs]
            prog.kernel_op(node.op, operands, results, attrs)
        prog.make_plan()
        self.program = prog
        self._slots = slots
        self.tensors = {n: (specs[n].shape, specs[n].dtype) for n in slots}
        self.output_arrays = [a for _, a in sorted(allocated)] if given is None else list(outputs or [])
        self.host_time = time.perf_counter() - t0
        return self.workspace_size

    def _user(self, values: Sequence[Any], names: tuple[str, ...], kind: str) -> list[HostTensor]:
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        if len(values) != len(names):
            raise OpInputError(f"graph {self.name} has {len(names)} {kind}(s) ({', '.join(names)}), "
                               f"got {len(values)}")
        out = []
        for n, v in zip(names, values):
            t = host_tensor(v, f"graph {self.name}: {kind} {n!r}")
            if not t.contiguous:
                raise OpInputError(f"graph {self.name}: {kind} {n!r} must be C-contiguous (graph ops take their "
                                   f"tensors as they are stored; np.ascontiguousarray makes a copy)")
            out.append(t)
        return out

    @staticmethod
    def _column(op: OpDef, bound: list[Any], attrs: dict[str, Any], where: str) -> Any:
        column = choose_column(op, bound)
        for p, b, (d, _) in zip(op.inputs, bound, column.inputs):
            for t in (b if isinstance(b, list) else [b] if b is not None else []):
                if t.dtype != d:
                    raise GraphError(f"{where}: input {p.name!r} is {t.dtype}; the op takes {d} there, and graph "
                                     f"nodes do not convert their inputs: add a Cast node")
        return column

    @staticmethod
    def _reshape(prog: Program, node: GraphNode, slots: dict[str, Slot], specs: dict[str, HostTensor],
                 where: str) -> tuple[Slot, HostTensor]:
        src = specs[node.inputs[0]]
        shape = [int(d) for d in node.reshape(src.shape)]
        known = math.prod(d for d in shape if d != -1)
        if shape.count(-1) == 1 and known and src.array.size % known == 0:
            shape[shape.index(-1)] = src.array.size // known
        if -1 in shape or math.prod(shape) != src.array.size or src.format != "ND":
            raise GraphError(f"{where}: cannot view {node.inputs[0]!r} {src.dtype}{list(src.shape)} "
                             f"({src.format}) as {list(shape)}")
        return prog.alias(slots[node.inputs[0]], node.outputs[0], shape), _phantom(shape, src.dtype)

    # ------------------------------------------------------------------ the plan

    def _program(self) -> Program:
        if self.program is None:
            raise GraphError(f"graph {self.name} is not set up: call setup(inputs) first")
        return self.program

    @property
    def workspace_size(self) -> int:
        return self._program().workspace_size

    @property
    def plan(self) -> WorkspacePlan:
        """The workspace plan (:class:`~npuemu.ops.workspace.WorkspacePlan`) of the last setup."""
        return self._program().plan

    @property
    def linear_workspace_size(self) -> int:
        """The sum of the parts: every intermediate (and kernel workspace) in bytes of its own."""
        return self._program().make_plan(LinearAllocator()).size

    @property
    def l0_ops(self) -> list[L0Op]:
        return list(self._program().ops)

    def host_times(self) -> dict[str, float]:
        """Setup's host seconds per node; :attr:`host_time` is the whole setup."""
        return self._program().host_times()

    def device_times(self) -> dict[str, float | None]:
        """Modelled device seconds per node (None until a model is installed: ``set_device_time_model``)."""
        return self._program().device_times()

    # ------------------------------------------------------------------ execute

    def execute(self, workspace: Any = None, stream: Stream | None = None, *, size: int | None = None,
                inputs: Sequence[Any] | None = None, outputs: Sequence[Any] | None = None) -> Any:
        """ATB's ``Execute``: run every node in order; returns the graph output(s).

        ``workspace`` must hold :attr:`workspace_size` bytes (None: allocated
        here); ``inputs`` / ``outputs`` replace the arrays of the setup (same
        shapes and dtypes).  Synchronises unless given ``stream``.
        """
        prog = self._program()
        what = f"graph {self.name}"
        stream = check_stream(stream, what)
        if inputs is not None:
            self._rebind(self._user(inputs, self.inputs, "input"), self.inputs)
        if outputs is not None:
            self._rebind(self._user(outputs, self.outputs, "output"), self.outputs)
            self.output_arrays = list(outputs)
        if workspace is None and size is None and self.workspace_size:
            workspace = np.empty(self.workspace_size, np.uint8)
        prog.launch(workspace, size, stream, what)
        return self.output_arrays[0] if len(self.output_arrays) == 1 else tuple(self.output_arrays)

    def _rebind(self, tensors: list[HostTensor], names: tuple[str, ...]) -> None:
        prog = self._program()
        for n, t in zip(names, tensors):
            s = self._slots[n]
            if (t.storage_shape, t.dtype, t.format) != (s.shape, s.dtype, s.format):
                raise OpInputError(f"graph {self.name}: {n!r} is {t.dtype}{list(t.storage_shape)} ({t.format}); "
                                   f"it was set up as {s.dtype}{list(s.shape)} ({s.format}): call setup again")
            prog.bind(s, t.array, t.arg)

    def __call__(self, *inputs: Any, out: Any = None, stream: Stream | None = None, **options: Any) -> Any:
        """Set up (again when the shapes changed) and execute: ``op(x, y, z)``."""
        ins = list(inputs)
        outs = None if out is None else (list(out) if isinstance(out, (list, tuple)) else [out])
        if self.program is None or not self._same_shapes(ins, outs) or options:
            self.setup(ins, outs, **options)
            return self.execute(stream=stream)
        if outs is None:        # fresh outputs, so an earlier call's results stay as they were
            outs = [np.empty(self._slots[n].shape, np_dtype(self._slots[n].dtype)) for n in self.outputs]
        return self.execute(stream=stream, inputs=ins, outputs=outs)

    def _same_shapes(self, ins: list[Any], outs: list[Any] | None) -> bool:
        pairs = list(zip(self.inputs, ins)) + (list(zip(self.outputs, outs)) if outs is not None else [])
        try:
            tensors = [(n, host_tensor(v, n)) for n, v in pairs]
        except OpInputError:
            return False
        return len(ins) == len(self.inputs) and all(
            (t.storage_shape, t.dtype) == (self._slots[n].shape, self._slots[n].dtype) for n, t in tensors)


__all__ = ["Graph", "GraphOp", "GraphNode", "GraphError"]
