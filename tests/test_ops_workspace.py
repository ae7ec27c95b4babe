"""Workspace planning as opbase does it: MaxAllocator's buckets, LinearAllocator, lifetimes that never share bytes."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npuemu.ops.workspace import (LinearAllocator, MaxAllocator, WorkspacePlanError, WorkspaceTensor, align,
                                  plan_workspace)

T = WorkspaceTensor


def test_align_adds_slack_and_rounds_to_512():
    assert [align(n) for n in (0, 1, 480, 481, 512, 1000, 2000)] == [512, 512, 512, 1024, 1024, 1536, 2048]


def test_a_chain_reuses_the_bucket_of_a_tensor_that_died():
    # t0 is read by node 1, which makes t1: they overlap; t2 starts after t0's last reader
    ts = [T("t0", 100, 0, 1), T("t1", 1000, 1, 2), T("t2", 100, 2, 3)]
    plan = plan_workspace(ts)
    assert plan.offsets == {"t0": 0, "t1": 512, "t2": 0}
    assert plan.size == 512 + 1536
    assert [b.size for b in plan.buckets] == [512, 1536]
    linear = plan_workspace(ts, allocator=LinearAllocator())
    assert linear.offsets == {"t0": 0, "t1": 512, "t2": 2048} and linear.size == 2560
    plan.check()
    linear.check()


def test_same_start_overlaps_and_the_last_reusable_bucket_wins():
    ts = [T("a", 100, 0, 1), T("b", 100, 0, 1), T("c", 2000, 2, 3)]
    plan = MaxAllocator().plan(ts)
    assert plan.offsets["a"] == 0 and plan.offsets["b"] == 512      # same producer: never shared
    assert plan.offsets["c"] == 512                                  # both buckets fit; the last one is taken
    assert plan.size == 512 + 2048 and plan.buckets[1].tensors == (ts[1], ts[2])


def test_a_tensor_never_joins_a_bucket_that_ends_with_an_input_of_its_producer():
    ts = [T("a", 64, 0, 0), T("b", 64, 1, 1)]
    assert plan_workspace(ts).offsets == {"a": 0, "b": 0}            # lifetimes alone: a is dead at node 1
    plan = plan_workspace(ts, {1: ["a"]})                            # but node 1 reads a
    assert plan.offsets == {"a": 0, "b": 512} and plan.size == 1024


def test_sizes_extra_bytes_and_names_given_twice():
    plan = plan_workspace([T("a", 10, 0, 2), T("a", 99999, 5, 6), T("b", 0, 1, 1)], extra=7)
    assert plan.offsets == {"a": 0, "b": 512} and plan.size == 1024 + 7
    assert plan.extent("a") == (0, 512)


def test_bad_tensors_are_refused():
    with pytest.raises(WorkspacePlanError, match="'x'.*negative"):
        T("x", -1, 0, 0)
    with pytest.raises(WorkspacePlanError, match=r"'x'.*\[3, 2\] ends before it starts"):
        T("x", 1, 3, 2)


def test_check_reports_live_tensors_sharing_bytes():
    from npuemu.ops.workspace import WorkspacePlan
    ts = (T("a", 10, 0, 2), T("b", 10, 1, 3))
    bad = WorkspacePlan("hand", 512, {"a": 0, "b": 0}, ts)
    assert bad.conflicts() == [("a", "b")]
    with pytest.raises(WorkspacePlanError, match="share bytes"):
        bad.check()


@st.composite
def graphs(draw):
    """Tensors of a random graph: each produced by some node and read until a later (or the same) node."""
    nodes = draw(st.integers(1, 12))
    n = draw(st.integers(0, 24))
    tensors = []
    for i in range(n):
        start = draw(st.integers(0, nodes - 1))
        end = draw(st.integers(start, nodes - 1))
        tensors.append(T(f"t{i}", draw(st.integers(0, 5000)), start, end))
    reads: dict[int, set[str]] = {}
    for t in tensors:       # a reader of t is a node inside its lifetime; the last one always is
        reads.setdefault(t.end, set()).add(t.name)
        for node in draw(st.lists(st.integers(t.start, t.end), max_size=3)):
            reads.setdefault(node, set()).add(t.name)
    return draw(st.permutations(tensors)), reads


@settings(max_examples=300, deadline=None)
@given(graphs(), st.integers(0, 1000))
def test_plans_never_share_bytes_between_live_tensors(graph, extra):
    tensors, reads = graph
    most = MaxAllocator().plan(tensors, reads, extra)
    linear = LinearAllocator().plan(tensors, reads, extra)
    for plan in (most, linear):
        plan.check()
        assert set(plan.offsets) == {t.name for t in tensors}
        assert all(off % 512 == 0 for off in plan.offsets.values())
        assert sum(b.size for b in plan.buckets) + extra == plan.size
    assert most.size <= linear.size
    assert linear.size == sum(align(t.size) for t in tensors) + extra
    # each bucket is a chain: every tensor ends before the next one of the bucket starts
    for b in most.buckets:
        for a, c in zip(b.tensors, b.tensors[1:]):
            assert a.end < c.start and a.name not in reads.get(c.start, ())
        assert b.size == max(align(t.size) for t in b.tensors)
