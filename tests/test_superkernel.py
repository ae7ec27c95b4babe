"""SuperKernel: options, launch configuration, execution against separate launches (docs/superkernel.md)."""
from __future__ import annotations

import numpy as np
import pytest

from npuemu import superkernel as sk
from npuemu.errors import DeadlockError, SuperKernelError, SuperKernelOptionError, SyncError
from npuemu.language.enums import KernelType as K

from superkernel_kernels import probe_kernel


# --------------------------------------------------------------------------- options (spec §1.2)

def test_ge_string_parses_with_cann_rules():
    with pytest.warns(UserWarning, match="no '='"):
        o = sk.parse_options('"feed-sync-all=1::early-start=0:junk:dcci-after-kernel-end=a,b:split-mode=8"')
    assert o.feed_sync_all and o.early_start == 0 and o.split_mode == 8
    assert o.dcci_after_kernel_end == ("a", "b")
    # split on the first '=': the value of "a=4=5" is "4=5"
    with pytest.raises(SuperKernelOptionError, match="takes a non-negative integer, got '4=5'"):
        sk.parse_options("debug-aic-num=4=5")


@pytest.mark.parametrize("text, message", [
    ("early-start=", "key-value pair is missing"),
    ("=1", "key-value pair is missing"),
    ("early-start=1:early-start=0", "has been set"),
    ("fast-mode=1", "is not supported"),
    ("early-start=3", "takes 0"),
    ("func-align=1", "power of two"),
    ("func-align=96", "power of two"),
    ("split-mode=65", r"\(0, 64\]"),
    ("preload-code=all", "one of"),
    ("feed-sync-all=yes", "0 or 1"),
])
def test_ge_string_errors(text, message):
    with pytest.raises(SuperKernelOptionError, match=message):
        sk.parse_options(text)


def test_dict_form_matches_string_form():
    d = sk.options_from_dict({"feed_sync_all": True, "early-start": 0, "dcci_before_kernel_start": ["x", "y"],
                              "func_align": 1024})
    s = sk.parse_options("feed-sync-all=1:early-start=0:dcci-before-kernel-start=x,y:func-align=1024")
    assert d == s
    with pytest.raises(SuperKernelOptionError, match="not supported"):
        sk.options_from_dict({"turbo": 1})
    with pytest.raises(SuperKernelOptionError, match="has been set"):
        sk.options_from_dict({"early_start": 1, "early-start": 0})
    assert sk.parse_options("stream-fusion=1").effective_early_start == 0


# --------------------------------------------------------------------------- launch configuration (§1.3)

@pytest.mark.parametrize("subs, want", [
    ([(K.AIV_ONLY, 40), (K.AIC_ONLY, 20)], (K.MIX_AIC_1_2, 20)),
    ([(K.MIX_AIC_1_1, 20), (K.AIV_ONLY, 8)], (K.MIX_AIC_1_1, 20)),
    ([(K.AIC_ONLY, 24), (K.AIV_ONLY, 4)], (K.MIX_AIC_1_1, 24)),
    ([(K.AIV_ONLY, 32), (K.AIV_ONLY, 1)], (K.MIX_AIV_1_0, 32)),
    ([(K.AIC_ONLY, 3), (K.MIX_AIC_1_0, 7)], (K.MIX_AIC_1_0, 7)),
    ([(K.MIX_AIC_1_1, 6)], (K.MIX_AIC_1_1, 6)),
    ([(K.MIX_AIC_1_2, 4), (K.AIV_ONLY, 2)], (K.MIX_AIC_1_2, 4)),
    ([(K.AIV_ONLY, 9), (K.AIC_ONLY, 2)], (K.MIX_AIC_1_2, 5)),
])
def test_kernel_type_and_block_dim(subs, want):
    assert sk.launch_config(subs) == want


