"""What a sweep tells people and CI: a progress line while it runs, a summary table, a JSON result file."""
from __future__ import annotations

import json
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from .execute import FAILED, PASSED, REFUSED, CaseResult

JSON_VERSION = 1


class Progress:
    """``[done/total] failed N, refused N; slowest: case (s)``, redrawn in place on a terminal, else a line
    every ``every`` seconds (and at the end)."""

    def __init__(self, total: int, out: TextIO | None = None, every: float = 2.0):
        self.total = total
        self.out = sys.stderr if out is None else out
        self.every = every
        self.done = self.failed = self.refused = 0
        self.slowest: CaseResult | None = None
        self._start = self._last = time.perf_counter()
        self._tty = bool(getattr(self.out, "isatty", lambda: False)())

    def update(self, result: CaseResult) -> None:
        self.done += 1
        self.failed += result.status == FAILED
        self.refused += result.status == REFUSED
        if self.slowest is None or result.seconds > self.slowest.seconds:
            self.slowest = result
        now = time.perf_counter()
        if self._tty or now - self._last >= self.every or self.done == self.total:
            self._last = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        width = len(str(self.total))
        text = (f"[{self.done:>{width}}/{self.total}] failed {self.failed}, refused {self.refused}  "
                f"{now - self._start:6.1f} s")
        if self.slowest is not None:
            text += f"; slowest: {self.slowest.case.id} ({self.slowest.seconds:.2f} s)"
        if self._tty:
            end = "\n" if self.done == self.total else ""
            self.out.write("\r\x1b[2K" + text[:200] + end)
        else:
            self.out.write(text + "\n")
        self.out.flush()


@dataclass
class SweepReport:
    """The results of a sweep, in the order of its cases, and how it ran."""

    results: list[CaseResult]
    seconds: float = 0.0
    mode: str = "in-process"                  # in-process | the scheduler's address
    workers: int = 1
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if r.status == FAILED]

    @property
    def ok(self) -> bool:
        """No case failed (refusals are reported, not failures)."""
        return not self.failed

    def outcomes(self) -> set[tuple[Any, ...]]:
        """The set of :meth:`CaseResult.outcome`: equal for two runs of the same cases, however they ran."""
        return {r.outcome() for r in self.results}

    def counts(self) -> dict[str, int]:
        c = Counter(r.status for r in self.results)
        return {s: c.get(s, 0) for s in (PASSED, FAILED, REFUSED)}

    def table(self, failures: int = 20) -> str:
        """A summary per target (cases, passed, failed, refused, slowest) and the first failures, one line each."""
        rows: dict[tuple[str, str], Counter[str]] = {}
        slow: dict[tuple[str, str], float] = {}
        for r in self.results:
            key = (r.case.kind, r.case.target)
            rows.setdefault(key, Counter())[r.status] += 1
            slow[key] = max(slow.get(key, 0.0), r.seconds)
        width = max([len(t) for _, t in rows] + [6])
        lines = [f"{'kind':<9} {'target':<{width}} {'cases':>6} {'passed':>7} {'failed':>7} {'refused':>8} "
                 f"{'slowest s':>10}"]
        for (kind, target), c in sorted(rows.items()):
            lines.append(f"{kind:<9} {target:<{width}} {sum(c.values()):>6} {c[PASSED]:>7} {c[FAILED]:>7} "
                         f"{c[REFUSED]:>8} {slow[(kind, target)]:>10.3f}")
        n = self.counts()
        lines.append(f"{len(self.results)} cases: {n[PASSED]} passed, {n[FAILED]} failed, {n[REFUSED]} refused "
                     f"in {self.seconds:.1f} s ({self.mode}, {self.workers} worker(s))")
        for r in self.failed[:failures]:
            lines.append(f"FAILED {r.case.id}: {r.error.short() if r.error else ''}")
            if r.error is not None and r.error.example:
                lines.extend("    " + s for s in r.error.example.splitlines())
        if len(self.failed) > failures:
            lines.append(f"... and {len(self.failed) - failures} more failures (see the JSON result file)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """``{"version", "mode", "workers", "seconds", "counts", "info", "results": [...]}``."""
        return {"version": JSON_VERSION, "mode": self.mode, "workers": self.workers,
                "seconds": round(self.seconds, 3), "counts": self.counts(), "info": self.info,
                "results": [r.to_json() for r in self.results]}

    def write_json(self, path: str | Path) -> Path:
        """Write :meth:`to_json` to ``path`` (created with its folder); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1, default=str) + "\n")
        return path
