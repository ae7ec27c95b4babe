"""Automatic pipe synchronisation (pyasc's ``auto_sync`` / ``insert_sync``) and the static sync analysis.

While a kernel is lowered (at every check level), every access hook
(``Lowerer.local_access`` / ``gm_access``) also records the access here,
with its pipe, memory (local or GM), the byte range when it is known at
compile time (a ``LocalTensorAuto`` tensor) and whether it writes, and
leaves a placeholder line in the generated code just before the instruction.
Runtime ``if``/``else``, loops, ``break``/``continue`` and
``pipe_barrier(PIPE_ALL)`` are recorded as the structure around them.

Once the kernel is lowered, :meth:`SyncPlan.finish` runs a forward dataflow
analysis over that record.  Its state is the set of *pending* accesses:
``(Q, memory, range, write, P)`` means an access by pipe Q that nothing yet
orders before pipe P.  An access by pipe P conflicts with a pending entry
of another pipe Q aimed at P when the memories match, the ranges overlap
(an unknown range overlaps everything) and one of the two writes; each
conflict needs Q ordered before P at that point.  Branches join by union,
loops iterate to a fixpoint (what reaches the loop head from the back edge
and ``continue`` is merged into what enters it), ``break`` joins the loop's
exit.  The result is conservative: a sync is inserted whenever some path
may need it.

With auto sync on (the ``auto_sync``/``insert_sync`` option, or a kernel
that uses ``LocalTensorAuto``) each placeholder becomes, for every pipe Q it
needs ordered before P, ``set_flag(Q_P, AUTO_EVENT_ID)`` immediately
followed by ``wait_flag(Q_P, AUTO_EVENT_ID)``, or one
``pipe_barrier(PIPE_ALL)`` when the core has no flag for the pair (e.g. S on
the cube core).  Otherwise placeholders are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from ..language.enums import HardEvent, KernelType, PipeID
from ..isa import hb

AUTO_EVENT_ID = 7       # the id Ascend C's own automatic synchronisation uses
LOCAL, GM = "local", "GM"
MARK = "#autosync "

_AIV_PIPES = frozenset({hb.S, hb.V, hb.MTE2, hb.MTE3})
_AIC_PIPES = frozenset({hb.M, hb.MTE1, hb.MTE2, hb.MTE3, hb.FIX})


def _events(names: str) -> frozenset[tuple[int, int]]:
    out = set()
    for n in names.split():
        a, b = n.split("_")
        out.add((hb.PIPE_NAMES.index(a), hb.PIPE_NAMES.index(b)))
    return frozenset(out)


# the flag pairs each core type has (isa/sync.py AIV_EVENTS / AIC_EVENTS)
AIV_PAIRS = _events("S_V S_MTE2 S_MTE3 V_S V_MTE2 V_MTE3 MTE2_S MTE2_V MTE2_MTE3 MTE3_S MTE3_V MTE3_MTE2")
AIC_PAIRS = _events("M_MTE1 M_MTE2 M_FIX MTE1_M MTE1_MTE2 MTE1_MTE3 MTE1_FIX MTE2_M MTE2_MTE1 MTE2_MTE3 "
                    "MTE3_MTE1 MTE3_MTE2 FIX_M FIX_MTE1")


@dataclass
class Access:
    pipe: int
    memory: str
    lo: int | None          # byte range [lo, hi) in the memory; None: unknown (aliases everything)
    hi: int | None
    write: bool
    slot: int
    loc: int


@dataclass
class Block:
    kind: str                                   # "seq", "if", "loop"
    items: list[Any] = field(default_factory=list)
    orelse: list[Any] = field(default_factory=list)
    in_else: bool = False


@dataclass
class QueueOp:
    """A TQue operation: ``enque``/``free_tensor`` publish (``src`` for ``dst``), ``deque``/``alloc_tensor``
    take the publication (``role``: ``data`` for enque/deque, ``space`` for free_tensor/alloc_tensor)."""

    qid: int
    role: str
    publish: bool
    src: int
    dst: int


@dataclass
class Jump:
    kind: str                                   # "break" or "continue"


@dataclass
class Sync:
    """An explicit sync of the kernel: a ``wait_flag`` (orders ``src`` before ``dst``) or a full barrier."""

    kind: str                                   # "wait" or "barrier"
    src: int
    dst: int
    loc: int


# of (pipe, memory, lo, hi, write, target pipe, cover); cover: None (pending) or the locations of the
# explicit syncs that order it (verify only, as are ("sync", loc) marks: syncs no access has followed yet);
# ("q", queue id, role, entry): the entry was pending at the queue's latest publication
Pending = frozenset


class SyncPlan:
    """The record of one kernel's accesses and control flow, and the syncs it needs."""

    def __init__(self, kernel_type: KernelType):
        self.kernel_type = kernel_type
        self.root = Block("seq")
        self.stack: list[Block] = [self.root]
        self.slots: list[Access] = []
        self.need: dict[int, set[int]] = {}     # slot -> pipes that must be ordered before its pipe
        self.blocks: dict[int, set[int | None]] = {}       # queue id -> the buffer counts init_buffer gave

    # ------------------------------------------------------------------ recording

    def _items(self) -> list[Any]:
        b = self.stack[-1]
        return b.orelse if b.in_else else b.items

    def access(self, pipe: int, memory: str, region: tuple[int, int] | None, write: bool, loc: int) -> str:
        """Record an access; returns the placeholder line to emit just before the instruction."""
        lo, hi = region if region is not None else (None, None)
        a = Access(pipe, memory, lo, hi, bool(write), len(self.slots), loc)
        self.slots.append(a)
        self._items().append(a)
        return f"{MARK}{a.slot}"

    def barrier(self, loc: int) -> None:
        """``pipe_barrier(PIPE_ALL)`` / ``data_sync_barrier``: everything before is ordered before everything after."""
        self._items().append(Sync("barrier", -1, -1, loc))

    def wait(self, src: int, dst: int, loc: int) -> None:
        """An explicit ``wait_flag`` of event ``src``_``dst``."""
        self._items().append(Sync("wait", src, dst, loc))

    def queue(self, qid: int, role: str, publish: bool, src: int, dst: int) -> None:
        """A TQue operation (see :class:`QueueOp`)."""
        self._items().append(QueueOp(qid, role, publish, src, dst))

    def queue_blocks(self, qid: int, blocks: int | None) -> None:
        """``init_buffer`` gave queue ``qid`` ``blocks`` buffers (None: a run-time count)."""
        self.blocks.setdefault(qid, set()).add(blocks)

    def single_block_queues(self) -> set[int]:
        """Queues every ``init_buffer`` of which gives one buffer: each join takes the latest publication."""
        return {q for q, counts in self.blocks.items() if counts == {1}}

    def jump(self, kind: str) -> None:
        self._items().append(Jump(kind))

    def enter(self, kind: str) -> None:
        """Open a runtime ``if`` (then-branch first) or a loop body."""
        b = Block(kind)
        self._items().append(b)
        self.stack.append(b)

    def orelse(self) -> None:
        self.stack[-1].in_else = True

    def leave(self) -> None:
        self.stack.pop()

    def mark(self) -> tuple[int, int]:
        """Where recording is now (to :meth:`rollback` to, when the lowerer discards code it emitted)."""
        return len(self.stack), len(self._items())

    def rollback(self, mark: tuple[int, int]) -> None:
        depth, n = mark
        del self.stack[depth:]
        del self._items()[n:]

    # ------------------------------------------------------------------ analysis

    def pair_core(self, q: int, p: int) -> frozenset[tuple[int, int]]:
        """The flag pairs certainly legal where pipes ``q`` and ``p`` meet."""
        kt = self.kernel_type
        if kt == KernelType.AIV_ONLY or {q, p} & {hb.V}:
            return AIV_PAIRS
        if kt == KernelType.AIC_ONLY or {q, p} & {hb.M, hb.MTE1, hb.FIX}:
            return AIC_PAIRS
        return AIV_PAIRS & AIC_PAIRS                     # a mixed kernel's S/MTE2/MTE3 code: either core

    def has_flag(self, q: int, p: int) -> bool:
        return (q, p) in self.pair_core(q, p)

    def analyse(self, verify: bool = False) -> None:
        """Fill :attr:`need` for every recorded access (a fixpoint over the recorded control flow).

        ``verify``: instead, model the kernel's own waits and barriers as covering the accesses
        they order, and collect in :attr:`used` those some later conflicting access relies on.
        """
        self.verify = verify
        self.used: set[int] = set()
        self.followed: set[int] = set()
        self.need = {a.slot: set() for a in self.slots}
        self._run(self.root.items, frozenset(), [])

    def _run(self, items: list[Any], state: Pending | None, loops: list[dict[str, Pending]]) -> Pending | None:
        for it in items:
            if state is None:               # unreachable after break/continue
                return None
            if isinstance(it, Access):
                state = self._access(it, state)
            elif isinstance(it, Sync):
                state = self._sync(it, state)
            elif isinstance(it, QueueOp):
                state = self._queue(it, state)
            elif isinstance(it, Jump):
                frame = loops[-1]
                frame[it.kind] = _merge(frame[it.kind], state)
                state = None
            elif it.kind == "if":
                state = _merge(self._run(it.items, state, loops), self._run(it.orelse, state, loops))
            else:
                state = self._loop(it, state, loops)
        return state

    def _loop(self, loop: Block, entry: Pending, loops: list[dict[str, Pending]]) -> Pending:
        head = entry
        while True:
            frame: dict[str, Pending | None] = {"break": None, "continue": None}
            end = self._run(loop.items, head, [*loops, frame])
            new = _merge(_merge(head, frame["continue"]), end)
            if new == head:
                return _merge(head, frame["break"])
            head = new

    def _queue(self, op: "QueueOp", state: Pending) -> Pending:
        """A single-block queue's publication (enque, free_tensor) or the join that takes it (deque,
        alloc_tensor): the join orders the publishing pipe's accesses before the publication."""
        if op.qid not in self.single_block_queues():
            return state
        tag = (op.qid, op.role)
        if op.publish:
            state = frozenset(e for e in state if not (len(e) == 4 and e[1:3] == tag))
            return state | {("q", *tag, e) for e in state if len(e) == 7 and e[0] == op.src and e[5] == op.dst}
        covered = {e[3] for e in state if len(e) == 4 and e[1:3] == tag}
        return frozenset(e for e in state if e not in covered and not (len(e) == 4 and e[1:3] == tag))

    def _sync(self, s: Sync, state: Pending) -> Pending:
        if not self.verify:
            # auto sync orders with syncs of its own: an explicit barrier counts, explicit flags
            # (whose pairing is not tracked) do not
            return frozenset() if s.kind == "barrier" else state
        cover = frozenset({s.loc})
        return frozenset((*e[:6], cover) if len(e) == 7 and e[6] is None and (
            s.kind == "barrier" or (e[0], e[5]) == (s.src, s.dst)) else e for e in state) | {("sync", s.loc)}

    def _access(self, a: Access, state: Pending) -> Pending:
        hits = [e for e in state if len(e) == 7 and e[5] == a.pipe and _same_memory(e[1], a.memory)
                and (e[4] or a.write) and _overlap(e[2], e[3], a.lo, a.hi)]
        if self.verify:
            for e in hits:
                if e[6] is not None:
                    self.used |= e[6]
            passed = {e for e in state if len(e) == 2}
            self.followed |= {e[1] for e in passed}           # syncs some access comes after
            state = state - passed
        else:
            need = {e[0] for e in hits}
            self.need[a.slot] |= need
            if any(not self.has_flag(q, a.pipe) for q in need):
                state = frozenset()                         # ordered by a full barrier
            elif need:
                state = frozenset(e for e in state if not (len(e) == 7 and e[5] == a.pipe and e[0] in need))
        if a.pipe == hb.S and not a.write:
            return state                # a scalar read completes at issue: nothing later can race with it
        add = {(a.pipe, a.memory, a.lo, a.hi, a.write, p, None) for p in range(hb.N_PIPES) if p != a.pipe}
        # an access like one a queue published is not covered by that publication: forget the mark
        return frozenset(e for e in state if not (len(e) == 4 and e[3] in add)) | add

    def redundant(self) -> list[int]:
        """Location ids of the kernel's waits and barriers that order nothing a later access needs.

        Not reported, as part of the flag protocol rather than of the ordering: a sync no access
        follows (the waits that consume the last flags before the kernel ends), and a wait of an
        event another, needed, wait also waits for (its set_flag serves that one too).
        """
        self.analyse(verify=True)
        syncs = [it for it in _walk(self.root.items) if isinstance(it, Sync)]
        needed = {(s.src, s.dst) for s in syncs if s.kind == "wait" and s.loc in self.used}
        return sorted({s.loc for s in syncs if s.loc in self.followed and s.loc not in self.used
                       and (s.kind == "barrier" or (s.src, s.dst) not in needed)})

    def redundant_reports(self, locs: list[Any], kernel: str) -> list[str]:
        """One ``RedundantSyncWarning`` message per redundant wait or barrier, naming its line."""
        return [f"in kernel '{kernel}': this synchronisation orders nothing a later access needs (no access "
                f"after it conflicts with one it orders); it only costs time: remove it (a wait_flag together "
                f"with its set_flag)\n{locs[loc].render()}" for loc in self.redundant()]

    # ------------------------------------------------------------------ code

    def sync_lines(self, slot: int, isa: Callable[[str, str], str], full: bool,
                   cost: float | None = None) -> list[str]:
        """The generated lines ordering what placeholder ``slot`` needs (empty: nothing); ``cost``: the
        scalar issue cycles of a profiled binary, which also times the syncs (isa/cost.py)."""
        a = self.slots[slot]
        need = sorted(self.need.get(slot, ()))
        if not need:
            return []
        loc = f"np.int64({a.loc})"
        if any(not self.has_flag(q, a.pipe) for q in need):
            lines = [f"{isa('sync', 'pipe_barrier')}(_st, np.int64({int(PipeID.PIPE_ALL)}), {loc})"]
            if full:
                lines.append(f"{isa('hb', 'barrier_all')}(_st, _sh, {loc})")
            if cost is not None:
                lines.append(f"{isa('cost', 'barrier_all')}(_st, {cost!r}, {loc})")
            return lines
        lines = []
        for q in need:
            ev = int(HardEvent[f"{hb.PIPE_NAMES[q]}_{hb.PIPE_NAMES[a.pipe]}"])
            for fn in ("set_flag", "wait_flag"):
                args = f"np.int64({ev}), np.int64({AUTO_EVENT_ID}), {loc}"
                lines.append(f"{isa('sync', fn)}(_st, {args})")
                if full:
                    lines.append(f"{isa('hb', fn)}(_st, _sh, {args})")
                if cost is not None:
                    pipe = q if fn == "set_flag" else a.pipe
                    lines.append(f"{isa('cost', fn)}(_st, np.int64({ev}), np.int64({AUTO_EVENT_ID}), "
                                 f"np.int64({pipe}), {cost!r}, {loc})")
        return lines

    def finish(self, lines: list[str], enabled: bool, isa: Callable[[str, str], str], full: bool,
               cost: float | None = None) -> int:
        """Replace the placeholders in ``lines`` (in place) by the syncs they need, or drop them.

        Returns the number of places where synchronisation was inserted.
        """
        if enabled:
            self.analyse()
        out: list[str] = []
        inserted = 0
        for line in lines:
            body = line.lstrip()
            if not body.startswith(MARK):
                out.append(line)
                continue
            indent = line[:len(line) - len(body)]
            text, sep, tag = body.partition("  # @")
            new = self.sync_lines(int(text[len(MARK):]), isa, full, cost) if enabled else []
            inserted += bool(new)
            out.extend(f"{indent}{n}{sep}{tag}" for n in new)
        lines[:] = _fill_empty_blocks(out)
        return inserted


