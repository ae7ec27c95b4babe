"""The two-phase op API: L0 graphs (Contiguous, Cast, the op, ViewCopy), workspace, streams, and every misuse."""
from __future__ import annotations

import numpy as np
import pytest
from ops_helpers import ADD, CAST, MUL, RELU, Launcher

import npuemu
from npuemu.host import TilingCache
from npuemu.ops.executor import (ExecutorStateError, StreamTypeError, WorkspaceError, destroy_executor,
                                 get_workspace_size, prepare, run, set_repeatable)
from npuemu.ops.inference import OpInputError, bind_inputs, choose_column
from npuemu.ops.l0 import set_device_time_model
from npuemu.ops.opdef import Input, OpDef, Output
from npuemu.ops.workspace import LinearAllocator

N = 64


@pytest.fixture
def launcher():
    return Launcher()


def _kinds(ex):
    return [(n.kind, n.on_host) for n in ex.l0_ops]


def test_phase_two_queues_on_the_stream_and_the_caller_synchronises(rng, launcher):
    x, y = rng.standard_normal((2, N)).astype(np.float32)
    z = np.zeros(N, np.float32)
    size, ex = get_workspace_size(ADD, [x, y], [z], launcher=launcher)
    assert size == 0 and _kinds(ex) == [("Add", False)]
    stream = npuemu.Stream()
    run(None, size, ex, stream)
    assert stream.pending == 1 and not z.any()              # queued, not run
    assert launcher.calls[0]["stream"] is stream and launcher.calls[0]["wait"] is False
    assert launcher.calls[0]["outputs"][0] is z             # a contiguous output is written in place
    stream.synchronize()
    np.testing.assert_array_equal(z, x + y)


def test_strided_promoted_inputs_and_a_strided_output_of_another_dtype(rng, launcher):
    xs = rng.standard_normal(2 * N).astype(np.float16)
    y = rng.standard_normal(N).astype(np.float32)
    out = np.zeros((N, 2), np.float16)
    size, ex = get_workspace_size(ADD, [xs[::2], y], [out[:, 0]], launcher=launcher)
    assert _kinds(ex) == [("Contiguous", True), ("Cast", True), ("Add", False), ("Cast", True),
                          ("ViewCopy", True)]
    assert [c.inputs[0][0] for c in [choose_column(ADD, bind_inputs(ADD, [xs[::2], y]))]] == ["float32"]
    # x1.contiguous [0,1] and y.result [2,3] share a bucket, x1.cast [1,2] and y.cast [3,4] the other
    plan = ex.plan
    assert plan.offsets == {"x1.contiguous": 0, "x1.cast": 512, "y.result": 0, "y.cast": 512}
    assert size == 1024 < ex.program.make_plan(LinearAllocator()).size == 2048
    plan.check()
    ws = np.empty(size, np.uint8)
    stream = npuemu.Stream()
    run(ws, size, ex, stream)
    stream.synchronize()
    np.testing.assert_array_equal(out[:, 0], (xs[::2].astype(np.float32) + y).astype(np.float16))
    assert not out[:, 1].any()                              # ViewCopy wrote only the view


def test_prepare_allocates_outputs_and_run_synchronises(rng, launcher):
    x, y = rng.standard_normal((2, 4, 16)).astype(np.float32)
    ex = prepare(MUL, x, y, launcher=launcher)
    assert ex.outputs[0].shape == (4, 16) and ex.outputs[0].dtype == np.float32
    z = ex.run()
    assert z is ex.outputs[0]
    np.testing.assert_array_equal(z, x * y)


def test_phase_one_tiles_through_the_tiling_cache(rng, launcher):
    cache = TilingCache(4)
    x = rng.standard_normal(N).astype(np.float32)
    ex = prepare(RELU, x, cache=cache, launcher=launcher)
    assert (cache.misses, cache.hits) == (1, 0)
    assert ex.l0_ops[0].tiling is not None and ex.l0_ops[0].tiling.block_dim >= 1
    np.testing.assert_array_equal(ex.run(), np.maximum(x, 0))
    assert (cache.misses, cache.hits) == (1, 1)             # the launch found phase one's tiling


def test_ops_on_one_stream_run_in_order_host_copies_included(rng, launcher):
    x, y = rng.standard_normal((2, 2 * N)).astype(np.float32)
    z = np.zeros(2 * N, np.float32)
    first = prepare(ADD, x, y, out=z, launcher=launcher)
    second = prepare(RELU, z[::2], launcher=launcher)      # a strided view of the first op's output
    assert _kinds(second) == [("Contiguous", True), ("Relu", False)]
    stream = npuemu.Stream()
    first.run(stream=stream)
    ws = np.empty(second.workspace_size, np.uint8)
    run(ws, second.workspace_size, second, stream)
    assert stream.pending == 3
    stream.synchronize()
    np.testing.assert_array_equal(second.outputs[0], np.maximum((x + y)[::2], 0))


