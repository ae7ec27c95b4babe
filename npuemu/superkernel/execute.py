"""Running a SuperKernel: every core runs the sub-kernels in order, with CANN's barriers between them.

The model (docs/superkernel.md).  CANN generates one kernel whose entry
calls each compiled sub-kernel as a function, gated by the sub-kernel's own
block dim, with inter-kernel synchronisation between the calls.  npuemu does
the same without generating anything: each core of the SuperKernel's launch
is one cooperative program (:func:`_program`) that, for each sub-kernel in
turn, passes the inter-kernel barrier and then, if the core is below the
sub-kernel's block dim, runs the sub-kernel's own compiled per-core function
with a fresh TPipe/queue state, its block num, its GM view
(:mod:`.memory`) and the SuperKernel's shared DCache, local memories and
cross-core state.  A barrier that can never complete, or a sub-kernel wait
that idle cores can never satisfy, is a :class:`~npuemu.errors.DeadlockError`
naming the sub-kernel, each core and its line.  When the sub-kernels are
built with ``profile=True``, :mod:`.profile`'s clocks carry each core's
cost-model time across them (the run's ``profile``).
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .. import errors
from ..isa import cross_core, dcache
from ..isa import state as S
from ..isa.fault import Fault
from ..isa.hb import H_LOCBASE
from ..isa.state import LOG_WORDS
from ..language.enums import KernelType
from ..runtime import scheduler, shadows
from ..runtime.args import Region
from ..runtime.cores import (AIV, check_placement, core_plan, cube_scratch_bytes, new_core_states,
                             recycle_core_states, recycle_local_memory, residency, type_layout, written_bytes)
from ..runtime.faults import FaultContext, translate_fault, without_frames
from ..runtime.launch import SYSTEM_REGION_BYTES, scalar_args
from ..runtime.stops import CoreState, stop_error
from ..runtime.watchdog import Watchdog
from ..language import dtype as dt
from .barrier import Barriers, explain_deadlock
from .config import active, ratio
from .memory import GmLayout
from .scan import early_start_calls
from .events import unordered
from .feed import Workspace, follows, needs_complement
from .model import SuperKernel
from .profile import Clocks, SuperKernelProfile

_DUMMY = np.zeros(1, np.int64)
_KEEP = (S.MAX_STEPS, S.POLL, S.STOP, S.STEP_LIMIT)      # the watchdog's words survive a sub-kernel switch


MIX_HINT = ("; sub-kernel {k} '{sub}' is MIX_AIC_1_1 but runs with two AIVs per AIC in this MIX_AIC_1_2 "
            "SuperKernel: an AIC's mode-2 set counts up both AIVs' flags and its counter counts only when both "
            "AIVs have set, so every AIV must take part in the AIC-AIV sync")


BARRIER_FLAGS = (11, 12, 13, 14)
BARRIER_FLAG_HINT = ("; flags 11-14 are also the SuperKernel's inter-kernel barrier flags (SYNC_AIC_FLAG, "
                     "SYNC_AIV_FLAG, SYNC_AIC_AIV_FLAG, SYNC_AIV_ONLY_ALL): on hardware the count left here lets "
                     "the next inter-kernel barrier pass before the other cores reach it (a race or a hang); "
                     "balance every set with a wait inside the sub-kernel, or use a flag below 11")


class Run:
    """One execution of a SuperKernel (:meth:`run`)."""

    def __init__(self, sk: SuperKernel, timeout: float | None = None, max_steps: int | None = None,
                 profile: bool = False):
        self.sk = sk
        self.platform = sk.platform
        self.cores = core_plan(sk.kernel_type, sk.block_dim)
        check_placement(sk.name, sk.kernel_type, sk.block_dim, self.platform)
        self.ratio = ratio(sk.kernel_type)
        subs = sk.subs
        n = len(self.cores)
        sysmem = np.zeros(max(SYSTEM_REGION_BYTES, cross_core.system_bytes(n)), np.uint8)
        cross_core.init_system(sysmem.view(np.int64), *type_layout(sk.kernel_type, self.cores))
        self.words = sysmem.view(np.int64)
        system = Region("npuemu system workspace", sysmem, dt.uint8)
        try:
            self.scalars = [scalar_args(s.binary, s.values) for s in subs]
            self.gm = GmLayout([s.label for s in subs], [s.binary.facts.gm_params for s in subs],
                               [s.values for s in subs], [list(s.binary.locs) for s in subs], system)
        except errors.LaunchError as exc:
            raise errors.LaunchError(f"SuperKernel '{sk.name}': {exc}") from None
        self.fns = [s.binary.python() if s.debug else s.binary.native() for s in subs]
        uses_dcache = any(s.binary.facts.dcache for s in subs)
        self.dc = np.zeros(dcache.dc_bytes(n if uses_dcache else 0, self.platform), np.uint8)
        self.geo = dcache.pack(self.platform)
        scratch = cube_scratch_bytes(self.platform) if any(s.binary.facts.blas for s in subs) else 0
        made = new_core_states(self.cores, self.platform, scratch, memory=True)
        self.templates = [st.copy() for st, _ in made]
        self.states = [st for st, _ in made]          # each core's st, reset for every sub-kernel
        self.lms = [lm for _, lm in made]
        self.sh: list[np.ndarray] = [_DUMMY] * n      # each core's race-checker shadow of its current sub-kernel
        self.sub_of = [-1] * n                         # the sub-kernel each core is in (-1: before the first)
        self.carried = 0                               # the sub-kernel whose numbering the DCache lines use
        for slot, st in enumerate(self.states):
            st[S.CORE_SLOT] = slot
        # the race checker's state spans the sub-kernels: one GM shadow per region of the SuperKernel (each
        # sub-kernel sees them in its own region order) and one clock/local shadow per core; the barriers
        # between sub-kernels are its cross-core release/acquire edges
        self.full = any(s.binary.check == "full" for s in subs)
        self.core_sh = ([shadows.new_core_shadow(i, n, int(self.templates[i][S.SCRATCH_BASE])) for i in range(n)]
                        if self.full else [_DUMMY] * n)
        self.shared_gsh: tuple[np.ndarray, ...] = ()
        if self.full:
            regs = [*self.gm.regions, None, system]
            self.shared_gsh = shadows.new_gm_shadows([r.bytes.size if r is not None else 0 for r in regs], n, True,
                                                     [r is not None and not r.initialized for r in regs])
        self.gsh = [self._view_gsh(k) for k in range(len(subs))]
        # early start (spec §1.5 B, §1.11): which sub-kernels' own set_next_task_start / wait_pre_task_end
        # take effect (their source calls them, early-start=1, static shape; not the last's set or the first's
        # wait); their active cores get no complement set / wait
        mode1 = sk.options.effective_early_start == 1
        calls = [early_start_calls(s.binary) for s in subs]
        last = len(subs) - 1
        self.own_set = [mode1 and not s.dynamic and c[0] and k < last for k, (s, c) in enumerate(zip(subs, calls))]
        self.own_wait = [mode1 and not s.dynamic and c[1] and k > 0 for k, (s, c) in enumerate(zip(subs, calls))]
        self.barriers = Barriers(sk, self.cores, self.words, self._explicit_set)
        # the cost model's clocks across the sub-kernels (profile.py), when every sub-kernel is profiled
        self.clocks = Clocks(self) if profile or all(s.binary.profile for s in subs) else None
        self.profile: SuperKernelProfile | None = None
        self.sysmem = sysmem
        self.feed = Workspace(len(subs), sk.block_dim, sk.kernel_type) if sk.options.feed_sync_all else None
        self.complementing: dict[int, int] = {}       # slot -> sub-kernel whose sync_all it complements now
        self.complements = [0] * n                     # complement barriers each core ran
        self.watchdog = Watchdog(self.states, timeout, max_steps)
        self.contexts = [FaultContext(sk.label(k), self.gm.tuples[k], self.gm.locs[k], self.cores,
                                      str(s.binary.module.path), s.binary.source) for k, s in enumerate(subs)]
        # the location ids cores yield while they wait: the barriers (one per sub-kernel) and then every
        # sub-kernel's own locations
        self.loc_base = []
        locs: list[Any] = [s.where or errors.SourceLoc("<superkernel>", 0, 0, s.label, "") for s in subs]
        for s in subs:
            self.loc_base.append(len(locs))
            locs.extend(s.binary.locs)
        self.all_locs = locs

    # ------------------------------------------------------------------ per core

    def _set_locs(self, slot: int) -> np.ndarray:
        """Core ``slot``'s words of ``1 +`` the location of its last set of each cross-core flag (a view)."""
        at = cross_core.CORES + slot * cross_core.CORE_WORDS + cross_core.SET_LOC
        return self.words[at:at + cross_core.N_FLAGS]

    def _explicit_set(self, slot: int, k: int) -> bool:
        """Core ``slot`` runs sub-kernel ``k``, whose set_next_task_start takes effect, and has called it."""
        return self.own_set[k] and self.sub_of[slot] == k and self.states[slot][S.SK_SET_N] > 0

    def _view_gsh(self, k: int) -> tuple[np.ndarray, ...]:
        """Sub-kernel ``k``'s GM shadow tuple: the shared shadows in its region order (dummies below full)."""
        order = self.gm.to_unified[k]
        if not self.full or self.sk.subs[k].binary.check != "full":
            return tuple(_DUMMY for _ in order)
        pad, system = len(self.shared_gsh) - 2, len(self.shared_gsh) - 1
        return tuple(self.shared_gsh[u if u >= 0 else pad if u == -1 else system] for u in order)

    def _gsh(self, k: int) -> tuple[np.ndarray, ...]:
        return self.gsh[k]

    def _edge(self, slot: int, k: int, release: bool) -> None:
        """Core ``slot`` releases (ends sub-kernel ``k``'s set half) or acquires (passes the barrier before
        ``k``) the inter-kernel barrier's sync object, for the race checker."""
        sh = self.core_sh[slot]
        if not self.full or sh is _DUMMY:
            return
        view = self._view_gsh(k) if self.sk.subs[k].binary.check == "full" else self._full_view()
        st = self.states[slot]
        for obj in self.barriers.objects(slot, k, release):
            if release:
                cross_core.release_all(st, sh, view, np.int64(obj), np.int64(-1))
            else:
                cross_core.acquire_all(st, sh, view, np.int64(obj), np.int64(-1))

    def _full_view(self) -> tuple[np.ndarray, ...]:
        for k, s in enumerate(self.sk.subs):
            if s.binary.check == "full":
                return self._view_gsh(k)
        return ()

    def _enter(self, slot: int, k: int) -> tuple[Any, ...]:
        """Core ``slot``'s state for sub-kernel ``k`` and the arguments of its kernel instance."""
        sub = self.sk.subs[k]
        st = self.states[slot]
        kept = st[list(_KEEP)].copy()
        np.copyto(st, self.templates[slot])
        st[list(_KEEP)] = kept
        full = sub.binary.check == "full"
        st[S.BLOCK_NUM] = sub.block_dim
        st[S.CORE_SLOT] = slot
        st[S.CHECK_FULL] = full
        st[S.SK_FLAGS] = (S.SK_SUB | (S.SK_GETSET_DCCI if self._getset_dcci(k) else 0)
                          | (S.SK_EARLY_SET if self.own_set[k] else 0) | (S.SK_EARLY_WAIT if self.own_wait[k] else 0))
        st[S.SK_BLOCK_NUM] = self.sk.block_dim
        if self.clocks is not None:
            self.clocks.enter(slot, k, st)
        sh = self.core_sh[slot] if full else _DUMMY
        if full:
            sh[H_LOCBASE] = self.gm.loc_base[k]     # its stamps record SuperKernel-wide location ids
        self.sh[slot] = sh
        log = np.zeros(LOG_WORDS, np.int64) if sub.binary.facts.uses_log else _DUMMY
        return (st, self.lms[slot], self.gm.gm(k), log, sh, self._gsh(k), self.dc, *self.scalars[k])

    def _named(self, k: int, names: tuple[str, ...]) -> bool:
        sub = self.sk.subs[k]
        return sub.label in names or sub.binary.name in names

    def _getset_dcci(self, k: int) -> bool:
        """Whether sub-kernel ``k``'s get_value / set_value clean their lines (CANN's default in a SuperKernel
        for static sub-kernels not named in a dcci option, spec §1.8)."""
        o = self.sk.options
        return not (self.sk.subs[k].dynamic or self._named(k, o.dcci_before_kernel_start)
                    or self._named(k, o.dcci_after_kernel_end) or self._named(k, o.dcci_disable_on_kernel))

    def _end_global_tensors(self, slot: int, k: int, st: np.ndarray) -> None:
        """The sub-kernel returned, its GlobalTensors die: each one's deferred set_value line is cleaned."""
        gm = self.gm.gm(k)
        for p in range(S.SK_PEND, S.SK_PEND + 2 * S.N_PEND, 2):
            prid, at = int(st[p]), int(st[p + 1])
            if not prid:
                continue
            st[p] = 0
            if self.sk.subs[k].binary.check == "full":
                dcache.clean_invalidate_line_full(st, self.sh[slot], self._gsh(k), gm, self.dc, prid - 1, at,
                                                  self.geo, np.int64(-1))
            else:
                dcache.clean_invalidate_line(st, gm, self.dc, prid - 1, at, self.geo, np.int64(-1))

    def _dcci_all(self, slot: int, k: int, st: np.ndarray) -> None:
        """A whole-DCache clean and invalidate on core ``slot`` (dcci options, dynamic shapes)."""
        if self.dc.size <= 64:
            return
        gm = self.gm.gm(k)
        if self.sk.subs[k].binary.check == "full":
            dcache.clean_invalidate_all_full(st, self.sh[slot], self._gsh(k), gm, self.dc, self.geo, np.int64(-1))
        else:
            dcache.clean_invalidate_all(st, gm, self.dc, self.geo, np.int64(-1))

    def _resume(self, slot: int, k: int, st: np.ndarray, gen: Any) -> Iterator[int]:
        """Run a blocking sub-kernel instance to its end, yielding its waits (as SuperKernel locations)."""
        base = self.loc_base[k]
        seen_set = False
        while True:
            if self.own_wait[k]:
                opened = self.barriers.complete(k)
                if opened and not st[S.SK_WAIT_OPEN]:
                    self.words[cross_core.PROGRESS] += 1
                    if self.clocks is not None:
                        self.clocks.opened(st, k)
                st[S.SK_WAIT_OPEN] = opened
            try:
                request = next(gen)
            except StopIteration:
                return
            if not request:
                return
            self._publish(slot, k, st, False)
            if not seen_set and st[S.SK_SET_N]:
                seen_set = True
                self.words[cross_core.PROGRESS] += 1      # the next sub-kernel's cores may start now
            yield base + request

    def _publish(self, slot: int, k: int, st: np.ndarray, end: bool) -> None:
        """Block 0 of sub-kernel ``k`` writes its feed-sync-all config word (syncIdx, syncType, isEnd)."""
        if self.feed is not None and self.cores[slot].block_idx == 0:
            before = self.feed.read(k, self.cores[slot].core_type)
            self.feed.publish(k, self.cores[slot].core_type, int(st[S.SK_SYNC_IDX]), int(st[S.SK_SYNC_TYPE]), end)
            if self.feed.read(k, self.cores[slot].core_type) != before:
                self.words[cross_core.PROGRESS] += 1

    def _complement(self, slot: int, k: int) -> Iterator[int]:
        """An idle core follows block 0's config word of sub-kernel ``k``: one hardware barrier of the same
        type per sync_all, until the word says the sub-kernel has ended (``SuperKernelAutoSyncAllComplement``)."""
        spec, sub = self.cores[slot], self.sk.subs[k]
        assert self.feed is not None
        ctype = follows(spec, sub.kernel_type)
        st = self._enter(slot, k)[0]
        local = 0
        self.complementing[slot] = k
        while True:
            idx, typ, end, magic = self.feed.read(k, ctype)
            if magic:
                raise errors.TrapError(f"feed-sync-all config word of sub-kernel {k} '{sub.label}' has magic "
                                       f"{magic:#x} (0 expected): trap()", kernel=self.sk.label(k),
                                       core=spec.label, loc=sub.where)
            if idx > local:
                aiv_only = typ == 1
                if not (aiv_only and spec.core_type != AIV):        # an AIV-only barrier involves no AIC
                    if self.clocks is not None:
                        self.clocks.arrive(st)
                    while not cross_core.try_sync_all(st, self.sysmem, aiv_only, np.int64(k)):
                        yield k + 1
                    if self.clocks is not None:
                        self.clocks.depart(slot, st, aiv_only)
                    self.complements[slot] += 1
                local += 1
                self.words[cross_core.PROGRESS] += 1
            elif end:
                break
            else:
                yield k + 1
        del self.complementing[slot]

    def _check_early_start(self, slot: int, k: int, st: np.ndarray) -> None:
        """A core that ends a self-waiting sub-kernel without its wait_pre_task_end call."""
        if self.own_wait[k] and not st[S.SK_WAIT_N]:
            sub = self.sk.subs[k]
            err = errors.SyncError(
                f"early-start count mismatch: sub-kernel {k} '{sub.label}' calls wait_pre_task_end (its source "
                f"does), so its active cores get no complement wait, but this core ended it without calling it: "
                f"the previous sub-kernel's set stays counted on this core and a later barrier passes early or the "
                f"counter overflows (a hang or wrong data on hardware); call it exactly once on every core and in "
                f"every tiling-key branch", kernel=self.sk.label(k), core=self.cores[slot].label, loc=sub.where,
                rule="early-start count mismatch")
            err.sub_kernel = sub.label        # type: ignore[attr-defined]
            raise err

    def _carry_to(self, k: int) -> None:
        while self.carried < k:
            self.gm.carry_dcache(self.dc, len(self.cores) if self.dc.size > 64 else 0, self.platform,
                                 self.carried, self.carried + 1)
            self.carried += 1

    def _program(self, slot: int) -> Iterator[int]:
        """Core ``slot``: every sub-kernel in order, each after its barrier; yields ``1 + location`` to wait."""
        sk, spec = self.sk, self.cores[slot]
        opts = sk.options
        for k, sub in enumerate(sk.subs):
            on = active(spec, sub.kernel_type, sub.block_dim, self.ratio)
            # a sub-kernel that waits for itself does so at its call (unless a full barrier comes first)
            if k and (not (on and self.own_wait[k]) or self.barriers.is_full(k)):
                if self.barriers.waits(slot, k):
                    yield from self.barriers.wait(slot, k)
                    self._edge(slot, k, release=False)
                    if self.clocks is not None:
                        self.clocks.passed(slot, k)
            self._carry_to(k)
            self.sub_of[slot] = k
            self.words[cross_core.PROGRESS] += 1
            if not on and self.feed is not None and needs_complement(sk.kernel_type, sk.block_dim,
                                                                     sub.kernel_type, sub.block_dim):
                yield from self._complement(slot, k)
            if on:
                args = self._enter(slot, k)
                st = args[0]
                if self._named(k, opts.dcci_before_kernel_start) or sub.dynamic:
                    self._dcci_all(slot, k, st)
                set_locs = self._set_locs(slot)
                before = set_locs.copy()
                result = self.fns[k](*args)
                if sub.binary.facts.blocking:
                    yield from self._resume(slot, k, st, result)
                # the cross-core sets' source locations are the sub-kernel's own: make them SuperKernel-wide
                fresh = set_locs != before
                set_locs[fresh] += self.loc_base[k]
                self._publish(slot, k, st, True)
                self._check_early_start(slot, k, st)
                self._end_global_tensors(slot, k, st)
                after = self._named(k, opts.dcci_after_kernel_end)
                if after or sub.dynamic or opts.debug_dcci_all:
                    self._dcci_all(slot, k, st)
            elif opts.debug_dcci_all:
                self._dcci_all(slot, k, self._enter(slot, k)[0])
            sets = not (on and self.own_set[k])
            # a full barrier next waits for the sub-kernel's end, even on a core whose set came earlier
            if sets or (k + 1 < len(sk.subs) and self.barriers.is_full(k + 1)):
                self._edge(slot, k, release=True)
            if self.clocks is not None:
                self.clocks.ended(slot, k, on)
            self.barriers.ended(slot, k, sets=sets or self.states[slot][S.SK_SET_N] > 0)
        # the SuperKernel is a normal kernel: its entry ends with the whole-DCache flush
        if self.dc.size > 64:
            st = self._enter(slot, len(sk.subs) - 1)[0]
            st[S.SK_FLAGS] = 0
            last = len(sk.subs) - 1
            if sk.subs[last].binary.check == "full":
                dcache.flush_at_end_full(st, self.sh[slot], self._gsh(last), self.gm.gm(last), self.dc, self.geo)
            else:
                dcache.flush_at_end(st, self.gm.gm(last), self.dc, self.geo)

    # ------------------------------------------------------------------ the launch

    def run(self) -> None:
        try:
            self._run()
        except errors.NpuemuError as exc:
            raise without_frames(exc)

    def _on_fault(self, exc: BaseException, slot: int) -> None:
        k = max(self.sub_of[slot], 0)
        if isinstance(exc, Fault):
            err = translate_fault(exc, self.cores[slot], self.contexts[k])
            sub = self.sk.subs[k]
            if isinstance(err, errors.SyncError) and sub.kernel_type == KernelType.MIX_AIC_1_1 \
                    and self.sk.kernel_type == KernelType.MIX_AIC_1_2:
                err = type(err)(err.detail + MIX_HINT.format(k=k, sub=sub.label), kernel=err.kernel,
                                core=err.core, loc=err.loc, rule="MIX 1:1 in a 1:2 SuperKernel", pipe=err.pipe,
                                buffer=err.buffer)
            if isinstance(err, errors.RaceError) and self.barriers.fused:
                err = self._stream_hint(err, k)
            err.sub_kernel = sub.label          # type: ignore[attr-defined]
            raise err from None
        if isinstance(exc, errors.NpuemuError):
            raise exc
        raise errors.KernelFault(f"{type(exc).__name__}: {exc}", kernel=self.sk.label(k),
                                 core=self.cores[slot].label, rule="runtime error") from exc

    def _stream_hint(self, err: errors.KernelFault, k: int) -> errors.KernelFault:
        """A race in sub-kernel ``k`` under stream fusion: name the earlier sub-kernels nothing orders."""
        subs = self.sk.subs
        free = unordered(k, self.barriers.deps, [s.kernel_type for s in subs])
        if not free:
            return err
        names = ", ".join(f"{j} '{subs[j].label}' (stream {subs[j].stream})" for j in free)
        hint = (f"; stream-fusion=1: nothing orders sub-kernel {k} '{subs[k].label}' (stream {subs[k].stream}) "
                f"after sub-kernel {names}: sub-kernels of different graph streams with no event between them run "
                f"unordered, on one core too; put them on one stream or add an event")
        return type(err)(err.detail + hint, kernel=err.kernel, core=err.core, loc=err.loc,
                         rule="stream fusion: unordered sub-kernels", pipe=err.pipe, buffer=err.buffer)

    def _sub_of_loc(self, loc: Any) -> int:
        """The sub-kernel a source location of the SuperKernel's table belongs to (0 if none)."""
        for k in range(len(self.sk.subs) - 1, -1, -1):
            if any(loc is x for x in self.sk.subs[k].binary.locs):
                return k
        return 0

    def _on_stop(self, states: list[CoreState]) -> None:
        raise stop_error(self.watchdog, self.contexts[0], states)

    def _run(self) -> None:
        sk = self.sk
        plan = residency(sk.kernel_type, sk.block_dim, self.platform)

        def view(finished: list[bool], waiting_at: dict[int, int], not_started: list[int]) -> scheduler.LaunchView:
            return scheduler.LaunchView(sk.name, self.cores, self.states, self.words, self.all_locs, plan,
                                        self.platform.name, finished, waiting_at, not_started)

        def explain(v: scheduler.LaunchView, live: list[int]) -> errors.DeadlockError:
            return explain_deadlock(self, v, live)

        try:
            with self.watchdog:
                scheduler.run_cooperative([self._program(i) for i in range(len(self.cores))], plan, self.words,
                                          self._on_fault, view, self.watchdog, self._on_stop, explain)
            if any(s.binary.facts.cross_core and s.binary.check != "off" for s in sk.subs):
                err = scheduler.unfinished_flags(sk.name, self.cores, self.words, self.all_locs)
                if err is not None:
                    mixed = [k for k, s in enumerate(sk.subs) if s.kernel_type == KernelType.MIX_AIC_1_1]
                    detail, rule = err.detail, err.rule
                    if mixed and sk.kernel_type == KernelType.MIX_AIC_1_2:
                        detail += MIX_HINT.format(k=mixed[0], sub=sk.subs[mixed[0]].label)
                        rule = "MIX 1:1 in a 1:2 SuperKernel"
                    elif getattr(err, "flag", -1) in BARRIER_FLAGS and len(sk.subs) > 1:
                        detail += BARRIER_FLAG_HINT
                        rule = "SuperKernel barrier flag left counting"
                    loc_id = getattr(err, "loc_id", -1)
                    k = (max(j for j, base in enumerate(self.loc_base) if base <= loc_id)
                         if loc_id >= self.loc_base[0] else self._sub_of_loc(err.loc))
                    out = errors.SyncError(detail, kernel=sk.label(k), core=err.core, loc=err.loc, rule=rule)
                    out.sub_kernel = sk.subs[k].label        # type: ignore[attr-defined]
                    raise out
        finally:
            for r in self.gm.regions:
                r.finish()
            full = any(s.binary.check == "full" for s in sk.subs)
            for lm, st in zip(self.lms, self.states):
                recycle_local_memory(lm, written_bytes(st, "full" if full else "off"))
            recycle_core_states(self.states)


def run_superkernel(sk: SuperKernel, *, timeout: float | None = None, max_steps: int | None = None,
                    profile: bool = False) -> Run:
    """Run ``sk`` on its cores (see the module docstring); returns the run, whose ``profile`` is the
    cost model's :class:`~.profile.SuperKernelProfile` when its sub-kernels are built with ``profile=True``."""
    r = Run(sk, timeout, max_steps, profile)
    r.run()
    if r.clocks is not None:
        r.profile = r.clocks.profile()
    return r


__all__ = ["run_superkernel", "active", "Run"]
