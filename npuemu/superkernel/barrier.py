"""The inter-kernel barriers a SuperKernel puts between its sub-kernels (spec §1.5), and its deadlock report.

Early start off (``early-start=0``): a full barrier by the SuperKernel's
type between every two sub-kernels: ``SyncAll<false>`` over every core of a
mix SuperKernel, all AICs (flag 11) or all AIVs (flag 14) otherwise.

Early start on (1 or 2, V2): the barrier is split into a set half at the
end of sub-kernel ``k - 1`` on every core of its types (the cores that did
not run it set a complement) and a wait half before sub-kernel ``k``
(``WaitPreTaskEnd<config>``, ``config = class(k-1) << 2 | class(k)``): a
core waits for every core of sub-kernel ``k - 1``'s types to have set,
except where the table of §1.5 B has it do nothing (AIC cores between two
AIV-type sub-kernels, AIV cores between two AIC-type ones).

A notify/wait event makes the barriers around it full ones; stream fusion
replaces the barriers by its dependencies (:mod:`.events`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np

from .. import errors
from ..isa import cross_core as X
from ..isa import state as S
from ..language.enums import KernelType
from ..runtime import scheduler
from ..runtime.cores import AIC, AIV, CoreSpec, core_ranges
from ..isa.task_sync import SK_BARRIER_OBJ, W_PRE_TASK
from .config import MIX_TYPES, type_class
from .events import core_types, event_barriers, stream_dependencies, stream_name

STREAM_OBJ = 226          # race-checker sync objects 226..254 of stream fusion's syncs, by sender
N_STREAM_OBJ = SK_BARRIER_OBJ - STREAM_OBJ

if TYPE_CHECKING:
    from .execute import Run
    from .model import SuperKernel

class Barriers:
    """Which cores have ended which sub-kernel, and the wait of each barrier."""

    def __init__(self, sk: "SuperKernel", cores: Sequence[CoreSpec], words: np.ndarray,
                 explicit_set: Callable[[int, int], bool] = lambda slot, k: False):
        self.sk = sk
        self.cores = cores
        self.words = words
        self.done = [0] * len(cores)            # sub-kernels each core has ended
        self.sets: list[set[int]] = [set() for _ in cores]   # sub-kernels each core has done the set half of
        self.explicit_set = explicit_set        # (slot, k): core slot has called set_next_task_start in k now
        self.waiting: dict[int, int] = {}       # slot -> barrier it waits at
        self.fused = sk.options.stream_fusion and not sk.options.debug_sync_all
        self.deps = stream_dependencies([x.stream for x in sk.subs], sk.events) if self.fused else ()
        self.event_full = event_barriers(len(sk.subs), sk.events)
        self._typed = [[i for i, c in enumerate(cores) if c.core_type in core_types(x.kernel_type)]
                       for x in sk.subs]

    def has_set(self, slot: int, k: int) -> bool:
        """Whether core ``slot`` has done the set half of sub-kernel ``k`` (at its end, as a complement, or
        by its own set_next_task_start)."""
        return k in self.sets[slot] or self.explicit_set(slot, k)

    def complete(self, k: int) -> bool:
        """Whether every core barrier ``k`` waits for has let it pass (a full barrier: ended sub-kernel
        ``k - 1``; a split one: done its set half; stream fusion: ended each dependency)."""
        if self.fused:
            return all(self.done[i] > d for d in self.deps[k] for i in self.typed(d))
        if self.is_full(k):
            return all(self.done[i] >= k for i in range(len(self.cores)))
        return all(self.has_set(i, k - 1) for i in self.group(k))

    def behind(self, k: int) -> list[int]:
        """The cores barrier ``k`` still waits for."""
        if self.fused:
            return sorted({i for d in self.deps[k] for i in self.typed(d) if self.done[i] <= d})
        if self.is_full(k):
            return [i for i in range(len(self.cores)) if self.done[i] < k]
        return [i for i in self.group(k) if not self.has_set(i, k - 1)]

    def is_full(self, k: int) -> bool:
        """Barrier ``k`` is a full one: early start off, ``debug-sync-all`` (a full-core barrier by the
        SuperKernel's type after every sub-kernel), or a notify/wait event next to it."""
        o = self.sk.options
        if o.debug_sync_all:
            return True
        return not self.fused and (o.effective_early_start == 0 or k in self.event_full)

    def typed(self, k: int) -> list[int]:
        """The cores of sub-kernel ``k``'s types (its streams)."""
        return self._typed[k]

    def group(self, k: int) -> list[int]:
        """The cores barrier ``k`` waits for: those that set at the end of sub-kernel ``k - 1``."""
        if self.is_full(k):
            return list(range(len(self.cores)))
        cls = type_class(self.sk.subs[k - 1].kernel_type)
        want = {0: (AIC,), 1: (AIV,), 2: (AIC, AIV)}[cls]
        return [i for i, c in enumerate(self.cores) if c.core_type in want]

    def waits(self, slot: int, k: int) -> bool:
        """Whether core ``slot`` waits at barrier ``k`` (§1.5 B's table; always at a full one; under stream
        fusion the cores of sub-kernel ``k``'s types, when it depends on another)."""
        if self.fused:
            return bool(self.deps[k]) and self.cores[slot].core_type in core_types(self.sk.subs[k].kernel_type)
        if self.is_full(k):
            return True
        p, c = type_class(self.sk.subs[k - 1].kernel_type), type_class(self.sk.subs[k].kernel_type)
        if self.cores[slot].core_type == AIC:
            return not (p == 1 and c == 1)
        return not (p == 0 and c == 0)

    def objects(self, slot: int, k: int, release: bool) -> list[int]:
        """The race checker's sync objects core ``slot`` releases at the end of sub-kernel ``k``, or
        acquires at the barrier before it: one for every barrier, or under stream fusion one per sender."""
        if not self.fused:
            return [SK_BARRIER_OBJ]
        if release:
            return [STREAM_OBJ + k % N_STREAM_OBJ] if slot in self.typed(k) else []
        return [STREAM_OBJ + d % N_STREAM_OBJ for d in self.deps[k]]

    def kind(self, k: int) -> str:
        """The barrier's hardware form, for messages."""
        sk = self.sk
        if self.fused:
            subs = sk.subs
            return "stream-fusion " + ", ".join(f"{stream_name(subs[d].kernel_type, subs[k].kernel_type)} sync on "
                                                 f"sub-kernel {d} '{subs[d].label}'" for d in self.deps[k])
        if self.is_full(k):
            why = ("early-start=0" if sk.options.effective_early_start == 0 else "debug-sync-all=1"
                   if sk.options.debug_sync_all else "a notify/wait event")
            if sk.kernel_type in MIX_TYPES:
                return f"SyncAll<false> over every core ({why})"
            if sk.kernel_type == KernelType.MIX_AIC_1_0:
                return f"all-AIC barrier, flag 11 ({why})"
            return f"all-AIV barrier, flag 14 ({why})"
        cfg = type_class(sk.subs[k - 1].kernel_type) << 2 | type_class(sk.subs[k].kernel_type)
        return f"WaitPreTaskEnd<{cfg}> (early-start={sk.options.effective_early_start})"

    def wait(self, slot: int, k: int) -> Iterator[int]:
        """Core ``slot`` at the barrier before sub-kernel ``k``; yields ``1 + k`` (the barrier's location)."""
        if not self.waits(slot, k):
            return
        while not self.complete(k):
            self.waiting[slot] = k
            yield k + 1
        self.waiting.pop(slot, None)

    def ended(self, slot: int, k: int, sets: bool = True) -> None:
        """Core ``slot`` has ended sub-kernel ``k`` (ran it, or was idle in it); ``sets``: it does the set
        half now (False: the sub-kernel sets for itself, with set_next_task_start)."""
        self.done[slot] = k + 1
        if sets:
            self.sets[slot].add(k)
        self.words[X.PROGRESS] += 1


def explain_deadlock(run: "Run", v: scheduler.LaunchView, live: list[int]) -> errors.DeadlockError:
    """The DeadlockError of a SuperKernel none of whose waiting cores can proceed: per group of cores,
    the sub-kernel, the line and what it waits for, and the SuperKernel rule that explains it."""
    sk, bars = run.sk, run.barriers
    groups: dict[tuple[int, str], list[int]] = {}
    for i in live:
        groups.setdefault((v.waiting_at[i], _reason(run, v, i)), []).append(i)
    lines = []
    for (loc, reason), slots in groups.items():
        lines.append(f"  {core_ranges(v.cores, slots)} at {_where(v, loc)}: {reason}")
    hints = _hints(run, v, live)
    first = live[0]
    k = bars.waiting.get(first, run.sub_of[first])
    loc_id = v.waiting_at[first]
    detail = ("no core can make progress (on hardware the SuperKernel hangs until the task times out); "
              "waiting cores:\n" + "\n".join(lines) + ("".join("\n" + h for h in hints)))
    err = errors.DeadlockError(detail, kernel=sk.label(max(k, 0)), core=v.cores[first].label,
                               loc=v.locs[loc_id] if 0 <= loc_id < len(v.locs) else None,
                               rule="deadlock" if not hints else f"deadlock: {hints[0].split(':')[0].strip()}")
    err.sub_kernel = sk.subs[max(k, 0)].label      # type: ignore[attr-defined]
    err.waits = [(v.cores[i].label, v.locs[v.waiting_at[i]], _reason(run, v, i)) for i in live]
    return err


def _where(v: scheduler.LaunchView, loc_id: int) -> str:
    if 0 <= loc_id < len(v.locs):
        loc = v.locs[loc_id]
        return f"{loc.short()} `{loc.line_text.strip()}`"
    return f"location {loc_id}"


def _reason(run: "Run", v: scheduler.LaunchView, slot: int) -> str:
    bars, sk = run.barriers, run.sk
    if slot in bars.waiting:
        k = bars.waiting[slot]
        return (f"the inter-kernel barrier before sub-kernel {k} '{sk.subs[k].label}' ({bars.kind(k)}) "
                f"{_behind(run, v, k)}")
    k = run.sub_of[slot]
    if slot in run.complementing:
        k = run.complementing[slot]
        what = (scheduler.wait_reason(v, slot) if int(run.states[slot][S.WAIT_KIND]) == X.W_SYNC_ALL else
                "waits for block 0's config word (a new sync_all or the sub-kernel's end)")
        return f"feed-sync-all complement of sub-kernel {k} '{sk.subs[k].label}' on an idle core: {what}"
    if int(run.states[slot][S.WAIT_KIND]) == W_PRE_TASK:
        return f"in sub-kernel {k} '{sk.subs[k].label}': wait_pre_task_end {_behind(run, v, k)}"
    return f"in sub-kernel {k} '{sk.subs[k].label}': {scheduler.wait_reason(v, slot)}"


def _behind(run: "Run", v: scheduler.LaunchView, k: int) -> str:
    """``waits for AIV 0-1 to set ...``: the cores whose set half of sub-kernel ``k - 1`` is missing."""
    bars, sk = run.barriers, run.sk
    behind = bars.behind(k)
    ended = [i for i in behind if bars.done[i] >= k and not bars.is_full(k) and not bars.fused]
    text = (f"waits for {core_ranges(v.cores, behind)} to let it start (the set half of sub-kernel {k - 1} "
            f"'{sk.subs[k - 1].label}')")
    if ended:
        text += (f"; {core_ranges(v.cores, ended)} ended sub-kernel {k - 1} without calling set_next_task_start, "
                 f"and get no complement set because its source calls it")
    return text


def _hints(run: "Run", v: scheduler.LaunchView, live: list[int]) -> list[str]:
    """The SuperKernel rules a deadlock breaks, with what to do."""
    sk, out, bars = run.sk, [], run.barriers
    seen: set[tuple[str, int]] = set()
    for i in live:
        k = bars.waiting.get(i, run.sub_of[i])
        if i in bars.waiting or int(run.states[i][S.WAIT_KIND]) == W_PRE_TASK:
            missing = [c for c in bars.group(k) if bars.done[c] >= k and not bars.has_set(c, k - 1)]
            if missing and ("count", k) not in seen:
                seen.add(("count", k))
                out.append(f"early-start count mismatch: sub-kernel {k - 1} '{sk.subs[k - 1].label}' calls "
                           f"set_next_task_start, so its active cores get no complement set, but "
                           f"{core_ranges(v.cores, missing)} ended it without calling it (a core or tiling-key "
                           f"branch that skips the call); call it exactly once on every core and in every "
                           f"tiling-key branch")
            continue
        k = run.sub_of[i]
        sub = sk.subs[k]
        kind = int(run.states[i][S.WAIT_KIND])
        mode = int(run.states[i][S.WAIT_B])
        full = (kind == X.W_SYNC_ALL) or (kind == X.W_FLAG and mode == 0)
        if full and sub.block_dim < sk.block_dim * (2 if sk.kernel_type == KernelType.MIX_AIC_1_2
                                                     and sub.kernel_type not in MIX_TYPES
                                                     and v.cores[i].core_type == AIV else 1):
            what = "sync_all" if kind == X.W_SYNC_ALL else "a mode-0 cross_core_set_flag/wait_flag full-core sync"
            key = ("full", k)
            if key not in seen:
                seen.add(key)
                fix = ("set feed-sync-all=1 (idle cores then run a complement sync_all), or launch it on every "
                       "block" if kind == X.W_SYNC_ALL else
                       "launch it on the SuperKernel's block dim: feed-sync-all does not complement cross-core "
                       "flags")
                out.append(f"full-core sync with fewer cores: sub-kernel {k} '{sub.label}' runs on "
                           f"{sub.block_dim} of the SuperKernel's {sk.block_dim} blocks and uses {what}, which "
                           f"waits for every core of the SuperKernel; the idle cores never reach it ({fix})")
        if kind == X.W_FLAG and mode == 2 and sub.kernel_type == KernelType.MIX_AIC_1_1 \
                and sk.kernel_type == KernelType.MIX_AIC_1_2 and ("mix", k) not in seen:
            seen.add(("mix", k))
            out.append(f"MIX 1:1 in a 1:2 SuperKernel: sub-kernel {k} '{sub.label}' is MIX_AIC_1_1 but runs with "
                       f"two AIVs per AIC here; a mode-2 flag completes on the AIC only when both AIVs set it, so "
                       f"every AIV must take part in the AIC-AIV sync")
    return out


__all__ = ["Barriers", "explain_deadlock"]