def test_cast_runs_as_a_kernel_when_a_cast_op_takes_the_pair(rng, launcher):
    x = rng.standard_normal(N).astype(np.float16)
    y = rng.standard_normal(N).astype(np.float32)
    out = np.zeros(N, np.float16)
    ex = prepare(ADD, x, y, out=out, cast_op=CAST, launcher=launcher)
    # CAST converts float16 to float32 only: the result goes back to float16 on the host
    assert _kinds(ex) == [("Cast", False), ("Add", False), ("Cast", True)]
    ex.run()
    np.testing.assert_array_equal(out, (x.astype(np.float32) + y).astype(np.float16))
    assert [c["op"] for c in launcher.calls] == ["Cast", "Add"]


def test_single_use_repeatable_and_destroyed_executors(rng, launcher):
    x, y = rng.standard_normal((2, N)).astype(np.float32)
    ex = prepare(ADD, x, y, launcher=launcher)
    ex.run()
    with pytest.raises(ExecutorStateError, match=r"op Add: this executor has already run; executors are "
                                                 r"single-use unless made repeatable"):
        ex.run()
    again = set_repeatable(prepare(ADD, x, y, launcher=launcher))
    for k in range(3):
        x += 1
        np.testing.assert_array_equal(again.run(), x + y)
    assert again.runs == 3
    destroy_executor(again)
    with pytest.raises(ExecutorStateError, match="was destroyed"):
        run(None, 0, again, None)
    with pytest.raises(ExecutorStateError, match="the executor is null"):
        run(None, 0, None, None)


def test_workspace_errors_and_a_failed_run_uses_up_a_single_use_executor(rng, launcher):
    x = rng.standard_normal(2 * N).astype(np.float32)[::2]
    size, ex = get_workspace_size(RELU, [x], None, launcher=launcher)
    assert size == 512
    with pytest.raises(WorkspaceError, match=r"op Relu: phase one asked for 512 bytes of workspace, and the "
                                             r"workspace is null"):
        run(None, size, ex, None)
    with pytest.raises(ExecutorStateError, match="has already run"):     # aclnn deletes it
        run(np.empty(size, np.uint8), size, ex, None)
    ex = prepare(RELU, x, launcher=launcher).repeatable()
    with pytest.raises(WorkspaceError, match="holds 511 bytes, phase one asked for 512"):
        run(np.empty(511, np.uint8), 512, ex, None)
    with pytest.raises(WorkspaceError, match="workspace size 100 is less than the 512 bytes"):
        run(np.empty(512, np.uint8), 100, ex, None)
    with pytest.raises(WorkspaceError, match="must be an array"):
        ex.run(workspace="buffer")
    with pytest.raises(WorkspaceError, match="one contiguous buffer"):
        ex.run(workspace=np.empty(2048, np.uint8)[::2])
    np.testing.assert_array_equal(ex.run(workspace=np.empty(512, np.float32)), np.maximum(x, 0))
    assert launcher.calls[-1]["workspace"] is None          # Relu's kernel has no workspace of its own


def test_a_wrong_stream_type_is_refused(rng, launcher):
    x = rng.standard_normal(N).astype(np.float32)
    ex = prepare(RELU, x, launcher=launcher).repeatable()
    with pytest.raises(StreamTypeError, match=r"op Relu: the stream must be an npuemu.Stream .* got str"):
        run(None, 0, ex, "stream0")
    with pytest.raises(StreamTypeError, match="got int"):
        ex.run(stream=7)
    assert not launcher.calls


def test_empty_inputs_short_circuit_with_no_workspace(launcher):
    x = np.zeros((0, 8), np.float16)
    size, ex = get_workspace_size(ADD, [x[:, ::2], np.zeros((0, 4), np.float32)], None, launcher=launcher)
    assert size == 0 and ex.l0_ops == [] and ex.outputs[0].shape == (0, 4)
    run(None, 0, ex, npuemu.Stream())
    assert not launcher.calls


