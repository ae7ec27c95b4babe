"""The cost model across a SuperKernel (npuemu/superkernel/profile.py, cost.py): relations, not absolute times."""
from __future__ import annotations

import json

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu import superkernel as sk
from npuemu.cost import record_profiles
from npuemu.errors import CostError
from npuemu.superkernel import cost
from npuemu.superkernel.profile import SuperKernelProfile


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def copy_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, work: int):
    """Core i copies ``x[8i:8i+8]`` to ``y`` by DMA, after ``work`` vector fills of a local buffer."""
    i = asc.get_block_idx()
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x + i * 8, 8)
    yg.set_global_buffer(y + i * 8, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    fill = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(fill, 4096)
    t = buf.get(asc.int32)
    f = fill.get(asc.int32)
    for _ in range(work):
        asc.duplicate(f, 7, 1024)
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 8)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def overlap_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, role: int, work: int):
    """Core i copies ``x[8i:8i+8]`` to ``y`` by DMA.  role 1: then set_next_task_start and ``work`` vector
    fills of a local buffer (they overlap the next sub-kernel); role 2: ``work`` fills, then
    wait_pre_task_end before the copy (the fills overlap the previous sub-kernel)."""
    i = asc.get_block_idx()
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x + i * 8, 8)
    yg.set_global_buffer(y + i * 8, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    fill = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(fill, 4096)
    t = buf.get(asc.int32)
    f = fill.get(asc.int32)
    if role == 2:
        for _ in range(work):
            asc.duplicate(f, 7, 1024)
        asc.wait_pre_task_end()
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 8)
    if role == 1:
        asc.set_next_task_start()
        for _ in range(work):
            asc.duplicate(f, 7, 1024)


@asc.jit(kernel_type=asc.KernelType.MIX_AIV_1_0)
def sync_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, heavy: int, work: int):
    """Block ``heavy`` runs ``work`` vector fills, then every core ``sync_all`` and copies ``x[8i:8i+8]`` to
    ``y`` by DMA."""
    i = asc.get_block_idx()
    xg = asc.GlobalTensor()
    yg = asc.GlobalTensor()
    xg.set_global_buffer(x + i * 8, 8)
    yg.set_global_buffer(y + i * 8, 8)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 32)
    fill = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(fill, 4096)
    t = buf.get(asc.int32)
    f = fill.get(asc.int32)
    if i == heavy:
        for _ in range(work):
            asc.duplicate(f, 7, 1024)
    asc.sync_all()
    asc.data_copy(t, xg, 8)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 8)


P = {"profile": True}
WORK = 64           # vector fills after a's set_next_task_start: a's tail, longer than b's copy


def _data():
    return np.arange(32, dtype=np.int32) * 3 + 1, np.zeros(32, np.int32), np.zeros(32, np.int32)


