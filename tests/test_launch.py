"""Launching kernels: runtime faults, in-place outputs and binary reuse.

A kernel that breaks a hardware rule raises a :class:`npuemu.KernelFault`
subclass naming the kernel, the core that faulted, the source line and the
rule, identically in compiled and debug mode.  Each faulting line below is
marked with a ``# <- name`` comment.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import npuemu
import npuemu.asc as asc

VECIN, VECOUT, VECCALC = asc.TPosition.VECIN, asc.TPosition.VECOUT, asc.TPosition.VECCALC


def line_of(marker: str) -> int:
    with open(__file__) as f:
        hits = [i for i, line in enumerate(f, 1) if line.rstrip().endswith(f"# <- {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


# --------------------------------------------------------------------------- faulting kernels


@asc.jit
def gm_out_of_bounds_on_block_3(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    idx = asc.get_block_idx()
    start = idx * n + (16 * n if idx == 3 else 0)   # block 3 reads far beyond its own block
    src = asc.GlobalTensor()
    src.set_global_buffer(x + start)
    dst = asc.GlobalTensor()
    dst.set_global_buffer(y + idx * n)
    buf = asc.LocalTensor(asc.float32, VECCALC, 0, n)
    asc.data_copy(buf, src, n)  # <- gm-oob
    asc.data_copy(dst, buf, n)


@asc.jit
def ub_overflow(x: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    que = asc.TQue(VECIN, 2)
    pipe.init_buffer(que, 2, n * 1024)  # <- ub-overflow


@asc.jit
def nine_tensors_in_one_position(x: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    que = asc.TQue(VECIN, 2)
    pipe.init_buffer(que, 9, 256)
    for i in range(n):
        t = que.alloc_tensor(asc.float32)  # <- ninth-tensor


@asc.jit
def deque_from_empty_queue(x: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    que = asc.TQue(VECIN, 2)
    pipe.init_buffer(que, 2, 256)
    t = que.deque(asc.float32)  # <- empty-deque


@asc.jit
def double_free(x: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    que = asc.TQue(VECOUT, 1)
    pipe.init_buffer(que, 1, 256)
    t = que.alloc_tensor(asc.float32)
    que.free_tensor(t)
    que.free_tensor(t)  # <- double-free


@asc.jit
def static_tensor_beyond_ub(x: asc.GlobalAddress, n: int):
    t = asc.LocalTensor(asc.float32, VECCALC, 1024, n)  # <- static-beyond-ub


@asc.jit
def local_index_out_of_range(x: asc.GlobalAddress, n: int):
    t = asc.LocalTensor(asc.float32, VECCALC, 0, 16)
    t.set_value(n, 1.0)  # <- local-index


@asc.jit
def global_index_out_of_range(x: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(x, 8)
    v = g.get_value(n)  # <- global-index


@asc.jit
def integer_division_by_zero(x: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(x)
    g.set_value(1, n)
    asc.data_cache_clean_and_invalid(asc.CacheLine.SINGLE_CACHE_LINE, g)   # a fault discards dirty lines
    d = n - 4
    g.set_value(0, 100 // d)  # <- int-div-zero


@asc.jit
def float_division_by_zero(x: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(x)
    total = 0.0
    for i in range(n):
        total += g.get_value(i)
    g.set_value(0, total / (n - 4))  # <- float-div-zero


@asc.jit
def zero_range_step(x: asc.GlobalAddress, n: int):
    g = asc.GlobalTensor()
    g.set_global_buffer(x)
    for i in range(0, 8, n - 4):  # <- range-step
        g.set_value(i, i)


# (marker, kernel, cores, n, error class, rule, core that faults, message)
FAULTS = [
    ("gm-oob", gm_out_of_bounds_on_block_3, 6, 64, npuemu.BoundsError, "out of bounds", "AIV 3",
     r"the copy touches GM bytes \[4864, 5120\) outside GM argument 'x' \(1536 bytes\)"),
    ("ub-overflow", ub_overflow, 2, 100, npuemu.CapacityError, "capacity", "AIV 0",
     r"UB overflow: buffers need 204800 bytes but it has 196608"),
    ("ninth-tensor", nine_tensors_in_one_position, 1, 9, npuemu.QueueError, "queue", "AIV 0",
     r"more than 8 tensors allocated at once in position VECIN"),
    ("empty-deque", deque_from_empty_queue, 1, 0, npuemu.QueueError, "queue", "AIV 0",
     r"deque from an empty queue"),
    ("double-free", double_free, 1, 0, npuemu.QueueError, "queue", "AIV 0",
     r"free_tensor of a buffer that is free \(double free\)"),
    ("static-beyond-ub", static_tensor_beyond_ub, 1, 48897, npuemu.CapacityError, "capacity", "AIV 0",
     r"a static tensor at byte 1024 of 195588 bytes does not fit in UB"),
    ("local-index", local_index_out_of_range, 1, 16, npuemu.BoundsError, "out of bounds", "AIV 0",
     r"element 16 of a tensor of 16 elements"),
    ("global-index", global_index_out_of_range, 1, 8, npuemu.BoundsError, "out of bounds", "AIV 0",
     r"element 8 of a tensor of 8 elements"),
    ("int-div-zero", integer_division_by_zero, 1, 4, npuemu.DivisionByZeroError, "division by zero", "AIV 0",
     r"floor division \(//\) by zero"),
    ("float-div-zero", float_division_by_zero, 1, 4, npuemu.DivisionByZeroError, "division by zero", "AIV 0",
     r"division \(/\) by zero"),
    ("range-step", zero_range_step, 1, 4, npuemu.ParamRangeError, "parameter range", "AIV 0",
     r"range\(\) step must not be zero"),
]


def launch_fault(kernel, cores, n, **mode) -> npuemu.KernelFault:
    x = np.zeros(6 * 64, np.float32)
    y = np.zeros(6 * 64, np.float32)
    args = (x, y, n) if kernel is gm_out_of_bounds_on_block_3 else (x, n)
    with pytest.raises(npuemu.KernelFault) as info:
        kernel[cores](*args, **mode)
    return info.value


@pytest.mark.parametrize("marker, kernel, cores, n, cls, rule, core, message", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_names_kernel_core_line_and_rule(mode, marker, kernel, cores, n, cls, rule, core, message):
    err = launch_fault(kernel, cores, n, **mode)

    assert type(err) is cls
    assert (err.kernel, err.core, err.rule) == (kernel.__name__, core, rule)
    assert (err.loc.filename, err.loc.lineno, err.loc.function) == (__file__, line_of(marker), kernel.__name__)
    text = str(err)
    assert text.startswith(f"kernel '{kernel.__name__}', core {core}, {__file__}:{line_of(marker)}: [{rule}] ")
    assert f"# <- {marker}" in text.splitlines()[2]
    assert re.search(message, err.detail), err.detail
    assert err.__cause__ is None


@pytest.mark.parametrize("marker, kernel, cores, n, cls, rule, core, message", FAULTS, ids=[f[0] for f in FAULTS])
def test_debug_mode_reports_the_same_fault(marker, kernel, cores, n, cls, rule, core, message):
    compiled = launch_fault(kernel, cores, n, debug=False)
    debug = launch_fault(kernel, cores, n, debug=True)

    assert type(debug) is type(compiled)
    assert str(debug) == str(compiled)
    assert (debug.kernel, debug.core, debug.loc, debug.rule, debug.detail) == \
           (compiled.kernel, compiled.core, compiled.loc, compiled.rule, compiled.detail)


def test_other_cores_run_to_completion_when_one_faults(mode):
    x = np.arange(6 * 64, dtype=np.float32)
    y = np.full(6 * 64, -1, np.float32)
    with pytest.raises(npuemu.BoundsError) as info:
        gm_out_of_bounds_on_block_3[6](x, y, 64, **mode)

    assert info.value.core == "AIV 3"
    np.testing.assert_array_equal(y[:3 * 64], x[:3 * 64])      # as on hardware, every core runs
    np.testing.assert_array_equal(y[4 * 64:], x[4 * 64:])
    np.testing.assert_array_equal(y[3 * 64:4 * 64], -1)        # the faulting copy moved nothing


# --------------------------------------------------------------------------- outputs and binaries


@asc.jit
def add_one(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    per_core = n // asc.get_block_num()
    base = per_core * asc.get_block_idx()
    src = asc.GlobalTensor()
    src.set_global_buffer(x + base, per_core)
    dst = asc.GlobalTensor()
    dst.set_global_buffer(y + base, per_core)
    pipe = asc.TPipe()
    que = asc.TQue(VECIN, 1)
    ones = asc.TBuf(VECCALC)
    pipe.init_buffer(que, 1, 64 * 4)
    pipe.init_buffer(ones, 64 * 4)
    one = ones.get(asc.float32)
    for i in range(64):
        one.set_value(i, 1.0)
    for i in range(per_core // 64):
        t = que.alloc_tensor(asc.float32)
        asc.data_copy(t, src[i * 64:], 64)
        asc.add(t, t, one, 64)
        asc.data_copy(dst[i * 64:], t, 64)
        que.free_tensor(t)


def test_outputs_are_written_in_place_and_the_binary_is_reused(rng):
    x = rng.standard_normal(1024).astype(np.float32)
    backing = np.zeros(2048, np.float32)
    y = backing[512:1536]                                # a contiguous view: used in place, not copied
    add_one[4](x, y, 1024)
    np.testing.assert_array_equal(backing[512:1536], x + 1)
    np.testing.assert_array_equal(backing[:512], 0)

    (binary,) = add_one.binaries()
    dispatcher = binary.module.numba_fn()
    assert len(dispatcher.signatures) == 1

    x2 = rng.standard_normal(1024).astype(np.float32)
    add_one[8](x2, y, 1024)
    np.testing.assert_array_equal(y, x2 + 1)
    assert list(add_one.binaries()) == [binary]           # no new specialisation
    assert binary.module.numba_fn() is dispatcher and len(dispatcher.signatures) == 1

    add_one[2](x, y, 1024, debug=True)                   # debug mode runs the same generated code
    np.testing.assert_array_equal(y, x + 1)
    assert list(add_one.binaries()) == [binary]


def test_non_contiguous_output_is_written_back_even_when_the_kernel_faults(mode):
    x = np.zeros(256, np.float32)
    out = np.zeros((8, 2), np.float32)[:, 0]             # strided: the kernel writes a copy
    assert not out.flags.c_contiguous
    with pytest.raises(npuemu.DivisionByZeroError):
        integer_division_by_zero[1](out, 4, **mode)
    assert out.tolist() == [0, 4, 0, 0, 0, 0, 0, 0]
    out2 = np.full((8, 2), 7, np.float32)[:, 1]
    float_division_by_zero[1](out2, 2, **mode)           # total / (2 - 4): no fault
    assert out2[0] == np.float32(14) / np.float32(-2)
    assert out2.base[0, 0] == 7


@asc.jit
def compile_time_only(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    """Nothing left to do at run time."""
    asc.static_assert(n > 0)


def test_kernel_with_nothing_to_do_at_run_time(mode):
    x = np.ones(4, np.float32)
    compile_time_only[2](x, 3, **mode)
    np.testing.assert_array_equal(x, 1)


def test_platform_option_sets_the_memory_sizes():
    from npuemu.platform import Platform

    small = Platform.custom("test-small-ub", ub_size=96 * 1024)
    x = np.zeros(8, np.float32)
    ub_overflow[1](x, 50)                                # 100 KiB fits the default 192 KiB UB
    with pytest.raises(npuemu.CapacityError, match=r"UB overflow: buffers need 102400 bytes but it has 98304"):
        ub_overflow[1](x, 50, platform=small)
    with pytest.raises(npuemu.CapacityError, match=r"but it has 98304"):
        ub_overflow[1](x, 50, platform="test-small-ub", debug=True)


def test_scalar_argument_out_of_int64_range_is_a_launch_error():
    with pytest.raises(npuemu.LaunchError, match=r"kernel 'double_free': argument 'n' = 18446744073709551616 "
                                                 r"does not fit in 64 bits"):
        double_free[1](np.zeros(8, np.float32), 1 << 64)


@asc.jit
def ub_leftovers(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, write: int, fail: int, addr: int):
    """Copy UB at ``addr`` to ``y`` (``write``: fill it from ``x`` first; ``fail``: then fault)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    t = asc.LocalTensor(asc.uint8, asc.TPosition.VECCALC, addr, n)
    if write:
        asc.data_copy(t, xg, n)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    if fail:
        t.get_value(n)                       # out of bounds: a BoundsError after the copy-in
    asc.data_copy(yg, t, n)


