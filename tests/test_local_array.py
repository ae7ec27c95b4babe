"""asc.array: kernel-local scalar arrays, against plain Python lists."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import BoundsError, KernelTypeError, UnsupportedSyntaxError


@asc.jit
def array_kernel(out: asc.GlobalAddress, k: int, idx: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 16)
    fib = asc.array(asc.int32, 10, 0)
    fib[1] = 1
    for i in range(2, len(fib)):
        fib[i] = fib[i - 1] + fib[i - 2]
    primes = asc.array(asc.uint8, [2, 3, 5, 7, k])
    halves = asc.array(asc.float16, 4, 0.5)
    total = 0
    for i in range(len(primes)):
        total += primes[i]
    res.set_value(0, fib[9])
    res.set_value(1, total)
    res.set_value(2, len(halves))
    res.set_value(3, primes[idx])


def test_local_arrays(mode):
    out = np.zeros(16, np.int64)
    array_kernel[1](out, 300, 4, **mode)              # 300 wraps to 44 in a uint8 element
    assert out[:4].tolist() == [34, 2 + 3 + 5 + 7 + 44, 4, 44]
    with pytest.raises(BoundsError, match="index 5 of an asc.array of 5 elements"):
        array_kernel[1](out, 1, 5, **mode)


@asc.jit
def float_array_kernel(out: asc.GlobalAddress):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 4)
    h = asc.array(asc.float16, 4, 0.5)
    h[2] = 1.0 / 3.0
    res.set_value(0, h[0] + h[2])
    f = asc.array(asc.float32, [1.5, 2.25])
    res.set_value(1, f[0] * f[1])


def test_float_elements_round_to_their_type():
    out = np.zeros(4, np.float32)
    float_array_kernel[1](out)
    assert out[0] == np.float32(0.5) + np.float32(np.float16(1 / 3))
    assert out[1] == np.float32(3.375)


def test_array_errors():
    @asc.jit
    def runtime_length(n: int):
        asc.array(asc.int32, n)

    with pytest.raises(KernelTypeError, match="array length must be a compile-time constant"):
        runtime_length[1](4)

    @asc.jit
    def slice_store():
        p = asc.TPipe()
        p[0] = 1

    with pytest.raises(UnsupportedSyntaxError, match="cannot assign to an element of"):
        slice_store[1]()

    @asc.jit
    def unbound_store():
        b = asc.GlobalTensor()
        b[0] = 1            # Ascend C's b(0) = 1, on a tensor never bound

    with pytest.raises(KernelTypeError, match="GlobalTensor used before set_global_buffer"):
        unbound_store[1]()