def test_fused_saves_one_launch_overhead_per_launch_and_clocks_run_on(tmp_path):
    x, y, z = _data()
    w = np.zeros(32, np.int32)
    separate = [copy_kernel[4](x, y, 8, profile=True), copy_kernel[2](y, z, 0, profile=True),
                copy_kernel[4](z, w, 4, profile=True)]
    overhead = separate[0].platform.launch_overhead_us
    y[:], z[:], w[:] = 0, 0, 0
    with sk.scope("chain", "early-start=0") as s:
        copy_kernel[4](x, y, 8, profile=True)
        copy_kernel[2](y, z, 0, profile=True)
        copy_kernel[4](z, w, 4, profile=True)
    np.testing.assert_array_equal(w[:16], x[:16])          # the middle launch copies 2 blocks' part
    p = s.profile
    assert isinstance(p, SuperKernelProfile) and p.full_barriers and p.overlap_us == 0.0
    # one launch: one overhead plus the slowest core's end
    assert p.task_us == pytest.approx(overhead + p.kernel_us)
    assert p.kernel_cycles == max(c.cycles for c in p.cores)
    # full barriers: each sub-kernel takes as long as alone, one after the other
    assert p.kernel_cycles >= max(q.kernel_cycles for q in separate)
    assert p.kernel_cycles == pytest.approx(sum(q.kernel_cycles for q in separate), rel=0.02)
    for k, q in enumerate(separate):
        assert p.sub_kernel_cycles(k) == pytest.approx(q.kernel_cycles, rel=0.02)
    # a core's clock is never reset: its spans follow each other, and no core starts a sub-kernel before the
    # slowest core ended the previous one
    for k in range(1, 3):
        slowest = max(end for _, end in p.spans[k - 1].values())
        for core, (start, end) in p.spans[k].items():
            assert start >= slowest and end > start
            assert start >= p.spans[k - 1].get(core, (0.0, 0.0))[1]
    assert set(p.spans[1]) == {"AIV 0", "AIV 1"} and len(p.spans[0]) == len(p.spans[2]) == 4
    c = cost.compare(separate, fused=p)
    assert c.fused_us < c.separate_us
    assert c.overhead_saved_us == pytest.approx(2 * overhead, rel=0.02)
    assert c.overlap_us == 0.0 and "not estimated" not in c.report()
    assert c.fused_us + c.overhead_saved_us + c.overlap_us == pytest.approx(c.separate_us)
    # the estimate from the separate profiles alone agrees when every barrier is a full one
    assert cost.compare(separate).fused_us == pytest.approx(c.fused_us, rel=0.01)
    with open(p.write_trace(tmp_path / "sk.json")) as f:
        trace = json.load(f)
    assert trace["traceEvents"]


def _pair(x, y, z, options):
    return sk.combine([sk.Launch(overlap_kernel, 4, (x, y, 1, WORK), P, name="a"),
                       sk.Launch(overlap_kernel, 4, (y, z, 2, 0), P, name="b")], options)


def test_early_start_overlaps_the_next_sub_kernel_with_the_previous_ones_tail():
    x, y, z = _data()
    separate = [overlap_kernel[4](x, y, 1, WORK, profile=True), overlap_kernel[4](y, z, 2, 0, profile=True)]
    y[:], z[:] = 0, 0
    with record_profiles() as seen:
        p = cost.profile(_pair(x, y, z, "early-start=1"))
    np.testing.assert_array_equal(z, x)
    # the SuperKernel's launch is recorded as any profiled launch (once: not its run with full barriers)
    assert [q.kernel for q in seen] == [p.kernel] and seen[0].kernel_cycles == p.kernel_cycles
    base = p.no_early_start
    assert base is not None and base.full_barriers and not p.full_barriers
    # without early start b starts after a's tail; with it b's copy runs during the tail (a sets before it)
    assert base.kernel_cycles == pytest.approx(sum(q.kernel_cycles for q in separate), rel=0.02)
    assert p.overlap_cycles > 0 and p.kernel_cycles < base.kernel_cycles
    assert p.overlap_cycles == pytest.approx(min(separate[1].kernel_cycles, base.kernel_cycles
                                                 - separate[1].kernel_cycles), rel=0.05)
    assert p.kernel_cycles >= max(q.kernel_cycles for q in separate)
    for core, (start, _) in p.spans[1].items():
        assert start < p.spans[0][core][1]         # b began on the core before a's tail ended
        assert p.spans[1][core][1] >= p.spans[0][core][1]
    c = cost.compare(separate, fused=p)
    overhead = separate[0].platform.launch_overhead_us
    assert c.overhead_saved_us == pytest.approx(overhead, rel=0.02)
    assert c.overlap_us == pytest.approx(p.overlap_us) and c.overlap_us > 0
    assert c.fused_us == pytest.approx(c.separate_us - c.overhead_saved_us - c.overlap_us)
    assert "not estimated" not in c.report()
    # a profile without the run with full barriers does not estimate the overlap
    y[:], z[:] = 0, 0
    q = _pair(x, y, z, "early-start=1").run().profile
    assert q.overlap_us is None and q.kernel_cycles == p.kernel_cycles
    assert "not estimated" in cost.compare(separate, fused=q).report()