def test_debug_core_numbers():
    subs = [(K.AIV_ONLY, 8)]
    assert sk.launch_config(subs, 12, 0) == (K.MIX_AIC_1_0, 12)
    assert sk.launch_config(subs, 0, 20) == (K.MIX_AIV_1_0, 20)
    assert sk.launch_config(subs, 6, 6) == (K.MIX_AIC_1_1, 6)
    assert sk.launch_config(subs, 6, 12) == (K.MIX_AIC_1_2, 6)
    with pytest.raises(SuperKernelError, match="ratio 12:20 is invalid"):
        sk.launch_config(subs, 12, 20)


# --------------------------------------------------------------------------- execution

def _probe(bd, slot, mode, out):
    return sk.Launch(probe_kernel, bd, (out, slot, mode), {"check": "full"}, name=f"probe{slot}")


def test_sub_kernels_see_their_own_block_num_and_run_below_their_block_dim():
    out = np.zeros(2 * 64 * 16, np.int32)
    s = sk.combine([_probe(4, 0, 0, out), _probe(2, 1, 0, out)])
    assert (s.kernel_type, s.block_dim) == (K.MIX_AIV_1_0, 4)
    s.run()
    lines = out.reshape(-1, 16)
    np.testing.assert_array_equal(lines[0:4, :3], [[4, 4, i + 1] for i in range(4)])
    # B (bd 2): get_block_num 2, the raw builtin the SuperKernel's 4; blocks 2-3 never run it
    np.testing.assert_array_equal(lines[64:66, :3], [[2, 4, 1], [2, 4, 2]])
    np.testing.assert_array_equal(lines[66:68], 0)


def test_raw_block_num_outside_a_superkernel_is_the_launch_block_num():
    out = np.zeros(64 * 16, np.int32)
    probe_kernel[3](out, 0, 0, check="full")
    np.testing.assert_array_equal(out.reshape(-1, 16)[:3, :3], [[3, 3, 1], [3, 3, 2], [3, 3, 3]])


@pytest.mark.parametrize("early_start", [0, 1])
def test_unfed_sync_all_in_a_smaller_sub_kernel_deadlocks(early_start):
    out = np.zeros(2 * 64 * 16, np.int32)
    s = sk.combine([_probe(4, 0, 0, out), _probe(2, 1, 1, out)], f"early-start={early_start}")
    with pytest.raises(DeadlockError) as e:
        s.run()
    msg = str(e.value)
    assert "probe1 (sub-kernel 1" in msg and "sync_all: 2 of 4" in msg and "feed-sync-all=1" in msg
    assert e.value.core == "AIV 0" and e.value.sub_kernel == "probe1"
    assert e.value.loc is not None and "sync_all" in e.value.loc.line_text


def test_sync_all_on_every_block_of_the_superkernel_runs_clean():
    out = np.zeros(2 * 64 * 16, np.int32)
    sk.combine([_probe(4, 0, 0, out), _probe(4, 1, 1, out)]).run()
    np.testing.assert_array_equal(out.reshape(-1, 16)[64:68, :3], [[4, 4, i + 1] for i in range(4)])


def test_feed_sync_all_complements_each_sync_all_on_the_idle_cores():
    out = np.zeros(2 * 64 * 16, np.int32)
    run = sk.combine([_probe(4, 0, 0, out), _probe(2, 1, 1, out)], "feed-sync-all=1").run()
    assert run.complements == [0, 0, 1, 1]          # AIV 2-3: one complement barrier for B's one sync_all
    np.testing.assert_array_equal(out.reshape(-1, 16)[64:66, :3], [[2, 4, 1], [2, 4, 2]])