def _merge(a: Pending | None, b: Pending | None) -> Pending | None:
    """Join two states where paths meet (None: no path): pending accesses and ``sync`` marks of either path,
    queue publications (``q`` marks) only when both paths made them."""
    if a is None or b is None:
        return b if a is None else a
    marks = {e for e in a if len(e) == 4} & {e for e in b if len(e) == 4}
    return frozenset(e for e in a | b if len(e) != 4) | marks


def _walk(items: list[Any]) -> Iterator[Any]:
    for it in items:
        yield it
        if isinstance(it, Block):
            yield from _walk(it.items)
            yield from _walk(it.orelse)


def gm_memory(origin: int | None) -> str:
    """The memory name of a GM access: ``GM<rid>`` for a known kernel parameter's region, else ``GM``."""
    return GM if origin is None else f"{GM}{origin}"


def _same_memory(a: str, b: str) -> bool:
    """Whether two memory names may name the same bytes (``GM`` and ``local`` stand for any of their kind)."""
    if a == b:
        return True
    if a.startswith(GM) and b.startswith(GM):
        return a == GM or b == GM
    return not a.startswith(GM) and not b.startswith(GM) and LOCAL in (a, b)


def _overlap(lo: int | None, hi: int | None, lo2: int | None, hi2: int | None) -> bool:
    if lo is None or lo2 is None:
        return True
    return lo < hi2 and lo2 < hi


def _fill_empty_blocks(lines: list[str]) -> list[str]:
    """A block whose only lines were placeholders gets a ``pass``."""
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        head = line.split("  # @")[0].rstrip()
        if head.endswith(":") and not head.lstrip().startswith("#"):
            depth = len(line) - len(line.lstrip())
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if len(nxt) - len(nxt.lstrip()) <= depth or not nxt.strip():
                out.append(" " * (depth + 4) + "pass")
    return out


__all__ = ["SyncPlan", "AUTO_EVENT_ID", "LOCAL", "GM", "gm_memory"]