@pytest.mark.parametrize("options", ["early-start=2", "early-start=1:debug-sync-all=1"])
def test_without_early_start_there_is_no_overlap(options):
    x, y, z = _data()
    p = cost.profile(_pair(x, y, z, options))
    np.testing.assert_array_equal(z, x)
    assert p.overlap_cycles == pytest.approx(0.0)
    for start, _ in p.spans[1].values():
        assert start >= max(end for _, end in p.spans[0].values())


def test_profiling_needs_profiled_sub_kernels():
    x, y, z = _data()
    s = sk.combine([(copy_kernel, 4, (x, y, 0)), sk.Launch(copy_kernel, 4, (y, z, 0), P)], "early-start=0")
    with pytest.raises(CostError, match="copy_kernel are not built with profile=True"):
        s.run(profile=True)
    assert s.run().profile is None
    with pytest.raises(CostError, match="not built with profile=True"):
        cost.profile(s)


def test_the_run_with_full_barriers_leaves_gm_as_it_was():
    x, y, z = _data()
    y[:] = 5
    # b reads y before a writes it: a run with full barriers that kept its outputs would feed b a's data
    s = sk.combine([sk.Launch(copy_kernel, 4, (y, z, 0), P, name="b"),
                    sk.Launch(copy_kernel, 4, (x, y, 0), P, name="a")], "early-start=1")
    p = cost.profile(s)
    assert (z == 5).all()
    np.testing.assert_array_equal(y, x)
    # AIV sub-kernels without early-start calls: the split barriers wait as full ones do
    assert p.no_early_start is not None and p.overlap_cycles == pytest.approx(0.0)


def test_sync_all_times_hold_across_sub_kernels_and_complements():
    x, y, z = _data()
    # a: sync_all on 2 of 4 blocks (the idle cores complement it); b: block 3 is slow before its sync_all
    alone = sync_kernel[4](y, z, 3, WORK, profile=True)
    s = sk.combine([sk.Launch(sync_kernel, 2, (x, y, 9, 0), P, name="a"),
                    sk.Launch(sync_kernel, 4, (y, z, 3, WORK), P, name="b")], "feed-sync-all=1:early-start=0")
    r = s.run(profile=True)
    p = r.profile
    np.testing.assert_array_equal(z[:16], x[:16])
    assert r.complements == [0, 0, 1, 1]
    # every core of b leaves its sync_all after block 3 arrives: each ends b no sooner than b alone takes
    start = min(a for a, _ in p.spans[1].values())
    for core, (_, end) in p.spans[1].items():
        assert end - start == pytest.approx(alone.kernel_cycles, rel=0.02), core
    assert p.sub_kernel_cycles(1) == pytest.approx(alone.kernel_cycles, rel=0.02)


def test_stream_fusion_gains_over_full_barriers_when_streams_are_independent():
    from superkernel_kernels import relay_kernel
    x, y, z, w = (np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32),
                  np.zeros(16, np.int32))
    kw = {"profile": True}
    # a and c on stream 0, b on stream 1: b waits for nothing, c for a only
    s = sk.combine([sk.Launch(relay_kernel, 2, (x, y, 0), kw, name="a", stream=0),
                    sk.Launch(relay_kernel, 2, (x, z, 0), kw, name="b", stream=1),
                    sk.Launch(relay_kernel, 2, (y, w, 1), kw, name="c", stream=0)], "stream-fusion=1")
    p = cost.profile(s)
    assert p.overlap_us is not None and p.overlap_us >= 0
    assert p.no_early_start.kernel_cycles >= p.kernel_cycles
    np.testing.assert_array_equal(w, np.roll(x, -8))