def test_feed_sync_all_workspace_and_config_words():
    from npuemu.superkernel.feed import config_word, decode, workspace_bytes
    assert workspace_bytes(3, 24, K.MIX_AIC_1_1) == 12288          # 512 * 24 > 3 * 128
    assert workspace_bytes(3, 24, K.MIX_AIC_1_2) == 24576          # 1:2: 2 * block dim
    assert workspace_bytes(40, 1, K.MIX_AIV_1_0) == 8192           # 512 -> 1024 -> ... while 1 * base <= 5120
    assert workspace_bytes(3, 24, K.MIX_AIC_1_1, enabled=False) == 0
    assert config_word(5, 1, True) == (5 << 32) | (1 << 16) | (1 << 8)
    assert decode(config_word(7, 0, False) | 3) == (7, 0, False, 3)


def test_cross_core_full_sync_with_fewer_cores_deadlocks():
    out = np.zeros(2 * 64 * 16, np.int32)
    s = sk.combine([_probe(4, 0, 0, out), _probe(2, 1, 2, out)], "feed-sync-all=1")
    with pytest.raises(DeadlockError, match="feed-sync-all does not complement cross-core flags"):
        s.run()


# --------------------------------------------------------------------------- bundled chains vs separate launches

def _chain_inputs():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    w = rng.standard_normal((64, 48)).astype(np.float32)
    return x, g, w


def test_norm_matmul_activation_chain_is_bit_identical_to_separate_launches():
    from npuemu.kernels import gelu, matmul, rmsnorm
    x, g, w = _chain_inputs()
    y = rmsnorm.rmsnorm(x, g)
    z = matmul.matmul(y, w)
    o = gelu.gelu(z)
    y2, z2, o2 = np.full_like(y, np.nan), np.full_like(z, np.nan), np.full_like(o, np.nan)
    with sk.scope("chain") as s:           # at check level full: the race checker spans the sub-kernels
        rmsnorm.rmsnorm(x, g, out=y2, check="full")
        matmul.matmul(y2, w, out=z2, check="full")
        gelu.gelu(z2, out=o2, check="full")
        assert np.isnan(o2).all()          # recorded, not run yet
    assert [sub.kernel_type for sub in s.superkernel.subs] == [K.AIV_ONLY, K.AIC_ONLY, K.AIV_ONLY]
    assert (s.superkernel.kernel_type, s.superkernel.block_dim) == (K.MIX_AIC_1_2, 24)
    for a, b in ((y, y2), (z, z2), (o, o2)):
        assert a.tobytes() == b.tobytes()


def test_chain_mixing_aiv_only_and_mix_kernels_is_bit_identical():
    from npuemu.kernels import linear, relu, rmsnorm
    x, g, w = _chain_inputs()
    bias = np.linspace(-1, 1, 48).astype(np.float32)
    y = rmsnorm.rmsnorm(x, g)
    z = linear.linear(y, w, bias, activation="gelu")
    o = relu.relu(z)
    y2, z2, o2 = np.empty_like(y), np.empty_like(z), np.empty_like(o)
    with sk.scope("mixed", "early-start=0") as s:
        rmsnorm.rmsnorm(x, g, out=y2)
        linear.linear(y2, w, bias, activation="gelu", out=z2)
        relu.relu(z2, out=o2)
    assert K.MIX_AIC_1_2 in [sub.kernel_type for sub in s.superkernel.subs]
    for a, b in ((y, y2), (z, z2), (o, o2)):
        assert a.tobytes() == b.tobytes()


def test_scope_named_none_runs_launches_one_by_one():
    out = np.zeros(64 * 16, np.int32)
    with sk.scope(None) as s:
        probe_kernel[2](out, 0, 0)
        np.testing.assert_array_equal(out.reshape(-1, 16)[:2, :3], [[2, 2, 1], [2, 2, 2]])
    assert s.superkernel is None and not s.subs


# --------------------------------------------------------------------------- MIX 1:1 in a 1:2 SuperKernel (§1.7)

def _mix_sk(out, direction, reps, all_aivs):
    from superkernel_kernels import mix_kernel
    filler = np.zeros(64 * 16, np.int32)
    return sk.combine([sk.Launch(mix_kernel, 2, (out, direction, reps, all_aivs), {"check": "full"}, name="x"),
                       _probe(5, 0, 0, filler)])      # AIV_ONLY-like 5 blocks > 2: the SK becomes 1:2


