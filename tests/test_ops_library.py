"""The op library (npuemu.ops.library): every op through npuemu.ops.run_op, checked against its NumPy ``cpu``.

One small shape per op, in the dtype that reaches the op's interesting path
(bfloat16: the widening branch; float16 where the kernel computes natively),
so each op costs one or two kernel builds.
"""
from __future__ import annotations

import numpy as np
import pytest

from npuemu.kernels._host import to_dtype
from npuemu.ops import library, registry
from npuemu.ops.run import run_op
from npuemu.ops.variants import declared_variants, kernel_signature

L = library
PLATFORM = "Ascend910B1"


def _normal(*shapes):
    def make(rng, dtype):
        return [to_dtype(rng.standard_normal(s), dtype) for s in shapes]
    return make


def _norm(beta: bool):
    def make(rng, dtype):
        x = to_dtype(rng.standard_normal((5, 40)) * 3 + 1, dtype)
        params = [to_dtype(rng.uniform(0.5, 1.5, 40), dtype)]
        if beta:
            params.append(to_dtype(rng.standard_normal(40), dtype))
        return [x, *params]
    return make


def _ints(rng, dtype):
    return [rng.integers(-100_000, 100_000, 45).astype(np.int32)]


EXACT = (0.0, 0.0)
# op, input dtype, inputs, attributes, (rtol, atol) against op.cpu
CASES = [
    (L.ADD, "float16", _normal((3, 37), (3, 37)), {}, EXACT),
    (L.ADD, "float16", _normal((3, 37), (3, 37)), {"alpha": -2.5}, EXACT),       # the same binary
    (L.ADD, "bfloat16", _normal((40,), (40,)), {"alpha": 0.5}, EXACT),
    (L.MUL, "float32", _normal((2, 19), (2, 19)), {}, EXACT),
    (L.RELU, "bfloat16", _normal((33,)), {}, EXACT),
    (L.GELU, "float16", _normal((33,)), {}, (1e-3, 1e-4)),
    (L.LEAKY_RELU, "float32", _normal((33,)), {"alpha": 0.2}, EXACT),
    (L.CAST, "float32", _normal((45,)), {"dtype": "bfloat16"}, EXACT),
    (L.CAST, "float16", _normal((45,)), {"dtype": "float32"}, EXACT),
    (L.CAST, "int32", _ints, {"dtype": "float32"}, EXACT),
    (L.SOFTMAX, "float32", _normal((2, 3, 24)), {}, (2e-6, 1e-7)),
    (L.LAYERNORM, "float16", _norm(True), {"eps": 1e-3}, (2e-3, 2e-3)),
    (L.RMSNORM, "bfloat16", _norm(False), {}, (1.6e-2, 1.6e-2)),
    (L.REDUCE_SUM, "float32", _normal((4, 3, 50)), {"keep_dims": True}, (1e-5, 1e-5)),
    (L.MATMUL, "float16", _normal((5, 40), (7, 40)), {"trans_b": True}, (1e-3, 1e-4)),
    (L.LINEAR, "float32", _normal((6, 20), (20, 9), (9,)), {"activation": "leaky_relu", "alpha": 0.1},
     (1e-5, 1e-5)),
]


def _outputs(op, inputs, attrs):
    """Outputs as the op infers them."""
    values = op.attr_values(attrs)
    shapes = op.infer_shape([x.shape for x in inputs], values)
    dtypes = op.infer_dtype([x.dtype.name for x in inputs], values)
    return [np.empty(s, L.host_dtype(d)) for s, d in zip(shapes, dtypes)]


@pytest.mark.parametrize("op, dtype, make, attrs, tol", CASES,
                         ids=[f"{c[0].name}-{c[1]}-{'-'.join(f'{k}={v}' for k, v in c[3].items())}" for c in CASES])
def test_op_matches_numpy(op, dtype, make, attrs, tol, rng):
    inputs = make(rng, dtype)
    outputs = _outputs(op, inputs, attrs)
    run_op(op, inputs, outputs, attrs, platform=PLATFORM)
    (want,) = op.cpu(inputs, op.attr_values(attrs))
    (got,) = outputs
    assert got.shape == want.shape and got.dtype == want.dtype
    if tol == EXACT:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol[0], atol=tol[1])


def test_add_with_alpha_one_is_plain_addition(rng):
    x, y = _normal((64,), (64,))(rng, "bfloat16")
    z = np.empty_like(x)
    run_op(L.ADD, [x, y], [z], platform=PLATFORM)
    np.testing.assert_array_equal(z, (x.astype(np.float32) + y.astype(np.float32)).astype(x.dtype))


def test_every_op_is_registered_and_complete():
    assert set(L.LIBRARY.values()) == {L.ADD, L.MUL, L.CAST, L.RELU, L.GELU, L.LEAKY_RELU, L.SOFTMAX,
                                       L.LAYERNORM, L.RMSNORM, L.REDUCE_SUM, L.MATMUL, L.LINEAR}
    for name, op in L.LIBRARY.items():
        assert registry.get(op.name) is op, name
        for part in ("kernel", "tiling", "infer_shape", "infer_dtype", "cpu"):
            assert getattr(op, part) is not None, f"{op.name} has no {part}"


@pytest.mark.parametrize("name", sorted(L.LIBRARY))
def test_every_binary_has_a_kernel_signature(name):
    """What ``npuemu build`` compiles: each declared variant's arguments fit the kernel's parameters."""
    op = L.LIBRARY[name]
    variants = declared_variants(op)
    assert variants
    for v in variants:
        sig = kernel_signature(op, v)
        assert len(sig) <= len(op.kernel.signature.parameters)


def test_shape_inference_refuses_what_the_kernels_cannot_take():
    with pytest.raises(ValueError, match="op MatMul: K of x1 .40. and x2 .30. differ"):
        L.MATMUL.infer_shape([(5, 40), (30, 7)], {"trans_b": False})
    with pytest.raises(ValueError, match="op Linear: bias must have N = 7 elements"):
        L.LINEAR.infer_shape([(5, 40), (40, 7), (8,)], {"trans_b": False})
    with pytest.raises(ValueError, match="op LayerNorm: gamma and beta must have x's last dimension"):
        L.LAYERNORM.infer_shape([(5, 40), (40,), (39,)], {})
    with pytest.raises(ValueError, match="do not broadcast"):
        L.ADD.infer_shape([(5, 40), (4, 40)], {})
    assert L.ADD.infer_shape([(5, 1), (40,)], {}) == [(5, 40)]
    assert L.REDUCE_SUM.infer_shape([(2, 3, 4)], {"keep_dims": False}) == [(2, 3)]
