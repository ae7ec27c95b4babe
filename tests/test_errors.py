"""The exception hierarchy: every error a user can trigger is an NpuemuError, with a clear message."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import errors


def test_every_npuemu_error_is_defined_in_errors_and_documented():
    from npuemu.host import TilingError as HostTilingError
    from npuemu.host.tiling import TilingError as TilingModuleError
    from npuemu.language.builtin import NotInKernelError
    assert NotInKernelError is errors.NotInKernelError
    assert HostTilingError is TilingModuleError is errors.TilingError
    assert issubclass(errors.TilingError, ValueError)                # what a tiling function rejects is a value
    for cls in (errors.NotInKernelError, errors.TilingError):
        assert issubclass(cls, errors.NpuemuError) and cls.__module__ == "npuemu.errors"
    for name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, errors.NpuemuError):
            assert cls.__doc__, name


def test_builtins_outside_a_kernel_raise_not_in_kernel_error():
    with pytest.raises(errors.NotInKernelError, match=r"asc.add\(\) can only be used inside an @asc.jit"):
        asc.add(None, None, None, 8)


# ------------------------------------------------------- misuse of npuemu.host, npuemu.testing and structs


LIST, ROWS = [1.0, 2.0], [[1.0, 2.0], [3.0, 4.0]]


def _bundled_calls():
    from npuemu.kernels import (add, add_static, axpy, cast, gelu, layernorm, leaky_relu, mul, reduce_sum, relu,
                                rmsnorm, softmax)
    return {
        "add": lambda: add.add(LIST, LIST), "add_static": lambda: add_static.add_static(LIST, LIST),
        "axpy": lambda: axpy.axpy(2.0, LIST, LIST), "mul": lambda: mul.mul(LIST, LIST),
        "cast": lambda: cast.cast(LIST, "float16"), "gelu": lambda: gelu.gelu(LIST),
        "relu": lambda: relu.relu(LIST), "leaky_relu": lambda: leaky_relu.leaky_relu(LIST),
        "layernorm": lambda: layernorm.layernorm(ROWS, LIST, LIST), "rmsnorm": lambda: rmsnorm.rmsnorm(ROWS, LIST),
        "reduce_sum": lambda: reduce_sum.reduce_sum(ROWS), "softmax": lambda: softmax.softmax(ROWS),
    }


@pytest.mark.parametrize("op", list(_bundled_calls()))
def test_bundled_host_functions_reject_lists_by_name(op):
    with pytest.raises(errors.LaunchError, match=rf"^{op}: x must be an array \(a NumPy array, a torch CPU tensor "
                                                 rf"or an npuemu.gm_buffer\), got list"):
        _bundled_calls()[op]()


def test_bundled_host_functions_report_wrong_shapes_as_launch_errors():
    from npuemu.kernels import layernorm, softmax
    x = np.ones((4, 8), np.float32)
    with pytest.raises(errors.LaunchError, match=r"softmax expects a 2-D \(rows, cols\) array, got shape \(32,\)"):
        softmax.softmax(x.reshape(-1))
    with pytest.raises(errors.LaunchError, match=r"got shapes \(4, 8\), \(4,\), \(8,\)"):
        layernorm.layernorm(x, np.ones(4, np.float32), np.ones(8, np.float32))


def test_core_num_zero_is_a_launch_error():
    from npuemu.host import PlatformAscendC, make_context
    from npuemu.kernels import add
    x = np.ones(64, np.float32)
    with pytest.raises(errors.LaunchError, match=r"core_num must be a positive int \(the most cores the op may "
                                                 r"use\) or None, got 0"):
        add.add(x, x, core_num=0)
    with pytest.raises(errors.LaunchError, match="got True"):
        make_context([x], [x], core_num=True)
    with pytest.raises(errors.UsageError, match="got -1"):
        PlatformAscendC("Ascend910B1", core_num=-1)
    assert PlatformAscendC("Ascend910B1", core_num=np.int64(3)).get_core_num_aiv() == 3


def test_platform_queries_and_tiling_contexts_raise_npuemu_errors():
    from npuemu.host import PlatformAscendC, TilingError, make_context
    with pytest.raises(errors.UsageError, match="get_core_mem_bw supports CoreMemType.L2 and CoreMemType.HBM"):
        PlatformAscendC("Ascend910B1").get_core_mem_bw(0)
    ctx = make_context([np.ones(8, np.float32)], [np.ones(8, np.float32)])
    with pytest.raises(TilingError, match="the tiling asks for input 1 of an op with 1 inputs"):
        ctx.input(1)


class Tiling(asc.Struct):
    n = asc.Field(asc.uint32)
    scale = asc.Field(asc.float32, default=1.0)
    splits = asc.ArrayField(asc.int32, 2, default=0)


@pytest.mark.parametrize("assign, message", [
    (lambda t: setattr(t, "n", 1.5), r"field 'Tiling.n' of dtype uint32 needs an int, got 1.5"),
    (lambda t: setattr(t, "n", "8"), r"field 'Tiling.n' of dtype uint32 needs an int, got '8'"),
    (lambda t: setattr(t, "n", -1), r"field 'Tiling.n' = -1 does not fit in uint32 \(\[0, 4294967295\]\)"),
    (lambda t: setattr(t, "scale", "fast"), r"field 'Tiling.scale' of dtype float32 needs a number, got 'fast'"),
    (lambda t: setattr(t, "scale", 10 ** 400), r"field 'Tiling.scale' of dtype float32 needs a number"),
    (lambda t: setattr(t, "splits", [1, 2, 3]), r"field 'Tiling.splits' needs 2 values, got 3"),
    (lambda t: Tiling(m=3), r"Tiling has no field 'm' \(its fields: n, scale, splits\)"),
])
def test_struct_fields_given_wrong_values_raise_struct_field_error(assign, message):
    with pytest.raises(errors.StructFieldError, match=message) as info:
        assign(Tiling())
    assert isinstance(info.value, (TypeError, ValueError))          # what such assignments raised before


def test_struct_declarations_with_wrong_types_raise_struct_layout_error():
    from npuemu.language.struct import StructLayoutError
    with pytest.raises(StructLayoutError, match="Field dtype must be an asc data type"):
        asc.Field(int)
    with pytest.raises(StructLayoutError, match="ArrayField length must be a positive int, got 0"):
        asc.ArrayField(asc.int32, 0)


def test_testing_helpers_raise_usage_errors():
    from npuemu.testing import TilingPlan, assert_kernel_matches, profiles, ulp_distance
    from npuemu.testing import strategies as nst
    from npuemu.testing.bundled import check_bundled_tiling
    with pytest.raises(errors.UsageError, match="need 0 <= min_size <= max_size, got 5, 1"):
        nst.sizes(5, 1)
    with pytest.raises(errors.UsageError, match="unknown npuemu Hypothesis profile 'fast'"):
        profiles.select("fast")
    with pytest.raises(errors.UsageError, match="balance must be 'even', 'last-short' or None"):
        TilingPlan(total=8, elem_bytes=4, block_dim=1, blocks=[], core_count=1, balance="odd")
    with pytest.raises(errors.UsageError, match="ulp_distance needs two float arrays of one dtype"):
        ulp_distance(np.int32([1]), np.int32([2]))
    with pytest.raises(errors.UsageError, match="is not one of npuemu's tiling functions"):
        check_bundled_tiling(len, None)

    @asc.jit
    def kernel(x: asc.GlobalAddress):
        pass
    with pytest.raises(errors.UsageError, match="pass core_num= to launch the @asc.jit kernel 'kernel'"):
        assert_kernel_matches(kernel, lambda: None, (np.ones(8, np.float32),))