def test_mix_1_1_alone_syncs_with_its_one_aiv():
    from superkernel_kernels import mix_kernel
    out = np.zeros(128 * 16, np.int32)
    mix_kernel[2](out, 0, 1, 0, check="full")
    mix_kernel[2](out, 1, 3, 0, check="full")
    assert out.reshape(-1, 16)[64:66, 0].tolist() == [1, 2]


def test_mix_1_1_with_one_aiv_setting_hangs_in_a_1_2_superkernel():
    out = np.zeros(128 * 16, np.int32)
    s = _mix_sk(out, 0, 1, 0)
    assert (s.kernel_type, s.block_dim) == (K.MIX_AIC_1_2, 3)
    with pytest.raises(DeadlockError, match="MIX 1:1 in a 1:2 SuperKernel") as e:
        s.run()
    assert e.value.sub_kernel == "x" and "1 of 2 AIVs of its AI Core" in str(e.value)


def test_mix_1_1_with_one_aiv_waiting_overflows_the_other_aivs_counter():
    out = np.zeros(128 * 16, np.int32)
    with pytest.raises(SyncError, match="count past 15") as e:
        _mix_sk(out, 1, 16, 0).run()
    assert e.value.sub_kernel == "x" and "MIX 1:1 in a 1:2" in str(e.value)
    with pytest.raises(SyncError, match="counting 3") as e:
        _mix_sk(np.zeros(128 * 16, np.int32), 1, 3, 0).run()     # fewer sets: left over at the end
    assert e.value.core == "AIV 1" and e.value.sub_kernel == "x" and "MIX 1:1 in a 1:2" in str(e.value)


@pytest.mark.parametrize("direction, reps", [(0, 1), (1, 3)])
def test_mix_1_1_with_every_aiv_taking_part_runs_in_a_1_2_superkernel(direction, reps):
    out = np.zeros(128 * 16, np.int32)
    _mix_sk(out, direction, reps, 1).run()
    lines = out.reshape(-1, 16)
    assert lines[:4, 0].tolist() == [1, 2, 3, 4]        # both AIVs of AI Cores 0-1: get_block_idx spans [0, 4)
    assert lines[64:66, 0].tolist() == [1, 2]


def test_cost_comparison_saves_one_launch_overhead_per_fused_launch():
    from npuemu.superkernel.cost import compare
    out = np.zeros(2 * 64 * 16, np.int32)
    profiles = [probe_kernel[4](out, 0, 0, profile=True), probe_kernel[2](out, 1, 0, profile=True)]
    c = compare(profiles)
    overhead = profiles[0].platform.launch_overhead_us
    assert c.separate_us == pytest.approx(profiles[0].task_us + profiles[1].task_us)
    assert c.fused_us == pytest.approx(overhead + profiles[0].kernel_us + profiles[1].kernel_us)
    assert c.overhead_saved_us == pytest.approx(overhead)
    assert "launch overhead saved" in c.report()


# --------------------------------------------------------------------------- barrier forms (§1.5, behaviour 7)

class _Sub:
    def __init__(self, kernel_type, block_dim, stream=0):
        self.kernel_type, self.block_dim, self.label, self.stream = kernel_type, block_dim, "s", stream


def _barriers(types, options, events=(), streams=None):
    from npuemu.runtime.cores import core_plan
    from npuemu.superkernel.barrier import Barriers
    fake = type("SK", (), {})()
    fake.subs = [_Sub(t, 2, st) for t, st in zip(types, streams or [0] * len(types))]
    fake.events = events
    fake.options = sk.as_options(options)
    fake.kernel_type, fake.block_dim = sk.launch_config([(t, 2) for t in types])
    return Barriers(fake, core_plan(fake.kernel_type, fake.block_dim), np.zeros(8, np.int64))


