"""The cost model (docs/cost-model.md): directions and ratios that follow from documented hardware rules.

No absolute time is asserted: each test compares two launches, or a launch's
pipes, against what the rule implies (bytes over a fixed rate, pipes running
in parallel, HBM bandwidth shared by the cores, the cube's fp32 rate a quarter
of fp16's, a scalar unit that handles one element per instruction).
"""
from __future__ import annotations

import numpy as np
import pytest


import npuemu.asc as asc
from npuemu.cost import CostError, Profile
from npuemu.platform import Platform, get_platform
from npuemu.kernels import add as add_mod, matmul as matmul_mod, matmul_int8 as matmul_int8_mod
from npuemu.kernels.catalog import KERNELS

from benchmarks.bench_cost import vadd_tiles as vadd_kernel       # the pipeline-variant kernel asv tracks

TILE = 512                   # float32 elements per tile (2 KiB)


@asc.jit
def scalar_add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """The same sum element by element on the scalar unit (get_value / set_value)."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 3 * n * 4)
    lx = buf.get_with_offset(n, 0, asc.float32)
    ly = buf.get_with_offset(n, n * 4, asc.float32)
    lz = buf.get_with_offset(n, 2 * n * 4, asc.float32)
    asc.data_copy(lx, xg, n)
    asc.data_copy(ly, yg, n)
    asc.set_flag(asc.HardEvent.MTE2_S, 0)
    asc.wait_flag(asc.HardEvent.MTE2_S, 0)
    for j in range(n):
        lz.set_value(j, lx.get_value(j) + ly.get_value(j))
    asc.set_flag(asc.HardEvent.S_MTE3, 0)
    asc.wait_flag(asc.HardEvent.S_MTE3, 0)
    asc.data_copy(zg, lz, n)


@asc.jit
def vector_add_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    """:func:`scalar_add_kernel` with one vector add."""
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg.set_global_buffer(y, n)
    zg.set_global_buffer(z, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 3 * n * 4)
    lx = buf.get_with_offset(n, 0, asc.float32)
    ly = buf.get_with_offset(n, n * 4, asc.float32)
    lz = buf.get_with_offset(n, 2 * n * 4, asc.float32)
    asc.data_copy(lx, xg, n)
    asc.data_copy(ly, yg, n)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.add(lz, lx, ly, n)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(zg, lz, n)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def uneven_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int, barrier: asc.ConstExpr[int]):
    """AIV 0 copies ``n`` floats, the others 8; then ``barrier`` 1: a hard sync_all, 2: every AIV sets
    cross-core flag 3 in mode 0 once its MTE2 is done and waits for it; then each copies 8."""
    me = asc.get_block_idx()
    xg = asc.GlobalTensor()
    zg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    zg.set_global_buffer(z + me * 8, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, n * 4)
    t = buf.get(asc.float32)
    if me == 0:
        asc.data_copy(t, xg, n)
    else:
        asc.data_copy(t, xg, 8)
    if barrier == 1:
        asc.sync_all()
    if barrier == 2:
        asc.cross_core_set_flag(3, 0, asc.PipeID.PIPE_MTE2)
        asc.cross_core_wait_flag(3)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(zg, t, 8)


def _inputs(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return (rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32),
            np.zeros(n, np.float32))


def _vadd(cores: int, n: int, bufs: int = 2, tile: int = TILE, **options) -> Profile:
    x, y, z = _inputs(n)
    p = vadd_kernel[cores](x, y, z, n, tile, bufs, profile=True, **options)
    np.testing.assert_array_equal(z, x + y)
    return p


# --------------------------------------------------------------------------- data movement


def test_twice_the_bytes_take_twice_the_mte2_time():
    small, big = _vadd(1, 16 * TILE), _vadd(1, 32 * TILE)
    assert big.aiv_mte2_time / small.aiv_mte2_time == pytest.approx(2.0, rel=1e-3)
    assert big.aiv_mte3_time / small.aiv_mte3_time == pytest.approx(2.0, rel=1e-3)
    assert big.gm_bytes == 2 * small.gm_bytes == 2 * 3 * 16 * TILE * 4
    # twice the tiles: twice the vector instructions, each of the same repeats
    assert big.aiv_vec_time / small.aiv_vec_time == pytest.approx(2.0, rel=1e-3)


def test_small_copies_pay_the_fixed_time_of_each_transfer():
    """The same bytes in 2 KiB copies or in 32 KiB copies: every transfer costs its latency on top of its
    bytes (Ascend C: DMA is efficient from about 16 KB per transfer)."""
    n = 4 * 16 * TILE
    small, large = _vadd(1, n), _vadd(1, n, tile=16 * TILE)
    plat = get_platform()
    latency = dict(plat.transfer_latency_ns)["gm_to_ub"] * plat.clock_mhz / 1000          # cycles
    copies_in = 2 * (n // TILE) - 2 * (n // (16 * TILE))            # x and y, per tile
    assert small.busy_cycles("MTE2") - large.busy_cycles("MTE2") == pytest.approx(copies_in * latency, rel=1e-3)
    assert small.gm_bytes == large.gm_bytes
    assert small.kernel_cycles > 2 * large.kernel_cycles


def test_elementwise_kernel_is_mte2_bound_and_grows_with_the_copy():
    small, big = _vadd(1, 16 * TILE), _vadd(1, 64 * TILE)
    assert small.bound == big.bound == "MTE2"        # two inputs in, one out: reading dominates
    assert big.kernel_cycles / small.kernel_cycles == pytest.approx(4.0, rel=0.1)
    assert big.aiv_mte2_ratio > 0.9                   # the other pipes hide under MTE2
    assert big.task_cycles - big.kernel_cycles == pytest.approx(big.overhead_cycles)


def test_double_buffering_overlaps_copy_and_compute():
    single, double = _vadd(1, 32 * TILE, bufs=1), _vadd(1, 32 * TILE, bufs=2)
    for p in (single, double):        # the same work on every pipe
        assert p.busy_cycles("MTE2") == pytest.approx(double.busy_cycles("MTE2"))
        assert p.busy_cycles("V") == pytest.approx(double.busy_cycles("V"))
    pipes = [double.busy_cycles(p) for p in ("MTE2", "V", "MTE3")]
    assert double.kernel_cycles < single.kernel_cycles
    assert double.kernel_cycles < 0.9 * sum(pipes)     # pipes run in parallel
    assert double.kernel_cycles >= max(pipes)         # but no pipe runs faster than its own work


def test_more_cores_help_until_they_share_the_hbm():
    # 32 KiB copies: the fixed time of a transfer is small beside its bytes, so the rates decide
    big_tile = 16 * TILE
    n = 40 * 4 * big_tile
    one, eight, forty = (_vadd(c, n, tile=big_tile) for c in (1, 8, 40))
    assert forty.active_cores == 40
    # 8 cores: each core's MTE2 rate, not the HBM, limits; the time falls about 8x
    assert one.kernel_cycles / eight.kernel_cycles > 6.5
    # 40 cores ask for more than the HBM gives (40 x 100.9 GiB/s > 1.6 TB/s): far less than 5x more
    speedup = eight.kernel_cycles / forty.kernel_cycles
    assert 1.2 < speedup < 0.6 * 5
    assert forty.hbm_utilisation > eight.hbm_utilisation
    assert forty.hbm_utilisation == pytest.approx(1.0, rel=1e-3)      # it takes all the HBM gives
    assert (eight.bound, forty.bound) == ("MTE2", "HBM")
    # a chip with twice the HBM bandwidth speeds up the bandwidth-bound launch, not the single core
    wide = Platform.custom("test-cost-wide-hbm", hbm_bandwidth_gbps=2 * get_platform().hbm_bandwidth_gbps)
    assert _vadd(40, n, tile=big_tile, platform=wide).kernel_cycles < 0.8 * forty.kernel_cycles
    assert _vadd(1, n, tile=big_tile, platform=wide).kernel_cycles == pytest.approx(one.kernel_cycles)


# --------------------------------------------------------------------------- compute


def _cube_cycles(run, a: np.ndarray, b: np.ndarray, kernel) -> float:
    run(a, b, profile=True)
    p = kernel.last_profile
    assert p is not None and p.cores[0].kind == "aic"
    return sum(c.busy["M"] for c in p.cores)


def test_fp32_matmul_takes_four_times_the_mac_time_of_fp16():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 128)), rng.standard_normal((128, 64))
    f16 = _cube_cycles(matmul_mod.matmul, a.astype(np.float16), b.astype(np.float16), matmul_mod.matmul_kernel)
    f32 = _cube_cycles(matmul_mod.matmul, a.astype(np.float32), b.astype(np.float32), matmul_mod.matmul_kernel)
    assert f32 / f16 == pytest.approx(4.0, rel=0.02)
    i8 = _cube_cycles(matmul_int8_mod.matmul_int8, rng.integers(-8, 8, (64, 128), dtype=np.int8),
                      rng.integers(-8, 8, (128, 64), dtype=np.int8), matmul_mod.matmul_kernel)
    assert f16 / i8 == pytest.approx(2.0, rel=0.02)      # int8 at twice fp16's MAC rate


def test_a_scalar_loop_is_much_slower_than_the_vector_unit():
    n = 2048
    x, y, z = _inputs(n)
    vec = vector_add_kernel[1](x, y, z, n, profile=True, check="full")
    np.testing.assert_array_equal(z, x + y)
    z[:] = 0
    sca = scalar_add_kernel[1](x, y, z, n, profile=True, check="full")
    np.testing.assert_array_equal(z, x + y)
    assert sca.bound == "S" and vec.bound == "MTE2"
    # one core: the vector unit's share of the peak is its busy share of the core's time; no cube ran
    assert vec.vector_utilisation == pytest.approx(vec.cores[0].busy["V"] / vec.kernel_cycles)
    assert 0 < vec.vector_utilisation < 0.5 and sca.vector_utilisation == vec.cube_utilisation == 0
    assert sca.kernel_cycles > 10 * vec.kernel_cycles
    assert sca.cores[0].count["S"] == 3 * n                  # two loads and a store per element
    # the wait_flags hold each stage until the one before has finished: the stages add up
    core = vec.cores[0]
    assert core.cycles >= core.busy["MTE2"] + core.busy["V"] + core.busy["MTE3"]


def test_sync_all_and_cross_core_flags_hold_every_core_until_the_last_arrives():
    n = 16384
    x, z = np.arange(n, dtype=np.float32), np.zeros(4 * 8, np.float32)
    free = uneven_kernel[4](x, z, n, 0, profile=True)
    np.testing.assert_array_equal(z, np.tile(x[:8], 4))
    for barrier in (1, 2):                   # a hard sync_all; a cross-core flag every AIV sets and waits for
        z[:] = 0
        held = uneven_kernel[4](x, z, n, barrier, profile=True)
        np.testing.assert_array_equal(z, np.tile(x[:8], 4))
        slow = held.cores[[c.label for c in held.cores].index("AIV 0")]
        aivs = [c for c in held.cores if c.kind == "aiv"]
        # without the barrier the other AIVs finish long before AIV 0; with it, none before AIV 0's copy
        assert max(c.cycles for c in free.cores if c.kind == "aiv" and c.label != "AIV 0") < 0.5 * slow.busy["MTE2"]
        assert min(c.cycles for c in aivs) >= slow.busy["MTE2"], barrier


# --------------------------------------------------------------------------- the profile itself


def test_profiled_launches_compute_the_same_results():
    kernels = {k.name: k for k in KERNELS}
    for name in ("add", "softmax", "matmul", "rmsnorm"):
        k = kernels[name]
        dtype = k.dtypes[0]
        inputs = k.make_inputs(np.random.default_rng(3), dtype, k.test_shapes[0])
        plain = k.run(*inputs)
        timed = k.run(*inputs, profile=True)
        np.testing.assert_array_equal(np.asarray(timed).view(np.uint8), np.asarray(plain).view(np.uint8),
                                      err_msg=name)


def test_profile_is_part_of_the_binary_and_the_report_uses_msprof_names():
    x, y, z = _inputs(8 * TILE)
    assert vadd_kernel[1](x, y, z, 8 * TILE, TILE, 2) is None
    keyed = vadd_kernel.compile([asc.float32, asc.float32, asc.float32, int, TILE, 2], profile=True).key
    plain = vadd_kernel.compile([asc.float32, asc.float32, asc.float32, int, TILE, 2]).key
    assert keyed.profile and not plain.profile and keyed.sha256 != plain.sha256
    assert "; profile" in keyed.describe()
    p = _vadd(2, 8 * TILE)
    text = p.summary()
    for name in ("aiv_time", "aiv_vec_time", "aiv_scalar_time", "aiv_mte2_time", "aiv_mte3_time", "MTE2-bound"):
        assert name in text
    assert set(p.metrics) >= {"aiv_vec_ratio", "aiv_mte2_ratio", "aiv_total_cycles"}
    assert 0 < p.aiv_mte2_ratio <= 1
    with pytest.raises(CostError):
        p.aic_mac_time                                  # no AIC ran
    assert p.task_us == pytest.approx(p.task_cycles / get_platform().clock_mhz)
    # debug mode runs the same generated code in CPython: the same clocks
    assert _vadd(2, 8 * TILE, debug=True).metrics == p.metrics


def test_bundled_add_double_buffers():
    """The bundled add kernel streams through depth-2 queues: its MTE2 and V overlap."""
    x, y = (np.random.default_rng(5).standard_normal(64 * 1024).astype(np.float32) for _ in range(2))
    add_mod.add(x, y, core_num=1, profile=True)
    p = add_mod.add_kernel.last_profile
    core = p.cores[0]
    assert p.bound == "MTE2"
    assert core.cycles < core.busy["MTE2"] + core.busy["V"] + core.busy["MTE3"]


def test_the_trace_has_a_track_per_core_and_pipe(tmp_path):
    import json
    p = _vadd(2, 16 * TILE)
    doc = json.loads(open(p.write_trace(tmp_path / "t.json")).read())
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {names[(0, e["tid"])] for e in spans if e["pid"] == 0} == {"V", "MTE2", "MTE3"}
    for pid, core in enumerate(p.cores):
        for pipe in ("V", "MTE2", "MTE3"):
            mine = sorted((e["ts"], e["ts"] + e["dur"]) for e in spans if e["pid"] == pid and e["cat"] == pipe)
            assert len(mine) == core.count[pipe]
            assert all(a[1] <= b[0] + 1e-9 for a, b in zip(mine, mine[1:]))     # a pipe runs in order
    assert any("asc.add(c, a, b, tile)" == e["name"] for e in spans)
    # double buffering: some copy-in runs while the vector unit works
    v = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["pid"] == 0 and e["cat"] == "V"]
    m = [(e["ts"], e["ts"] + e["dur"]) for e in spans if e["pid"] == 0 and e["cat"] == "MTE2"]
    assert any(ms < ve and me > vs for vs, ve in v for ms, me in m)


@asc.jit
def timed_copy_kernel(x: asc.GlobalAddress, out: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x)
    og = asc.GlobalTensor()
    og.set_global_buffer(out, 2)
    t = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 32768)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    start = asc.get_system_cycle()
    asc.data_copy(t, xg, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    og.set_value(0, asc.get_system_cycle() - start)


def test_get_system_cycle_reads_the_model_clock_when_profiled():
    """In a profiled binary the system counter is the model's clock: between two get_system_cycle calls it
    reads what a copy of four times the bytes takes more: (latency + 4 b) / (latency + b), b the time of the
    small copy's bytes at the GM->UB rate (the 50 MHz counter truncates, the barriers add a little)."""
    out = np.zeros(2, np.int64)
    x = np.zeros(32768, np.float32)
    timed_copy_kernel[1](x, out, 8192, profile=True)
    small = int(out[0])
    timed_copy_kernel[1](x, out, 32768, profile=True)
    big = int(out[0])
    plat = get_platform()
    b = 8192 * 4 / (dict(plat.transfer_gibps)["gm_to_ub"] * (1 << 30)) * 1e9            # ns
    latency = dict(plat.transfer_latency_ns)["gm_to_ub"]
    assert small > 0 and big / small == pytest.approx((latency + 4 * b) / (latency + b), rel=0.1)
