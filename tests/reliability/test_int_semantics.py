"""Kernel integers are int64 in both execution modes: same wrapped results, same faults, with their line."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc

INT64_MAX = 9223372036854775807


@asc.jit
def int_ops(out: asc.GlobalAddress, n: int, s: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 8)
    g.set_value(0, n * n * n)
    g.set_value(1, n + INT64_MAX)
    g.set_value(2, -(n - n - INT64_MAX - 1))
    g.set_value(3, 1 << s)
    g.set_value(4, -n >> s)


@asc.jit
def to_int(out: asc.GlobalAddress, x: float):
    g = asc.GlobalTensor()
    g.set_global_buffer(out, 1)
    g.set_value(0, int(x))


def _int64(v: int) -> int:
    return (v + (1 << 63)) % (1 << 64) - (1 << 63)


def test_overflow_wraps_the_same_in_both_modes(mode):
    n, s = 3_000_000_000, 3
    out = np.zeros(8, np.int64)
    with np.errstate(all="raise"):
        int_ops[1](out, n, s, **mode)
    assert out[:5].tolist() == [_int64(n ** 3), _int64(n + INT64_MAX), _int64(-(-INT64_MAX - 1)), 1 << s,
                                -n >> s]


@pytest.mark.parametrize("s", [64, 70, -1])
def test_a_shift_count_outside_0_63_is_a_fault_with_its_line(mode, s):
    with pytest.raises(npuemu.ParamRangeError, match=rf"shift << by {s}: an int64 shift count must be in 0..63") \
            as info:
        int_ops[1](np.zeros(8, np.int64), 3, s, **mode)
    assert info.value.loc is not None and info.value.loc.line_text.strip() == "g.set_value(3, 1 << s)"


def test_a_python_error_in_debug_mode_names_the_kernel_line():
    with pytest.raises(npuemu.KernelFault, match="ValueError") as info:
        to_int[1](np.zeros(1, np.int64), float("nan"), debug=True)
    assert info.value.loc is not None and info.value.loc.line_text.strip() == "g.set_value(0, int(x))"
