"""Notify/wait events between sub-kernels and stream fusion's dependencies (spec §1.5 C and D).

Events.  A graph event from sub-kernel ``s`` to ``r`` (tiling-sink ops, weight
prefetch) is a GM lock word: block 0 of ``s`` writes it after its call, block
0 of ``r`` spins on it before its call.  CANN refuses, at SuperKernel build
time (EB0500), a first sub-kernel that receives, a last one that sends, and
an event from a sub-kernel to itself; a receive before its send could only
spin forever, so npuemu refuses it too.  Where a notify/wait pair sits
between two sub-kernels, CANN adds a full barrier by the SuperKernel's type
(``reason3``): the barrier before ``r`` and the one after ``s`` are full
ones, early start or not.  npuemu models the pair by those barriers, which
order everything the lock word would; it runs no stream outside the
SuperKernel.

Stream fusion (``stream-fusion=1``).  Cube sub-kernels (AIC_ONLY,
MIX_AIC_1_0, MIX) run on the cube stream and vector ones (AIV_ONLY,
MIX_AIV_1_0, MIX) on the vector stream, and the inter-kernel barriers give
way to send/recv pairs: between consecutive sub-kernels of one graph stream
(``Launch(stream=...)``, 0 by default) and along each event.  A sub-kernel
waits only for those it depends on: its cores (those of its types) wait until
every core of each dependency's types has ended it.  Sub-kernels of
different graph streams with no event between them run unordered, so the
race checker reports them if they share data.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import SuperKernelError
from ..runtime.cores import AIC, AIV
from .config import runs_on_aic, runs_on_aiv

Event = tuple[int, int]          # (sending sub-kernel, receiving sub-kernel)


def resolve_events(name: str, labels: Sequence[str], events: Sequence[tuple[int | str, int | str]]) \
        -> tuple[Event, ...]:
    """``events`` as sub-kernel indices (given as indices or names), checked as CANN checks them."""
    out = []
    for pair in events:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise SuperKernelError(f"SuperKernel '{name}': an event is a pair (sender, receiver) of sub-kernel "
                                   f"names or indices, got {pair!r}")
        s, r = (_index(name, labels, x) for x in pair)
        if s == r:
            raise SuperKernelError(f"SuperKernel '{name}': sub-kernel {s} '{labels[s]}' sends an event to "
                                   f"itself; an event's sender and receiver must differ")
        if r == 0:
            raise SuperKernelError(f"SuperKernel '{name}': the first sub-kernel '{labels[0]}' may not receive an "
                                   f"event (from '{labels[s]}')")
        if s == len(labels) - 1:
            raise SuperKernelError(f"SuperKernel '{name}': the last sub-kernel '{labels[s]}' may not send an "
                                   f"event (to '{labels[r]}')")
        if r < s:
            raise SuperKernelError(f"SuperKernel '{name}': sub-kernel {r} '{labels[r]}' receives an event from "
                                   f"the later sub-kernel {s} '{labels[s]}': its block 0 would wait for a lock "
                                   f"word nothing has written yet, forever")
        out.append((s, r))
    return tuple(out)


def _index(name: str, labels: Sequence[str], x: int | str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, str)):
        raise SuperKernelError(f"SuperKernel '{name}': an event names a sub-kernel by name or index, got {x!r}")
    if isinstance(x, int):
        if not 0 <= x < len(labels):
            raise SuperKernelError(f"SuperKernel '{name}': event sub-kernel index {x} is out of range "
                                   f"(it has {len(labels)})")
        return x
    hits = [k for k, label in enumerate(labels) if label == x]
    if len(hits) != 1:
        what = "no" if not hits else f"{len(hits)}"
        raise SuperKernelError(f"SuperKernel '{name}': an event names sub-kernel '{x}', which {what} sub-kernel "
                               f"is called (names: {', '.join(labels)}); name it by index or give it a unique "
                               f"Launch(name=...)")
    return hits[0]


def event_barriers(n: int, events: Sequence[Event]) -> frozenset[int]:
    """The barriers (``k``: the one before sub-kernel ``k``) that events make full ones."""
    out = set()
    for s, r in events:
        out.add(r)
        if s + 1 < n:
            out.add(s + 1)
    return frozenset(out)


def core_types(kernel_type: object) -> tuple[int, ...]:
    """The core types a sub-kernel of ``kernel_type`` occupies (its stream or streams)."""
    return tuple(t for t, on in ((AIC, runs_on_aic(kernel_type)), (AIV, runs_on_aiv(kernel_type))) if on)


def stream_dependencies(streams: Sequence[int], events: Sequence[Event]) -> tuple[tuple[int, ...], ...]:
    """Per sub-kernel, the earlier ones it waits for under stream fusion: the previous sub-kernel of its
    graph stream and the senders of its events."""
    deps: list[set[int]] = [set() for _ in streams]
    last: dict[int, int] = {}
    for k, stream in enumerate(streams):
        if stream in last:
            deps[k].add(last[stream])
        last[stream] = k
    for s, r in events:
        deps[r].add(s)
    return tuple(tuple(sorted(d)) for d in deps)


def unordered(k: int, deps: Sequence[Sequence[int]], kernel_types: Sequence[object]) -> list[int]:
    """The earlier sub-kernels that share a core type with sub-kernel ``k`` and that nothing orders before
    it under stream fusion (not reached through its dependencies)."""
    seen, todo = set(), list(deps[k])
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(deps[d])
    mine = set(core_types(kernel_types[k]))
    return [j for j in range(k) if j not in seen and mine & set(core_types(kernel_types[j]))]


def stream_name(sender: object, receiver: object) -> str:
    """CANN's name of a stream-fusion sync: ``cub:vec``, ``vec:cub``, ... (``cub:vec;vec:cub`` MIX->MIX)."""
    def side(kt: object) -> list[str]:
        return [name for t, name in ((AIC, "cub"), (AIV, "vec")) if t in core_types(kt)]
    s, r = side(sender), side(receiver)
    if len(s) == len(r) == 2:
        return "cub:vec;vec:cub"
    return ";".join(f"{a}:{b}" for a in s for b in r)


__all__ = ["Event", "resolve_events", "event_barriers", "core_types", "stream_dependencies", "unordered",
           "stream_name"]
