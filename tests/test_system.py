"""System registers and pointers: get_system_cycle, get_program_counter, get_arch_version, trap,
init_soc_state, the system workspace, HCCL contexts and data_cache_preload."""
from __future__ import annotations

import time

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import KernelTypeError, NullPointerError, ParamRangeError, TrapError


@asc.jit
def system_kernel(out: asc.GlobalAddress, ws: asc.GlobalAddress, ctx: asc.GlobalAddress, spin: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 16)
    start = asc.get_system_cycle()
    acc = 0
    for i in range(spin):
        acc += i
    end = asc.get_system_cycle()
    res.set_value(0, start)
    res.set_value(1, end)
    res.set_value(2, asc.get_program_counter())
    res.set_value(3, asc.get_program_counter())
    res.set_value(4, asc.get_arch_version(0))
    res.set_value(5, acc)
    # the system workspace and an HCCL context read back as the uint8 addresses that were stored
    asc.set_sys_workspace(ws + 8)
    w = asc.GlobalTensor()
    w.set_global_buffer(asc.get_sys_workspace(), 8)
    w.set_value(0, 7)
    asc.set_hccl_context(1, ctx)
    c = asc.GlobalTensor()
    c.set_global_buffer(asc.get_hccl_context(1), 4)
    res.set_value(6, c.get_value(2))
    asc.data_cache_preload(res, 64)
    asc.init_soc_state()


def test_system_registers(mode):
    out = np.zeros(16, np.int64)
    ws = np.zeros(32, np.uint8)
    ctx = np.array([5, 6, 42, 9], np.uint8)
    t0 = time.monotonic_ns()
    system_kernel[1](out, ws, ctx, 200_000, **mode)
    t1 = time.monotonic_ns()
    start, end = int(out[0]), int(out[1])
    # the counter ticks at 50 MHz of host monotonic time: inside the launch's window, and moving
    assert t0 * 50 // 1000 <= start <= end <= t1 * 50 // 1000 + 1
    assert end > start
    assert out[2] != out[3]                       # two call sites, two counters
    assert out[4] == 220
    assert out[5] == sum(range(200_000))
    assert ws[8] == 7 and ws[:8].sum() == 0 and ws[9:].sum() == 0
    assert out[6] == 42


def test_system_registers_at_full_check():
    """The same kernel is clean under the race, DCache and initialisation checks (the preload is no read)."""
    out = np.zeros(16, np.int64)
    ws = np.zeros(32, np.uint8)
    system_kernel[1](out, ws, np.array([5, 6, 42, 9], np.uint8), 10, check="full")
    assert out[4] == 220 and out[5] == 45 and out[6] == 42 and ws[8] == 7


@asc.jit
def trap_kernel(out: asc.GlobalAddress, at: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 4)
    res.set_value(0, 1)
    if asc.get_block_idx() == at:
        asc.trap()
    res.set_value(1, 2)


def test_trap_stops_the_core_naming_the_line():
    out = np.zeros(4, np.int64)
    trap_kernel[1](out, 5)             # never reached: runs clean
    assert out[:2].tolist() == [1, 2]
    with pytest.raises(TrapError) as e:
        trap_kernel[2](np.zeros(4, np.int64), 1)
    err = e.value
    assert err.rule == "trap" and err.core == "AIV 1"
    assert "asc.trap()" in str(err)


@asc.jit
def pointer_kernel(out: asc.GlobalAddress, which: int, index: int):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 4)
    if which == 0:
        res.set_global_buffer(asc.get_sys_workspace(), 4)
    else:
        asc.set_hccl_context(0, out)
        res.set_global_buffer(asc.get_hccl_context(index), 4)
    res.set_value(0, 1)


def test_unset_and_out_of_range_pointers_are_reported():
    out = np.zeros(8, np.uint8)
    pointer_kernel[1](out, 1, 0)
    assert out[0] == 1
    with pytest.raises(NullPointerError, match="before any set_sys_workspace"):
        pointer_kernel[1](out, 0, 0)
    with pytest.raises(NullPointerError, match=r"get_hccl_context\(1\) before set_hccl_context"):
        pointer_kernel[1](out, 1, 1)
    with pytest.raises(ParamRangeError, match=r"HCCL context index 2 is outside \[0, 2\)"):
        pointer_kernel[1](out, 1, 2)


def test_a_workspace_must_be_an_address():
    @asc.jit
    def bad(n: int):
        asc.set_sys_workspace(n)

    with pytest.raises(KernelTypeError, match="must be a GlobalAddress"):
        bad[1](3)


@asc.jit
def property_kernel(out: asc.GlobalAddress):
    res = asc.GlobalTensor()
    res.set_global_buffer(out, 8)
    res.set_value(0, asc.property(asc.DEFAULT_C0_SIZE))
    res.set_value(1, asc.property(asc.ONE_BLK_SIZE))
    res.set_value(2, asc.property(asc.TOTAL_L1_SIZE))
    res.set_value(3, asc.property(asc.TOTAL_L0C_SIZE))
    res.set_value(4, asc.property(asc.TOTAL_UB_SIZE))
    res.set_value(5, asc.property(asc.TOTAL_L0A_SIZE) + asc.property(asc.TOTAL_L0B_SIZE))


def test_properties_come_from_the_platform():
    from npuemu.platform import Platform
    out = np.zeros(8, np.int64)
    property_kernel[1](out)
    # Atlas A2/A3 (2201): 512 KiB L1, 128 KiB L0C, 192 KiB UB, 64 KiB L0A and L0B; 32-byte blocks and C0 rows
    assert out[:6].tolist() == [32, 32, 512 * 1024, 128 * 1024, 192 * 1024, 128 * 1024]
    small = Platform.custom("small-l1", base="Ascend910B1", l1_size=256 * 1024)
    property_kernel[1](out, platform=small)
    assert out[2] == 256 * 1024
    with pytest.raises(Exception, match="can only be used inside"):
        asc.property(asc.TOTAL_L1_SIZE)


def test_property_needs_a_property_constant():
    @asc.jit
    def bad(out: asc.GlobalAddress):
        res = asc.GlobalTensor()
        res.set_global_buffer(out, 8)
        res.set_value(0, asc.property(3))

    with pytest.raises(KernelTypeError, match="takes one of the asc property constants"):
        bad[1](np.zeros(8, np.int64))
