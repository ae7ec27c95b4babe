"""Elements a kernel never writes are reported as such, on every path, every time.

One kernel doubles ``x`` into ``y`` in tiles; its broken twin (``fixed=0``)
stops before the last, partial tile, so the tail of ``y`` is never written.
``np.empty`` memory often holds the right answer by chance (the reference's
freed result), so without filling the outputs first a test of the broken
kernel passes some runs and fails others; under Hypothesis that showed up as
a ``FlakyFailure``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import npuemu.asc as asc
from npuemu.errors import LaunchError
from npuemu.host import TilingContext, TilingResult, run_op
from npuemu.testing import KernelMismatchError, UnwrittenOutputError, assert_kernel_matches

TILE = 64


class DoubleTiling(asc.Struct):
    n = asc.Field(asc.uint32)          # elements, a multiple of 8
    tile = asc.Field(asc.uint32)       # elements per UB tile, a multiple of 8
    fixed = asc.Field(asc.uint32)      # 0: the broken twin, which skips the last partial tile


@asc.jit
def double_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, t: DoubleTiling):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, t.n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, t.n)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qi, 1, t.tile * 4)
    pipe.init_buffer(qo, 1, t.tile * 4)
    loops = t.n // t.tile
    if t.fixed:
        loops = (t.n + t.tile - 1) // t.tile
    for i in range(loops):
        count = min(t.tile, t.n - i * t.tile)
        a = qi.alloc_tensor(x.dtype)
        asc.data_copy(a, xg[i * t.tile:], count)
        qi.enque(a)
        a = qi.deque(x.dtype)
        b = qo.alloc_tensor(y.dtype)
        asc.muls(b, a, 2.0, count)
        qo.enque(b)
        qi.free_tensor(a)
        b = qo.deque(y.dtype)
        asc.data_copy(yg[i * t.tile:], b, count)
        qo.free_tensor(b)


def double_tiling(ctx: TilingContext) -> TilingResult:
    return TilingResult(block_dim=1, tiling_data=DoubleTiling(n=ctx.input(0).size, tile=TILE,
                                                              fixed=ctx.attr("fixed")))


def double_op(x: np.ndarray, fixed: bool = True, **launch) -> np.ndarray:
    """The documented host-function form: outputs from ``np.empty``, tiled and launched by run_op."""
    y = np.empty_like(x)
    run_op(double_kernel, double_tiling, (x,), (y,), attrs={"fixed": int(fixed)}, **launch)
    return y


def broken_op(x: np.ndarray, **launch) -> np.ndarray:
    return double_op(x, fixed=False, **launch)


def twice(x: np.ndarray) -> np.ndarray:
    return x * np.float32(2)


def data(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.float32) - 7


def launch_args(x: np.ndarray, y: np.ndarray, fixed: bool) -> tuple:
    return x, y, DoubleTiling(n=x.size, tile=TILE, fixed=int(fixed))


NEVER_WRITTEN = re.compile(r"(\d+) of (\d+) elements were never written: first at index (\d+), still holding the "
                           r"fill 0xffffffff put there before the launch")


def first_unwritten(error: BaseException) -> tuple[int, int, int]:
    """(count, total, first index) of the never-written report in ``error``."""
    match = NEVER_WRITTEN.search(str(error))
    assert match, str(error)
    return tuple(int(g) for g in match.groups())


# ------------------------------------------------------------------------------------ a launched kernel


def test_a_skipped_tail_is_reported_as_never_written(mode):
    x = data(200)
    y = twice(x)                               # already right: only the fill reveals the skipped tail
    with pytest.raises(UnwrittenOutputError) as info:
        assert_kernel_matches(double_kernel[1], twice, launch_args(x, y, False), **mode)
    assert str(info.value).splitlines()[0] == (
        "double_kernel[1] output 0 (float32, shape (200,)): 8 of 200 elements were never written: first at index "
        "192, still holding the fill 0xffffffff put there before the launch")
    assert str(info.value).splitlines()[1] == "  also at 193, 194, 195, 196, 197, 198, 199"


def test_the_correct_twin_passes(mode):
    x = data(200)
    y = assert_kernel_matches(double_kernel[1], twice, launch_args(x, np.empty_like(x), True), **mode)
    np.testing.assert_array_equal(y, twice(x))


def test_a_non_contiguous_output_is_filled_through_its_view():
    x = data(200)
    storage = np.zeros((200, 2), np.float32)
    y = storage[:, 1]                          # every other float: not contiguous
    y[:] = twice(x)
    with pytest.raises(UnwrittenOutputError) as info:
        assert_kernel_matches(double_kernel[1], twice, launch_args(x, y, False))
    assert first_unwritten(info.value) == (8, 200, 192)
    assert not storage[:, 0].any()             # the fill went only where y is
    y = storage[::-1, 0]
    assert_kernel_matches(double_kernel[1], twice, launch_args(x, y, True))


def test_a_multi_dimensional_output_names_the_index():
    x = data(200).reshape(25, 8)
    with pytest.raises(UnwrittenOutputError, match=r"first at index \(24, 0\)"):
        assert_kernel_matches(double_kernel[1], twice, launch_args(x, np.empty_like(x), False))


def test_a_read_only_output_is_an_error_not_a_skipped_fill():
    x = data(64)
    y = np.zeros_like(x)
    y.flags.writeable = False
    with pytest.raises(LaunchError, match="output argument 1 is a read-only array"):
        assert_kernel_matches(double_kernel[1], twice, launch_args(x, y, True))


def test_the_fill_never_equals_the_expected_value():
    """Where the expected value is NaN (0xffffffff here), the fill is 0x00: the skipped tail still shows."""
    x = data(200)
    x[192:] = np.frombuffer(b"\xff" * 32, np.float32)
    with pytest.raises(UnwrittenOutputError) as info:
        assert_kernel_matches(double_kernel[1], lambda a: np.where(np.isnan(a), a, a * 2).astype(np.float32),
                              launch_args(x, np.empty_like(x), False))
    assert "8 of 200 elements were never written: first at index 192, still holding the fill 0x00000000" in str(
        info.value)


def test_wrong_values_next_to_unwritten_ones_are_reported_too():
    x = data(200)
    with pytest.raises(UnwrittenOutputError) as info:
        assert_kernel_matches(double_kernel[1], lambda a: a * np.float32(3), launch_args(x, np.empty_like(x), False))
    text = str(info.value)
    assert first_unwritten(info.value) == (8, 200, 192)
    assert "does not match the reference (bit-exact): 191 of 200 elements differ" in text     # x = 7 is right


# ------------------------------------------------------------------------------ a host function (run_op)


def test_a_host_function_s_outputs_are_filled_before_its_launch():
    x = data(200)
    with pytest.raises(UnwrittenOutputError) as info:
        assert_kernel_matches(broken_op, twice, (x,))
    assert str(info.value).startswith("broken_op output 0 (float32, shape (200,)): 8 of 200 elements were never "
                                      "written: first at index 192")
    np.testing.assert_array_equal(assert_kernel_matches(double_op, twice, (x,)), twice(x))


def test_an_output_that_is_also_an_input_is_not_filled():
    x = data(200)
    y = twice(x)

    def in_place(a):
        run_op(double_kernel, double_tiling, (a,), (a,), attrs={"fixed": 1})
        return a
    assert_kernel_matches(in_place, lambda a: a * np.float32(2), (y,))      # y was read, not filled


SIZES = st.integers(1, 40).map(lambda k: 8 * k)          # multiples of 8: whole 32-byte blocks of float32


@settings(max_examples=15, derandomize=True, database=None, deadline=None)
@given(n=SIZES)
def broken_under_hypothesis(n):
    assert_kernel_matches(broken_op, twice, (data(n),))


def test_under_hypothesis_a_skipped_tail_is_a_plain_failure_naming_the_element():
    """Not a FlakyFailure: every run of the shrunk example fails the same way."""
    with pytest.raises(UnwrittenOutputError) as info:
        broken_under_hypothesis()
    count, total, first = first_unwritten(info.value)
    assert first == total // TILE * TILE and count == total - first > 0


@settings(max_examples=15, derandomize=True, database=None, deadline=None)
@given(n=SIZES)
def test_under_hypothesis_the_correct_twin_passes(n):
    assert_kernel_matches(double_op, twice, (data(n),))


def test_without_a_fill_only_a_mismatch_can_be_reported():
    x = data(200)
    y = twice(x)
    assert_kernel_matches(double_kernel[1], twice, launch_args(x, y, False), poison=False)    # tail right by chance
    y[192:] = 0
    with pytest.raises(KernelMismatchError) as info:
        assert_kernel_matches(double_kernel[1], twice, launch_args(x, y, False), poison=False)
    assert not isinstance(info.value, UnwrittenOutputError)
