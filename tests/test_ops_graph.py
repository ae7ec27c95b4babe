"""Graph ops: set up once (shapes, tiling, one workspace with lifetime reuse), executed as one call."""
from __future__ import annotations

import numpy as np
import pytest
from ops_helpers import ADD, MUL, RELU, Launcher

import npuemu
from npuemu.host import TilingCache
from npuemu.ops.graph import Graph, GraphError
from npuemu.ops.inference import OpInputError
from npuemu.ops.l0 import StreamTypeError, WorkspaceError
from npuemu.ops.workspace import align

N = 1000                  # float32: 4000 bytes, 4096 once aligned


@pytest.fixture
def launcher():
    return Launcher()


def _chain():
    """out = relu((x + y) * z) + x: three intermediates, each read only by the next node."""
    g = Graph("AddMulReluAdd", inputs=["x", "y", "z"], outputs=["out"])
    g.add(ADD, ["x", "y"], ["sum"]).add(MUL, ["sum", "z"], ["prod"]).add(RELU, ["prod"], ["act"])
    g.add(ADD, ["act", "x"], ["out"])
    return g.build()


def _live_pairs_share_no_bytes(op):
    tensors, _ = op.program.lifetimes()
    for i, a in enumerate(tensors):
        for b in tensors[i + 1:]:
            if a.start <= b.end and b.start <= a.end:       # alive at one node
                a0, b0 = op.plan.offsets[a.name], op.plan.offsets[b.name]
                assert a0 + align(a.size) <= b0 or b0 + align(b.size) <= a0, (a, b)


def test_a_chain_needs_less_workspace_than_the_sum_of_its_parts(rng, launcher):
    op = _chain()
    x, y, z = rng.standard_normal((3, N)).astype(np.float32)
    size = op.setup([x, y, z], launcher=launcher)
    lifetimes = {t.name: (t.start, t.end) for t in op.program.lifetimes()[0]}
    assert lifetimes == {"sum": (0, 1), "prod": (1, 2), "act": (2, 3)}
    # act starts after sum's last reader: it takes sum's bytes; prod overlaps both
    assert op.plan.offsets == {"sum": 0, "prod": 4096, "act": 0}
    assert size == 2 * 4096 < op.linear_workspace_size == 3 * 4096
    op.plan.check()
    _live_pairs_share_no_bytes(op)
    out = op.execute(np.empty(size, np.uint8))
    np.testing.assert_array_equal(out, np.maximum((x + y) * z, 0) + x)
    assert [c["op"] for c in launcher.calls] == ["Add", "Mul", "Relu", "Add"]
    assert all(c["wait"] is False for c in launcher.calls)


def test_set_up_once_executed_many_times_on_a_stream(rng, launcher):
    op = _chain()
    cache = TilingCache(8)
    x, y, z = rng.standard_normal((3, N)).astype(np.float32)
    out = np.zeros(N, np.float32)
    size = op.setup([x, y, z], [out], cache=cache, launcher=launcher)
    # Add and Mul see the same context (two float32 inputs of one shape): one tiling for three nodes
    assert (cache.misses, cache.hits) == (2, 2)
    assert list(op.host_times()) == ["0:Add", "1:Mul", "2:Relu", "3:Add"] and op.host_time > 0
    stream = npuemu.Stream()
    ws = np.empty(size, np.uint8)
    for k in range(2):
        x2 = x + k
        op.execute(ws, stream, inputs=[x2, y, z])
        assert stream.pending == 4
        stream.synchronize()
        np.testing.assert_array_equal(out, np.maximum((x2 + y) * z, 0) + x2)
    assert (cache.misses, cache.hits) == (2, 10)            # every launch found setup's tiling


def test_nodes_in_any_order_a_diamond_and_a_reshape(rng, launcher):
    g = Graph("Diamond", inputs=["x"], outputs=["out"])
    g.add(MUL, ["a", "b"], ["out"]).add(ADD, ["a", "flat"], ["b"])      # added first, run last
    g.add(RELU, ["x"], ["r"]).reshape("r", "a", lambda shape: (-1,)).reshape("x", "flat", lambda shape: (-1,))
    op = g.build()
    assert [n.kind for n in op.nodes] == ["Relu", "Reshape", "Reshape", "Add", "Mul"]
    x = rng.standard_normal((4, 16)).astype(np.float32)
    op.setup([x], launcher=launcher)
    assert op.tensors["a"] == ((64,), "float32") and op.tensors["out"] == ((64,), "float32")
    # a is r's bytes, alive until the last node; b overlaps it: two buckets, no reshape of its own
    assert set(op.plan.offsets) == {"r", "b"} and op.plan.offsets["r"] != op.plan.offsets["b"]
    _live_pairs_share_no_bytes(op)
    r = np.maximum(x, 0).reshape(-1)
    np.testing.assert_array_equal(op.execute(), r * (r + x.reshape(-1)))


