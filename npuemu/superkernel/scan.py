"""Which sub-kernels call the early-start interfaces: a scan of their source, as CANN's SuperKernel
compile scans an op's source for ``SetNextTaskStart`` / ``WaitPreTaskEnd``.

The scan reads the source of every function the binary's code came from
(the kernel and the helpers inlined into it: the functions its source
locations name), so a call in a branch the binary never compiled — another
tiling key's — counts, as it does for CANN.
"""
from __future__ import annotations

import ast
import functools
import os
from typing import Any

SET, WAIT = "set_next_task_start", "wait_pre_task_end"


@functools.lru_cache(maxsize=256)
def _functions(filename: str, mtime: float) -> dict[str, str]:
    """The source text of each function defined in ``filename``, by name."""
    del mtime
    try:
        with open(filename, encoding="utf-8") as f:
            text = f.read()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError):
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = out.get(node.name, "") + (ast.get_source_segment(text, node) or "")
    return out


def early_start_calls(binary: Any) -> tuple[bool, bool]:
    """``(calls set_next_task_start, calls wait_pre_task_end)`` somewhere in the binary's source."""
    seen: set[tuple[str, str]] = set()
    found_set = found_wait = False
    for loc in binary.locs:
        while loc is not None:
            key = (loc.filename, loc.function)
            if key not in seen:
                seen.add(key)
                try:
                    mtime = os.path.getmtime(loc.filename)
                except OSError:
                    mtime = 0.0
                text = _functions(loc.filename, mtime).get(loc.function, "")
                found_set = found_set or f"{SET}(" in text
                found_wait = found_wait or f"{WAIT}(" in text
            loc = loc.called_from
    return found_set, found_wait


__all__ = ["early_start_calls"]
