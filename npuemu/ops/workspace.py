"""Workspace planning: where each intermediate tensor of an op graph lives in one workspace buffer.

aclnn's executor and ATB's graph ops put every tensor that is neither a user
input nor a user output (the output of ``Contiguous`` or ``Cast``, the result
of a graph node another node reads, a kernel's own workspace) in one device
buffer, the workspace, whose size phase one reports.  Tensors that are never
alive at the same time may share bytes.  Two planners, as opbase's
``memory_allocator.cpp`` has them (superkernel-binaries-tiling.md PART 4):

:class:`MaxAllocator` (the default of ``GetWorkspaceSize``)
    walks the tensors in topological order (by producer node).  A tensor may
    join a *bucket* when the bucket's **last** tensor

    * has a lifetime that does not overlap this one: with the same start they
      overlap, otherwise they do not when ``end_a < start_b``, and
    * is not an input of this tensor's producer node;

    of all such buckets it joins the **last** one (the source loops over every
    bucket and keeps the last match, although its variable is called
    ``firstFitIndex``), else it opens a new bucket.  A bucket is as large as
    the largest ``Align(size)`` of its tensors, ``Align(n) = (n + 32 + 511) &
    ~511`` (32 bytes of slack, 512-byte alignment); bucket offsets are the
    cumulative sum of the sizes before them and every tensor of a bucket sits
    at its bucket's offset.

:class:`LinearAllocator` (``GetLinearWorkspaceSize``)
    no reuse: each tensor at the cumulative offset of the ``Align``ed sizes
    before it.

A lifetime is ``[start, end]``: the index of the node that produces the
tensor and of the last node that reads it (inclusive).  A tensor named twice
is placed once (opbase skips tensors already placed, whose offset is no longer
its ``UINT64_MAX`` marker).  Because buckets only grow by tensors that start
after their last tensor ends, and tensors arrive sorted by start, every tensor
of a bucket ends before the next one starts: no two live tensors share bytes
(:meth:`WorkspacePlan.check` verifies it, and the property tests hold the
planners to it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Hashable, Iterable, Mapping

from ..errors import NpuemuError

ALIGNMENT = 512           # bytes: every workspace tensor starts on a 512-byte boundary
SLACK = 32                # bytes every tensor gets past its end (opbase's Align adds them before rounding)


class WorkspacePlanError(NpuemuError, ValueError):
    """The tensors given to a workspace planner are inconsistent (a negative size, a lifetime ending before it starts)."""


def align(nbytes: int) -> int:
    """opbase's ``Align``: ``(nbytes + 32 + 511) & ~511``."""
    return (int(nbytes) + SLACK + ALIGNMENT - 1) & ~(ALIGNMENT - 1)


@dataclass(frozen=True)
class WorkspaceTensor:
    """A tensor to place: ``size`` bytes alive from node ``start`` (its producer) to node ``end`` (its last reader)."""

    name: Hashable
    size: int
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.size < 0:
            raise WorkspacePlanError(f"workspace tensor {self.name!r}: size {self.size} is negative")
        if self.end < self.start:
            raise WorkspacePlanError(f"workspace tensor {self.name!r}: lifetime [{self.start}, {self.end}] "
                                     f"ends before it starts")

    def overlaps(self, later: "WorkspaceTensor") -> bool:
        """opbase's lifetime test, ``later`` placed after ``self``: same start overlaps, else ``self.end >= later.start``."""
        if self.start == later.start:
            return True
        return not self.end < later.start

    def live_with(self, other: "WorkspaceTensor") -> bool:
        """Whether the two lifetimes share a node (the symmetric interval test the plans are checked with)."""
        return self.start <= other.end and other.start <= self.end


@dataclass(frozen=True)
class Bucket:
    """Bytes ``[offset, offset + size)`` of the workspace, shared by ``tensors`` one after another."""

    offset: int
    size: int
    tensors: tuple[WorkspaceTensor, ...]


