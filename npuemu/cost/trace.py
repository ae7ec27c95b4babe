"""The pipeline trace of a profiled launch, as Chrome trace / Perfetto JSON.

One process per core (``AIV 0``, ``AIC 3``, ...), one thread per pipe, one
complete event (``"ph": "X"``) per instruction the core charged, named by its
source line, with times in microseconds at the platform's clock.  Each core
records its first ``TRACE_EVENTS`` instructions (``isa/state.py``); a core
that ran more says how many it left out in its process's metadata.  Open the
file in https://ui.perfetto.dev or chrome://tracing.
"""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from .model import PIPES

if TYPE_CHECKING:
    from .model import Profile


def trace_events(p: "Profile") -> list[dict[str, Any]]:
    """The trace's events: metadata naming each core and pipe, then every recorded instruction."""
    tick_us = 1.0 / (p.tick * p.clock_mhz)
    events: list[dict[str, Any]] = []
    for pid, core in enumerate(p.cores):
        rows = p.trace[pid] if pid < len(p.trace) else ()
        left_out = max(0, p.charged[pid] - len(rows)) if pid < len(p.charged) else 0
        name = core.label + (f" ({left_out} instructions not recorded)" if left_out else "")
        events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}})
        events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
        for tid, pipe in enumerate(PIPES):
            events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": pipe}})
            events.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                           "args": {"sort_index": tid}})
        for pipe, start, end, loc in rows:
            src = p.locs[loc] if 0 <= loc < len(p.locs) else None
            text = (src.line_text.strip() if src is not None and src.line_text else "") or PIPES[pipe]
            ev: dict[str, Any] = {"name": text, "ph": "X", "pid": pid, "tid": int(pipe),
                                  "ts": float(start) * tick_us, "dur": float(end - start) * tick_us,
                                  "cat": PIPES[pipe]}
            if src is not None:
                ev["args"] = {"source": src.short(), "function": src.function}
            events.append(ev)
    return events


def write_trace(p: "Profile", path: "str | os.PathLike[str]") -> str:
    """Write the trace to ``path`` (JSON object format); returns the path."""
    doc = {"traceEvents": trace_events(p), "displayTimeUnit": "ns",
           "otherData": {"kernel": p.kernel, "platform": p.platform.name, "clock_mhz": p.clock_mhz}}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    return os.fspath(path)