@asc.jit
def ub_through_queue(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, write: int):
    """Copy a TQue buffer placed after ``4 * n`` bytes of TBuf to ``y`` (``write``: fill it from ``x`` first)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    skip = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(skip, 4 * n)
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(q, 1, n)
    t = q.alloc_tensor(asc.uint8)
    if write:
        asc.data_copy(t, xg, n)
        asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(yg, t, n)
    q.free_tensor(t)


@pytest.mark.parametrize("mode", ["compiled", "debug"])
def test_every_launch_starts_from_fresh_local_memory(mode):
    """Local memory is recycled between launches (runtime/cores.py) but always starts as 0xFF."""
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    debug = mode == "debug"
    ub_leftovers[4](x, y, 256, 1, 0, 0, debug=debug)
    assert np.array_equal(y, x)
    with pytest.raises(npuemu.errors.BoundsError):
        ub_leftovers[4](x, y, 256, 1, 1, 0, debug=debug)
    ub_leftovers[4](x, y, 256, 0, 0, 0, debug=debug)             # reads UB nothing has written
    assert (y == 0xFF).all()


@pytest.mark.parametrize("check", ["default", "off"])
def test_only_the_bytes_a_launch_used_are_refilled_and_all_read_fresh(check):
    """A core refills only the leading lm bytes its predecessor was handed (TPipe or static tensors):
    a small kernel after a large one, then a read far up in UB, still sees only 0xFF."""
    x = np.arange(256, dtype=np.uint8)
    y = np.zeros(256, np.uint8)
    high = 150 * 1024
    ub_leftovers[2](x, y, 256, 1, 0, high, check=check)         # writes UB far up
    assert np.array_equal(y, x)
    ub_leftovers[2](x, y, 256, 1, 0, 0, check=check)            # writes only the first bytes
    ub_leftovers[2](x, y, 256, 0, 0, high, check=check)
    assert (y == 0xFF).all()
    ub_through_queue[2](x, y, 256, 1, check=check)
    assert np.array_equal(y, x)
    ub_leftovers[2](x, y, 256, 0, 0, 1024, check=check)         # where the queue's buffer was
    assert (y == 0xFF).all()
    ub_through_queue[2](x, y, 256, 0, check=check)
    assert (y == 0xFF).all()