def test_calling_the_graph_op_sets_up_again_only_for_new_shapes(rng, launcher):
    op = _chain()
    a = [rng.standard_normal(N).astype(np.float32) for _ in range(3)]
    first = op(*a, launcher=launcher)
    program = op.program
    second = op(a[1], a[0], a[2])
    assert op.program is program and second is not first     # no new setup; fresh outputs
    np.testing.assert_array_equal(first, np.maximum((a[0] + a[1]) * a[2], 0) + a[0])
    np.testing.assert_array_equal(second, np.maximum((a[1] + a[0]) * a[2], 0) + a[1])
    small = [v[:64].copy() for v in a]
    np.testing.assert_array_equal(op(*small, launcher=launcher), np.maximum((small[0] + small[1]) * small[2], 0)
                                  + small[0])
    assert op.program is not program and op.workspace_size == 1024


@pytest.mark.parametrize("build, message", [
    (lambda g: g.add(RELU, ["x"], ["t"]).add(RELU, ["x"], ["t"]), r"tensor 't' is written by node 0 and node 1"),
    (lambda g: g.add(RELU, ["x"], ["x"]), r"node 0 \(Relu\) writes graph input 'x'"),
    (lambda g: g.add(RELU, ["u"], ["out"]), r"node 0 \(Relu\) reads 'u', which is neither"),
    (lambda g: g.add(RELU, ["x"], ["t"]), r"no node writes graph output\(s\) \['out'\]"),
    (lambda g: g.add(RELU, ["b"], ["a"]).add(RELU, ["a"], ["b"]).add(RELU, ["x"], ["out"]),
     r"the nodes writing \['a', 'b'\] depend on each other \(a cycle\)"),
    (lambda g: g.add(RELU, ["x", "x"], ["out"]), r"node 0 \(Relu\): 2 inputs for an op with 1"),
    (lambda g: g.add(RELU, ["x"], ["out"], alpha=1.0), r"op Relu has no attribute alpha"),
    (lambda g: g.add(RELU, ["x"], ["t"]).reshape("t", "out", lambda s: s), r"graph output 'out' is a reshape"),
])
def test_malformed_graphs(build, message):
    with pytest.raises(npuemu.NpuemuError, match=message):
        build(Graph("G", inputs=["x"], outputs=["out"])).build()


def test_setup_and_execute_refuse_what_the_graph_cannot_take(rng, launcher):
    op = _chain()
    x = rng.standard_normal(N).astype(np.float32)
    with pytest.raises(GraphError, match="not set up: call setup"):
        op.execute()
    with pytest.raises(GraphError, match=r"node 0 \(Add\): input 'x2' is float16; the op takes float32 there, "
                                         r"and graph nodes do not convert their inputs: add a Cast node"):
        op.setup([x, x.astype(np.float16), x], launcher=launcher)
    with pytest.raises(OpInputError, match=r"input 'y' must be C-contiguous"):
        op.setup([x, np.repeat(x, 2)[::2], x], launcher=launcher)
    with pytest.raises(OpInputError, match=r"graph AddMulReluAdd has 3 input\(s\) \(x, y, z\), got 2"):
        op.setup([x, x], launcher=launcher)
    with pytest.raises(OpInputError, match=r"output 'y' has shape \[3\], the op makes \[1000\]"):
        op.setup([x, x, x], [np.zeros(3, np.float32)], launcher=launcher)
    size = op.setup([x, x, x], launcher=launcher)
    with pytest.raises(OpInputError, match=r"'x' is float32\[64\] \(ND\); it was set up as float32\[1000\]"):
        op.execute(inputs=[x[:64], x, x])
    with pytest.raises(WorkspaceError, match="holds 100 bytes, phase one asked for 8192"):
        op.execute(np.empty(100, np.uint8))
    with pytest.raises(WorkspaceError, match="workspace is null"):
        op.execute(None, size=size)
    with pytest.raises(StreamTypeError, match="graph AddMulReluAdd: the stream must be an npuemu.Stream"):
        op.execute(stream=object())
    assert not launcher.calls