def test_calls_the_op_cannot_take(rng, launcher):
    f32 = np.zeros(N, np.float32)
    with pytest.raises(OpInputError, match=r"op Add does not support x1=int32/ND, x2=float16/ND, nor a promotion"):
        prepare(ADD, np.zeros(N, np.int32), np.zeros(N, np.float16), launcher=launcher)
    with pytest.raises(OpInputError, match=r"op Add takes 2 input\(s\) \(x1, x2\), got 3"):
        prepare(ADD, f32, f32, f32, launcher=launcher)
    with pytest.raises(OpInputError, match=r"op Add: input 'x2' is required"):
        prepare(ADD, f32, launcher=launcher)
    with pytest.raises(OpInputError, match=r"output 'y' has shape \[3\], the op makes \[64\]"):
        prepare(ADD, f32, f32, out=np.zeros(3, np.float32), launcher=launcher)
    with pytest.raises(OpInputError, match=r"output 'y' is int32, and the op's float32 result cannot be cast"):
        prepare(ADD, f32, f32, out=np.zeros(N, np.int32), launcher=launcher)
    with pytest.raises(OpInputError, match=r"input 'x1' must be an array"):
        prepare(ADD, [1.0] * N, f32, launcher=launcher)
    with pytest.raises(npuemu.NpuemuError, match="has no attribute alpha"):
        prepare(RELU, f32, alpha=2.0, launcher=launcher)
    assert not launcher.calls


@pytest.mark.parametrize("dtypes, column", [
    (("float16", "float16"), "float16"),
    (("float16", "float32"), "float32"),
    (("float16", "bfloat16"), "float32"),
    (("int8", "float16"), "float16"),
    (("bfloat16", "uint8"), "bfloat16"),
])
def test_promotion_takes_the_least_column_every_input_widens_to(dtypes, column):
    from npuemu.ops.inference import np_dtype
    ins = bind_inputs(ADD, [np.zeros(4, np_dtype(d)) for d in dtypes])
    assert choose_column(ADD, ins).inputs == ((column, "ND"), (column, "ND"))


def test_host_time_per_l0_op_and_a_device_time_hook(rng, launcher):
    x = rng.standard_normal(2 * N).astype(np.float32)[::2]
    ex = prepare(RELU, x, launcher=launcher)
    times = ex.host_times()
    assert list(times) == ["0:Contiguous", "1:Relu"] and all(t >= 0 for t in times.values())
    assert ex.host_time >= sum(times.values()) > 0
    assert ex.device_times() == {"0:Contiguous": None, "1:Relu": None}
    previous = set_device_time_model(lambda op: 1e-6 * op.tiling.block_dim)
    try:
        modelled = ex.device_times()
        assert modelled["0:Contiguous"] is None and modelled["1:Relu"] == 1e-6 * ex.l0_ops[1].tiling.block_dim
    finally:
        set_device_time_model(previous)


# An op with an optional input, a dynamic input and two outputs, computed by NumPy (no kernel to build):
# the executor's binding of parameters, checked through what the launcher receives.
def _sum_and_max(inputs, attrs):
    xs, bias = inputs
    s = np.sum(xs, axis=0) + (bias if bias is not None else 0)
    return s, np.max(xs, axis=0)


SUMMAX = OpDef("SumMax", inputs=[Input("xs", dtype=["float32"], param_type="dynamic"),
                                 Input("bias", dtype=["float32"], param_type="optional")],
               outputs=[Output("s", dtype=["float32"]), Output("m", dtype=["float32"])],
               infer_shape=lambda shapes, attrs: [shapes[0][0], shapes[0][0]], cpu=_sum_and_max)


def numpy_launcher(op, inputs, outputs, attrs=None, *, stream=None, wait=True, **_):
    def go():
        for o, r in zip(outputs, op.cpu(inputs, attrs)):
            o[...] = r
    stream.enqueue(go, op.name)


def test_dynamic_and_optional_inputs_and_several_outputs(rng):
    xs = [rng.standard_normal(8).astype(np.float32) for _ in range(3)]
    s, m = prepare(SUMMAX, xs, launcher=numpy_launcher).run()
    np.testing.assert_allclose(s, xs[0] + xs[1] + xs[2], rtol=1e-6)
    np.testing.assert_array_equal(m, np.maximum(np.maximum(xs[0], xs[1]), xs[2]))
    bias = np.full(16, 2, np.float32)[::2]
    ex = prepare(SUMMAX, [xs[0], xs[1][::-1].copy()], bias, launcher=numpy_launcher)
    assert [n.kind for n in ex.l0_ops] == ["Contiguous", "SumMax"]
    s, _ = ex.run()
    np.testing.assert_allclose(s, xs[0] + xs[1][::-1] + 2, rtol=1e-6)
    with pytest.raises(OpInputError, match=r"input 'xs' is dynamic: give a non-empty list"):
        prepare(SUMMAX, xs[0], launcher=numpy_launcher)
    with pytest.raises(OpInputError, match=r"'xs'.*share one dtype and format, got float16/ND, float32/ND"):
        prepare(SUMMAX, [xs[0], xs[1].astype(np.float16)], launcher=numpy_launcher)