def test_inter_kernel_barrier_forms_follow_cann_tables():
    aiv = _barriers([K.AIV_ONLY, K.AIV_ONLY], "early-start=0")
    assert aiv.kind(1) == "all-AIV barrier, flag 14 (early-start=0)"
    mix = _barriers([K.AIV_ONLY, K.AIC_ONLY], "early-start=0")
    assert mix.kind(1) == "SyncAll<false> over every core (early-start=0)"
    assert all(mix.waits(i, 1) for i in range(len(mix.cores)))
    v2v = _barriers([K.AIV_ONLY, K.AIV_ONLY, K.AIC_ONLY], "early-start=1")
    assert v2v.kind(1) == "WaitPreTaskEnd<5> (early-start=1)"
    aic = [i for i, c in enumerate(v2v.cores) if c.core_type == 1]
    aivs = [i for i, c in enumerate(v2v.cores) if c.core_type == 0]
    assert not any(v2v.waits(i, 1) for i in aic) and all(v2v.waits(i, 1) for i in aivs)   # AIV->AIV: AIC idle
    assert v2v.group(1) == aivs
    c2v = _barriers([K.AIC_ONLY, K.AIV_ONLY], "early-start=1")
    assert c2v.kind(1) == "WaitPreTaskEnd<1> (early-start=1)"
    assert all(c2v.waits(i, 1) for i in range(len(c2v.cores)))                           # AIC waits 11, AIV 13
    assert c2v.group(1) == [i for i, c in enumerate(c2v.cores) if c.core_type == 1]
    dbg = _barriers([K.AIV_ONLY, K.AIV_ONLY, K.AIC_ONLY], "debug-sync-all=1")
    assert dbg.kind(1) == "SyncAll<false> over every core (debug-sync-all=1)"
    assert all(dbg.waits(i, 1) for i in range(len(dbg.cores)))


def test_an_event_makes_the_barriers_around_it_full_ones():
    # events (0 -> 2): the barrier before the receiver (2) and the one after the sender (1) are full,
    # the one before sub-kernel 3 keeps early start's split form
    b = _barriers([K.AIV_ONLY] * 4, "early-start=1", events=((0, 2),))
    assert [b.is_full(k) for k in (1, 2, 3)] == [True, True, False]
    assert b.kind(2) == "all-AIV barrier, flag 14 (a notify/wait event)"
    assert b.kind(3) == "WaitPreTaskEnd<5> (early-start=1)"


def test_stream_fusion_waits_only_for_dependencies():
    # cube A (stream 0), vector B (stream 1), vector C (stream 0): C depends on A (same stream), B on nothing
    b = _barriers([K.AIC_ONLY, K.AIV_ONLY, K.AIV_ONLY], "stream-fusion=1", streams=[0, 1, 0])
    aic = [i for i, c in enumerate(b.cores) if c.core_type == 1]
    aivs = [i for i, c in enumerate(b.cores) if c.core_type == 0]
    assert b.deps == ((), (), (0,))
    assert not any(b.waits(i, 1) for i in range(len(b.cores)))        # B waits for nothing
    assert all(b.waits(i, 2) for i in aivs) and not any(b.waits(i, 2) for i in aic)
    assert b.kind(2) == "stream-fusion cub:vec sync on sub-kernel 0 's'"
    assert not b.complete(2)
    for i in aic:
        b.ended(i, 0)
    assert b.complete(2)                  # the AICs ended A; the AIVs have not even ended B
    e = _barriers([K.AIC_ONLY, K.AIV_ONLY, K.AIV_ONLY], "stream-fusion=1", events=((1, 2),), streams=[0, 1, 0])
    assert e.deps[2] == (0, 1)            # and an event from B


