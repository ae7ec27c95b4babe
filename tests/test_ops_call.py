"""One-line op calls (npuemu.ops.call), the CPU fallback, the registry and the aclnn-style names."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import npuemu
import npuemu.ops as ops
from npuemu.ops import aclnn, library, registry
from npuemu.ops.functions import OpFallbackWarning, reset_fallback_warnings, set_fallback
from npuemu.ops.codes import OpDefError
from npuemu.ops.executor import ExecutorStateError
from npuemu.ops.opdef import Input, OpDef, Output
from npuemu.ops.select import SelectionError

PLATFORM = "Ascend910B1"


@pytest.fixture(autouse=True)
def _fresh_fallback(monkeypatch):
    monkeypatch.delenv("NPUEMU_OP_FALLBACK", raising=False)
    reset_fallback_warnings()
    yield
    set_fallback(None)
    reset_fallback_warnings()


def _f16(rng, *shape):
    return rng.standard_normal(shape).astype(np.float16)


def test_a_call_broadcasts_and_matches_numpy(rng):
    x, y = _f16(rng, 5, 1), _f16(rng, 40)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpFallbackWarning)       # float16 has a binary: no fallback
        z = ops.add(x, y, alpha=-2.0, platform=PLATFORM)
    want = (x.astype(np.float32) + (np.float16(-2.0) * y).astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(z, want)


def test_by_name_and_into_out(rng):
    x = _f16(rng, 3, 33)
    out = np.zeros_like(x)
    got = ops.call("Relu", x, out=out, platform=PLATFORM)
    assert got is out
    np.testing.assert_array_equal(out, np.maximum(x, np.float16(0)))


def test_an_unknown_name_lists_the_registered_ops():
    with pytest.raises(OpDefError, match=r"no op named 'Addd'; registered ops: .*Add, Cast"):
        ops.call("Addd", np.zeros(4, np.float32))


def test_without_a_binary_the_op_runs_on_the_cpu_and_warns_once_per_combination(rng):
    x, y = rng.standard_normal(20), rng.standard_normal(20)           # float64: no column of Add
    with pytest.warns(OpFallbackWarning, match=r"op Add has no binary for x1=float64/ND, x2=float64/ND"):
        z = ops.add(x, y, alpha=3.0, platform=PLATFORM)
    np.testing.assert_array_equal(z, x + 3.0 * y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OpFallbackWarning)
        np.testing.assert_array_equal(ops.add(y, x, platform=PLATFORM), y + x)     # warned already
    with pytest.warns(OpFallbackWarning, match="int64"):                        # a new combination warns
        ops.relu(np.arange(-3, 3), platform=PLATFORM)


def test_a_fallback_switched_off_is_the_selection_error(rng, monkeypatch):
    x = rng.standard_normal(8)
    set_fallback(False)
    with pytest.raises(SelectionError, match=r"(?s)op Add does not support x1=float64/ND.*supported: "
                                             r"x1=float32/ND"):
        ops.add(x, x, platform=PLATFORM)
    set_fallback(None)
    monkeypatch.setenv("NPUEMU_OP_FALLBACK", "0")
    with pytest.raises(SelectionError):
        ops.add(x, x, platform=PLATFORM)


def test_an_op_without_a_cpu_implementation_never_falls_back():
    op = OpDef("NoCpu", inputs=[Input("x", dtype=["float32"])], outputs=[Output("y", follow="x")],
               kernel=library.RELU.kernel, tiling=library.RELU.tiling)
    with pytest.raises(SelectionError):
        ops.call(op, np.zeros(4), platform=PLATFORM)


def test_the_registry_refuses_a_second_op_of_one_name():
    op = OpDef("Relu", inputs=[Input("x", dtype=["float32"])], outputs=[Output("y", follow="x")])
    with pytest.raises(OpDefError, match="an op named 'Relu' is already registered"):
        registry.register(op)
    assert registry.register(library.RELU) is library.RELU          # the same op again: nothing happens
    mine = OpDef("MyRelu", inputs=[Input("x", dtype=["float32"])], outputs=[Output("y", follow="x")])
    try:
        registry.register(mine)
        assert registry.get("MyRelu") is mine and "MyRelu" in registry.names()
    finally:
        registry.unregister("MyRelu")
    assert "MyRelu" not in registry.names()


def test_aclnn_two_phases_on_a_stream(rng):
    x, y = _f16(rng, 4, 40), _f16(rng, 4, 40)
    z = np.empty_like(x)
    size, executor = aclnn.mul_get_workspace_size(x, y, out=z, platform=PLATFORM)
    stream = npuemu.Stream()
    aclnn.mul(np.empty(max(size, 1), np.uint8), size, executor, stream)
    stream.synchronize()
    np.testing.assert_array_equal(z, x * y)
    size, executor = aclnn.relu_get_workspace_size(x, platform=PLATFORM)
    with pytest.raises(ExecutorStateError, match="prepared for op Relu, not Mul"):
        aclnn.mul(None, size, executor, None)
    assert {f"{n}_get_workspace_size" for n in library.LIBRARY} <= set(aclnn.FUNCTIONS)
