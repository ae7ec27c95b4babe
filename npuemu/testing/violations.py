"""Broken invariants and how they are reported.

A checker returns a list of :class:`Violation`; :func:`raise_if` (and the
``assert_*`` forms) raise :class:`TilingInvariantError`, an
``AssertionError`` whose message lists every violation as ``[invariant]
blocks ...: what is wrong, with the numbers``.  The invariants are listed in
:mod:`npuemu.testing.invariants`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

INVARIANTS = (
    "exact coverage", "core bound", "no empty core", "alignment", "UB capacity", "loop/tail consistency",
    "balance", "determinism", "monotonicity", "TCubeTiling legality", "matmul coverage",
)

MAX_LISTED = 12      # violations shown in one error message; the rest are counted


@dataclass(frozen=True)
class Violation:
    """One broken invariant: its name, the blocks it concerns (may be empty) and what is wrong."""

    invariant: str
    detail: str
    blocks: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = f"{_blocks_text(self.blocks)}: " if self.blocks else ""
        return f"[{self.invariant}] {where}{self.detail}"


class TilingInvariantError(AssertionError):
    """A tiling broke one or more invariants; ``violations`` lists them."""

    def __init__(self, subject: str, violations: Sequence[Violation]):
        self.subject = subject
        self.violations = tuple(violations)
        super().__init__(_report(subject, self.violations))


def _report(subject: str, violations: Sequence[Violation]) -> str:
    names = sorted({v.invariant for v in violations}, key=lambda n: (INVARIANTS + (n,)).index(n))
    head = f"tiling violates {', '.join(names)} ({subject})"
    lines = [head] + [f"  {v}" for v in violations[:MAX_LISTED]]
    if len(violations) > MAX_LISTED:
        lines.append(f"  ... and {len(violations) - MAX_LISTED} more")
    return "\n".join(lines)


def _blocks_text(blocks: tuple[int, ...]) -> str:
    """``block 3``, ``blocks 0-46``, ``blocks 1, 5, 9-11``."""
    runs: list[str] = []
    start = prev = None
    for b in sorted(blocks):
        if prev is not None and b == prev + 1:
            prev = b
            continue
        if start is not None:
            runs.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = b
    if start is not None:
        runs.append(str(start) if start == prev else f"{start}-{prev}")
    plural = len(blocks) > 1
    return ("blocks " if plural else "block ") + ", ".join(runs)


def _grouped(found: Iterable[tuple[str, str, int]]) -> list[Violation]:
    """One Violation per distinct (invariant, detail), listing every block it was found on."""
    order: dict[tuple[str, str], list[int]] = {}
    for invariant, detail, block in found:
        order.setdefault((invariant, detail), []).append(block)
    return [Violation(inv, detail, tuple(blocks)) for (inv, detail), blocks in order.items()]


def raise_if(violations: Sequence[Violation], subject: str) -> None:
    """Raise :class:`TilingInvariantError` for ``violations`` unless there are none."""
    if violations:
        raise TilingInvariantError(subject, violations)