def test_events_are_checked_as_cann_checks_them():
    from npuemu.superkernel.events import resolve_events, stream_dependencies, stream_name
    labels = ["a", "b", "c"]
    assert resolve_events("s", labels, [("a", "c"), (1, 2)]) == ((0, 2), (1, 2))
    for bad, why in [(("b", "a"), "first sub-kernel 'a' may not receive"), (("c", "b"), "last sub-kernel 'c'"),
                     (("b", "b"), "to itself"), (("x", "b"), "'x', which no sub-kernel"), ((0, 5), "out of range"),
                     (("a",), "a pair")]:
        with pytest.raises(SuperKernelError, match=why):
            resolve_events("s", labels, [bad])
    with pytest.raises(SuperKernelError, match="receives an event from the later"):
        resolve_events("s", ["a", "b", "c", "d"], [(2, 1)])
    assert stream_dependencies([0, 0, 1, 0], [(1, 2)]) == ((), (0,), (1,), (1,))
    assert stream_name(K.MIX_AIC_1_2, K.MIX_AIC_1_1) == "cub:vec;vec:cub"
    assert stream_name(K.AIV_ONLY, K.AIC_ONLY) == "vec:cub"


def test_the_example_runs():
    import runpy
    from pathlib import Path
    path = Path(__file__).parent.parent / "examples" / "superkernel_chain.py"
    runpy.run_path(str(path), run_name="__main__")


def test_scope_records_op_layer_calls():
    import npuemu.ops as ops
    a, b = np.arange(64, dtype=np.float32) - 30, np.ones(64, np.float32)
    ref = ops.relu(ops.add(a, b))
    with sk.scope("ops") as s:
        c = ops.add(a, b)
        d = ops.relu(c)
    assert [x.label for x in s.superkernel.subs] == ["binary_kernel", "unary_kernel"]
    assert d.tobytes() == ref.tobytes()


def test_a_count_left_on_a_barrier_flag_names_the_sub_kernel_and_line_that_set_it():
    out = np.zeros(192 * 16, np.int32)
    s = sk.combine([sk.Launch(probe_kernel, 2, (out, 0, 0), name="first"),
                    sk.Launch(probe_kernel, 2, (out, 1, 3), name="setter"),
                    sk.Launch(probe_kernel, 2, (out, 2, 0), name="last")])
    with pytest.raises(SyncError, match="inter-kernel barrier flags") as e:
        s.run()
    assert e.value.sub_kernel == "setter" and "cross_core_set_flag(14" in e.value.loc.line_text
    assert e.value.rule == "SuperKernel barrier flag left counting"


def test_an_event_orders_the_receiver_after_the_senders_end_even_with_early_start():
    from superkernel_kernels import early_kernel
    # a writes y again after set_next_task_start; b reads y: a race with early start (corpus
    # case_sk_early_start_overlap_race), but the event a -> b puts a full barrier before b
    x, y, z = np.arange(16, dtype=np.int32) + 2, np.zeros(16, np.int32), np.zeros(16, np.int32)
    kw = {"check": "full", "tiling_key": 1}
    sk.combine([sk.Launch(early_kernel, 2, (x, y, 1, 0, 1), kw, name="a"),
                sk.Launch(early_kernel, 2, (y, z, 0, 1, 0), kw, name="b")], events=[("a", "b")]).run()
    np.testing.assert_array_equal(z, x)
    with pytest.raises(SuperKernelError, match="the first sub-kernel 'a' may not receive"):
        sk.combine([sk.Launch(early_kernel, 2, (x, y, 1, 0, 1), kw, name="a"),
                    sk.Launch(early_kernel, 2, (y, z, 0, 1, 0), kw, name="b")], events=[("b", "a")])


def test_a_scope_records_events():
    out = np.zeros(128 * 16, np.int32)
    with sk.scope("ev", run=False) as s:
        probe_kernel[2](out, 0, 0)
        probe_kernel[2](out, 1, 0)
        s.event(0, 1)
    assert s.superkernel.events == ((0, 1),)