@dataclass(frozen=True)
class WorkspacePlan:
    """Where each tensor lives: ``offsets[name]`` bytes into a workspace of ``size`` bytes."""

    allocator: str
    size: int
    offsets: Mapping[Hashable, int]
    tensors: tuple[WorkspaceTensor, ...]
    buckets: tuple[Bucket, ...] = field(default=())

    def offset(self, name: Hashable) -> int:
        return self.offsets[name]

    def extent(self, name: Hashable) -> tuple[int, int]:
        """The bytes ``[begin, end)`` reserved for tensor ``name`` (its ``Align``ed size)."""
        t = self._by_name()[name]
        return self.offsets[name], self.offsets[name] + align(t.size)

    def _by_name(self) -> dict[Hashable, WorkspaceTensor]:
        return {t.name: t for t in self.tensors}

    def conflicts(self) -> list[tuple[Hashable, Hashable]]:
        """Pairs of tensors alive at one node whose reserved bytes overlap (empty for a sound plan)."""
        out = []
        ts = list(self.tensors)
        for i, a in enumerate(ts):
            a0, a1 = self.extent(a.name)
            for b in ts[i + 1:]:
                b0, b1 = self.extent(b.name)
                if a.live_with(b) and a0 < b1 and b0 < a1:
                    out.append((a.name, b.name))
        return out

    def check(self) -> None:
        """Raise :class:`WorkspacePlanError` if two live tensors share bytes or a tensor passes the end."""
        bad = self.conflicts()
        if bad:
            raise WorkspacePlanError(f"{self.allocator}: tensors alive together share bytes: {bad}")
        for t in self.tensors:
            if self.extent(t.name)[1] > self.size:
                raise WorkspacePlanError(f"{self.allocator}: tensor {t.name!r} ends past the workspace "
                                         f"({self.extent(t.name)[1]} > {self.size})")


def _ordered(tensors: Iterable[WorkspaceTensor]) -> list[WorkspaceTensor]:
    """Each name once (the first), sorted stably by producer node: the topological order of the graph."""
    seen: dict[Hashable, WorkspaceTensor] = {}
    for t in tensors:
        seen.setdefault(t.name, t)
    return sorted(seen.values(), key=lambda t: t.start)


class MaxAllocator:
    """opbase's default planner: tensors share buckets when their lifetimes allow (see the module docstring)."""

    name = "MaxAllocator"

    def plan(self, tensors: Iterable[WorkspaceTensor],
             node_inputs: Mapping[int, Collection[Hashable]] | None = None, extra: int = 0) -> WorkspacePlan:
        """Place ``tensors``; ``node_inputs[i]`` names the tensors node ``i`` reads, ``extra`` bytes go at the end.

        ``extra`` is memory past the buckets (opbase adds the AICPU ops' device
        memory there).  Without ``node_inputs``, a tensor's lifetime alone
        decides: a tensor read by node ``i`` lives at least to ``i``, which
        already overlaps every tensor ``i`` produces.
        """
        reads = {i: set(v) for i, v in (node_inputs or {}).items()}
        buckets: list[list[WorkspaceTensor]] = []
        sizes: list[int] = []
        ordered = _ordered(tensors)
        for t in ordered:
            chosen = -1
            for b, members in enumerate(buckets):
                last = members[-1]
                # every match is kept, so the last reusable bucket wins (opbase's "firstFitIndex")
                if not last.overlaps(t) and last.name not in reads.get(t.start, ()):
                    chosen = b
            if chosen < 0:
                buckets.append([t])
                sizes.append(align(t.size))
            else:
                buckets[chosen].append(t)
                sizes[chosen] = max(sizes[chosen], align(t.size))
        offsets: dict[Hashable, int] = {}
        placed: list[Bucket] = []
        offset = 0
        for members, size in zip(buckets, sizes):
            for t in members:
                offsets[t.name] = offset
            placed.append(Bucket(offset, size, tuple(members)))
            offset += size
        return WorkspacePlan(self.name, offset + int(extra), offsets, tuple(ordered), tuple(placed))


class LinearAllocator:
    """opbase's ``GetLinearWorkspaceSize``: every tensor its own ``Align``ed bytes, one after another."""

    name = "LinearAllocator"

    def plan(self, tensors: Iterable[WorkspaceTensor],
             node_inputs: Mapping[int, Collection[Hashable]] | None = None, extra: int = 0) -> WorkspacePlan:
        """Place ``tensors`` without reuse (``node_inputs`` is accepted for symmetry and not needed)."""
        offsets: dict[Hashable, int] = {}
        placed: list[Bucket] = []
        offset = 0
        ordered = _ordered(tensors)
        for t in ordered:
            offsets[t.name] = offset
            placed.append(Bucket(offset, align(t.size), (t,)))
            offset += align(t.size)
        return WorkspacePlan(self.name, offset + int(extra), offsets, tuple(ordered), tuple(placed))


Allocator = MaxAllocator | LinearAllocator


def plan_workspace(tensors: Iterable[WorkspaceTensor], node_inputs: Mapping[int, Collection[Hashable]] | None = None,
                   *, allocator: Allocator | None = None, extra: int = 0) -> WorkspacePlan:
    """Plan with ``allocator`` (default :class:`MaxAllocator`)."""
    return (allocator or MaxAllocator()).plan(list(tensors), node_inputs, extra)


__all__ = ["ALIGNMENT", "SLACK", "align", "WorkspaceTensor", "WorkspacePlan", "Bucket", "MaxAllocator",
           "LinearAllocator", "plan_workspace", "WorkspacePlanError"]
