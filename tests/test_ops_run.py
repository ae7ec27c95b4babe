"""npuemu.ops.run_op: an op definition selected, tiled and launched, checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from npuemu.errors import LaunchError
from npuemu.kernels.add import add_kernel
from npuemu.ops.opdef import Input, OpDef, Output
from npuemu.ops.run import run_op
from npuemu.ops.select import SelectionError
from npuemu.ops.tensor import OpTensor, format_cast
from npuemu.tiling.elementwise import elementwise_tiling

PLATFORM = "Ascend910B1"


def _tiling_attrs(descs, attrs):
    """What elementwise_tiling needs for add_kernel: float32 scratch for the widened 16-bit branch."""
    return {"scratch_bytes_per_element": 8 if descs[0].itemsize == 2 else 0, "widen": descs[0].dtype == "bfloat16"}


def _add(name: str, **kw) -> OpDef:
    return OpDef(name, inputs=[Input("x1", dtype=["float32", "float16"]), Input("x2", follow="x1")],
                 outputs=[Output("y", follow="x1")], kernel=add_kernel, tiling=elementwise_tiling,
                 tiling_attrs=_tiling_attrs, **kw)


ADD = _add("TestRunAdd")
ADD_AGNOSTIC = _add("TestRunAddAgnostic", nd_fallback=True)


def test_every_column_matches_numpy():
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float16):
        x, y = (rng.standard_normal((3, 700)).astype(dtype) for _ in range(2))
        z = np.zeros_like(x)
        result = run_op(ADD, [x, y], [z], platform=PLATFORM)
        np.testing.assert_array_equal(z, x + y)
        assert result.tiling_key == 0 and result.block_dim >= 1


def test_refuses_a_combination_it_does_not_support():
    x = np.ones(64, np.int32)
    with pytest.raises(SelectionError) as info:
        run_op(ADD, [x, x], [np.zeros_like(x)], platform=PLATFORM)
    text = str(info.value)
    assert "x1=int32/ND" in text and "x1=float32/ND, x2=float32/ND, y=float32/ND" in text
    assert "x1=float16/ND, x2=float16/ND, y=float16/ND" in text


def test_a_format_agnostic_op_takes_nz_storage_as_is():
    a = np.arange(32 * 48, dtype=np.float32).reshape(32, 48)
    nz = format_cast(a, "NZ")
    out = format_cast(np.zeros_like(a), "NZ")
    run_op(ADD_AGNOSTIC, [nz, nz], [out], platform=PLATFORM)
    assert out.format == "FRACTAL_NZ"
    np.testing.assert_array_equal(out.numpy(), a + a)


def test_nz_tensors_are_converted_to_nd_and_back_for_an_nd_op():
    a = np.arange(20 * 40, dtype=np.float32).reshape(20, 40)        # not whole fractals: padding is cropped
    nz = format_cast(a, "NZ")
    out = format_cast(np.zeros_like(a), "NZ")
    run_op(ADD, [nz, a], [out], platform=PLATFORM)
    np.testing.assert_array_equal(out.numpy(), a + a)


def test_arguments_are_checked():
    x = np.ones(64, np.float32)
    with pytest.raises(LaunchError, match="takes 2 input"):
        run_op(ADD, [x, x, x], [x], platform=PLATFORM)
    with pytest.raises(LaunchError, match="'x2' is required"):
        run_op(ADD, [x], [x], platform=PLATFORM)
    with pytest.raises(LaunchError, match="unknown option"):
        run_op(ADD, [x, x], [x], platform=PLATFORM, tiling_key=1)
    with pytest.raises(LaunchError, match="OpTensor data must be an array"):
        OpTensor([1, 2, 3])
