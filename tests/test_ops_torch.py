"""The op library as torch custom ops (``torch.ops.npuemu.<name>``); skipped when torch is not installed."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import npuemu.ops.torch_ops as torch_ops  # noqa: E402
from npuemu.errors import NpuemuError  # noqa: E402
from npuemu.ops import functions, library  # noqa: E402
from npuemu.ops.torch_table import TABLE  # noqa: E402

torch_ops.register()
OPS = torch.ops.npuemu


def _randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(f"u{a.dtype.itemsize}")


def _numpy_path(op, inputs, attrs):
    """The same op called with NumPy arrays (bfloat16 as ml_dtypes')."""
    return functions.call(op, *[functions.to_numpy(x) for x in inputs], **attrs)


# ----------------------------------------------------------------------------- the table


def test_table_covers_the_library():
    assert [e["name"] for e in TABLE] == list(library.LIBRARY)
    assert [e["op"] for e in TABLE] == list(library.LIBRARY.values())


@pytest.mark.parametrize("entry", TABLE, ids=lambda e: e["name"])
def test_every_entry_is_a_torch_op(entry):
    overload = getattr(OPS, entry["name"]).default
    assert overload.name() == f"npuemu::{entry['name']}"
    expected = torch._C.parse_schema(f"npuemu::{entry['schema']}")
    assert str(overload._schema) == str(expected)
    assert overload.has_kernel_for_dispatch_key(torch._C.DispatchKey.CPU)
    assert overload.has_kernel_for_dispatch_key(torch._C.DispatchKey.AutocastCPU)


def test_an_entry_must_declare_its_opdef():
    entry = dict(TABLE[0], schema="add(Tensor x1, Tensor x2, *, float alpha=2.0) -> Tensor")
    with pytest.raises(NpuemuError, match="alpha.*defaults to 2.0"):
        torch_ops.check_entry(entry)
    entry = dict(TABLE[0], schema="add(Tensor a, Tensor x2, *, float alpha=1.0) -> Tensor")
    with pytest.raises(NpuemuError, match="inputs as Tensors"):
        torch_ops.check_entry(entry)
    with pytest.raises(NpuemuError, match="autocast policy"):
        torch_ops.check_entry(dict(TABLE[0], autocast="fp16"))


def test_register_is_idempotent_and_thread_safe(monkeypatch):
    monkeypatch.setattr(torch_ops, "_registered", False)      # the ops stay defined: nothing is defined twice
    errors = []

    def run():
        try:
            torch_ops.register()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and torch_ops.registered()


def test_register_without_torch_names_the_extra(monkeypatch):
    monkeypatch.setattr(torch_ops, "_registered", False)
    monkeypatch.setitem(sys.modules, "torch", None)          # import torch fails
    with pytest.raises(torch_ops.TorchNotInstalledError, match=r"pip install npuemu\[torch\]"):
        torch_ops.register()


def test_dtype_names():
    for name in ("float32", "float16", "bfloat16", "int32", "int8", "bool"):
        assert torch_ops.dtype_name(torch_ops.torch_dtype(name)) == name
    assert torch_ops.dtype_name(torch.half) == "float16"
    with pytest.raises(NpuemuError, match="no torch equivalent"):
        torch_ops.torch_dtype("complex32x")


# ----------------------------------------------------------------------------- results


X = _randn(4, 32, seed=1)
CASES = [
    ("add", lambda: (X, _randn(4, 32, seed=2)), {"alpha": 2.0}),
    ("add", lambda: (X, _randn(32, seed=3)), {}),                                      # broadcast
    ("mul", lambda: (X.bfloat16(), _randn(4, 32, dtype=torch.bfloat16, seed=4)), {}),
    ("cast", lambda: (X,), {"dtype": "bfloat16"}),
    ("softmax", lambda: (X,), {}),
    ("rmsnorm", lambda: (X.bfloat16(), _randn(32, dtype=torch.bfloat16, seed=5)), {}),
    ("reduce_sum", lambda: (X,), {"keep_dims": True}),
    ("matmul", lambda: (X, _randn(32, 16, seed=6)), {}),
]


@pytest.mark.parametrize("name, make, attrs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_results_equal_the_numpy_path_bit_for_bit(name, make, attrs):
    inputs = make()
    got = getattr(OPS, name)(*inputs, **attrs)
    want = _numpy_path(library.LIBRARY[name], inputs, attrs)
    assert isinstance(got, torch.Tensor)
    assert got.shape == want.shape
    assert functions.to_numpy(got).dtype == want.dtype
    assert np.array_equal(_bits(functions.to_numpy(got)), _bits(want))
    with torch._subclasses.FakeTensorMode():          # the fake kernel agrees with what ran
        fake = getattr(OPS, name)(*[torch.empty(x.shape, dtype=x.dtype) for x in inputs], **attrs)
    assert (fake.shape, fake.dtype) == (got.shape, got.dtype)


def test_outputs_are_new_tensors():
    x = _randn(4, 32, seed=7)
    functions.reset_fallback_warnings()
    with pytest.warns(functions.OpFallbackWarning):
        y = OPS.cast(x, dtype="float32")      # no column: the CPU fallback, which may return its input's data
    assert torch.equal(y, x) and y.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


# ----------------------------------------------------------------------------- fake tensors and compile


FAKE = [
    ("add", [((4, 1), torch.float16), ((3,), torch.float32)], {}, (4, 3), torch.float32),      # promoted
    ("add", [((2, 3), torch.float64), ((2, 3), torch.float64)], {}, (2, 3), torch.float64),    # the fallback
    ("cast", [((5,), torch.float32)], {"dtype": "int32"}, (5,), torch.int32),
    ("gelu", [((6, 7), torch.bfloat16)], {}, (6, 7), torch.bfloat16),
    ("leaky_relu", [((6,), torch.float16)], {"alpha": 0.2}, (6,), torch.float16),
    ("relu", [((2, 2, 2), torch.float32)], {}, (2, 2, 2), torch.float32),
    ("layernorm", [((3, 8), torch.float16), ((8,), torch.float16), ((8,), torch.float16)], {}, (3, 8),
     torch.float16),
    ("reduce_sum", [((3, 5, 7), torch.bfloat16)], {}, (3, 5), torch.bfloat16),
    ("matmul", [((3, 8), torch.float16), ((5, 8), torch.float16)], {"trans_b": True}, (3, 5), torch.float16),
    ("linear", [((3, 8), torch.bfloat16), ((8, 5), torch.bfloat16), ((5,), torch.bfloat16)],
     {"activation": "leaky_relu"}, (3, 5), torch.bfloat16),
]


@pytest.mark.parametrize("name, specs, attrs, shape, dtype", FAKE, ids=[f[0] for f in FAKE])
def test_fake_tensors_get_the_inferred_shape_and_dtype_without_running(monkeypatch, name, specs, attrs, shape,
                                                                       dtype):
    monkeypatch.setattr(functions, "call", lambda *a, **k: pytest.fail("the fake kernel ran the op"))
    with torch._subclasses.FakeTensorMode():
        inputs = [torch.empty(s, dtype=d) for s, d in specs]
        y = getattr(OPS, name)(*inputs, **attrs)
    assert isinstance(y, torch._subclasses.FakeTensor)
    assert (tuple(y.shape), y.dtype) == (shape, dtype)


def test_fake_tensors_check_shapes_as_the_op_does():
    with torch._subclasses.FakeTensorMode():
        with pytest.raises(NpuemuError, match="K of x1"):
            OPS.matmul(torch.empty(3, 8), torch.empty(7, 5))


def test_torch_compile_traces_through_the_ops():
    if not hasattr(torch, "compile"):
        pytest.skip("torch.compile is not available")

    def f(x, w):
        return OPS.softmax(OPS.matmul(x, w))

    x, w = CASES[-1][1]()
    try:
        compiled = torch.compile(f, fullgraph=True, backend="eager")
        got = compiled(x, w)
    except RuntimeError as exc:            # e.g. Dynamo not supported on this Python
        if "not supported" in str(exc):
            pytest.skip(f"torch.compile: {exc}")
        raise
    assert torch.equal(got, f(x, w))


# ----------------------------------------------------------------------------- autocast


def test_autocast_runs_matmul_lowered_and_softmax_in_float32():
    x, w = CASES[-1][1]()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mm = OPS.matmul(x, w)
        sm = OPS.softmax(mm)
    assert mm.dtype == torch.bfloat16 and sm.dtype == torch.float32
    assert torch.equal(mm, OPS.matmul(x.bfloat16(), w.bfloat16()))
    assert torch.equal(sm, OPS.softmax(mm.float()))


def test_autocast_policies_on_fake_tensors(monkeypatch):
    monkeypatch.setattr(functions, "call", lambda *a, **k: pytest.fail("the fake kernel ran the op"))
    with torch._subclasses.FakeTensorMode(), torch.autocast("cpu", dtype=torch.float16):
        half, bf16, f32 = (torch.empty(4, 8, dtype=d) for d in (torch.float16, torch.bfloat16, torch.float32))
        assert OPS.add(half, bf16).dtype == torch.float32                     # promote: the widest
        assert OPS.mul(half, half).dtype == torch.float16
        assert OPS.layernorm(half, half[0], half[0]).dtype == torch.float32   # fp32
        assert OPS.reduce_sum(bf16).dtype == torch.float32
        assert OPS.linear(f32, f32.t(), f32[:, 0]).dtype == torch.float16     # lower: the autocast dtype
        assert OPS.relu(bf16).dtype == torch.bfloat16                         # none
        assert OPS.matmul(f32.double(), f32.double().t()).dtype == torch.float64     # float64 is left alone
        assert OPS.matmul(f32, f32.t()).dtype == torch.float16
        with torch.autocast("cpu", enabled=False):
            assert OPS.matmul(f32, f32.t()).dtype == torch.float32           # no autocast, no cast
