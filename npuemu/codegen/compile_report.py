"""An opt-in record of every Numba compilation: what was compiled and the CPU seconds it took.

Set ``NPUEMU_COMPILE_REPORT=<path>`` and every compilation Numba actually
performs in the process (not a load from the disk cache) appends one JSON line
to ``<path>``:

==============  ===============================================================
``fn``          the compiled function: ``module.qualname``; a generated kernel's module
                is ``npuemu_kernels.<name>_<digest>``
``kind``        ``kernel`` (a generated kernel), ``instruction`` or ``helper`` (npuemu's
                instruction library, other ``@njit`` code)
``args``        the Numba argument types
``cpu``         CPU seconds of this compilation alone (compilations it triggered excluded)
``cpu_total``   CPU seconds including the compilations it triggered
``test``        the running pytest test (``PYTEST_CURRENT_TEST``), if any
``origin``,     for a generated kernel, where the kernel is defined and what it was
``spec``        specialised for (dtypes, platform, check level, tiling key, sync): the
                binary it was last lowered for (binaries with the same code share a module)
``lines``       for a generated kernel, the module's length in lines
``pid``         the process (pytest-xdist workers append to the same file)
==============  ===============================================================

``python -m npuemu.codegen.compile_report <path>`` prints totals per test
file and the functions compiled more than once.  docs/testing.md, "What the
suite compiles", shows how to use it.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import defaultdict
from typing import Any

ENV = "NPUEMU_COMPILE_REPORT"


class _Listener:
    """A Numba event listener for ``numba:compile``: exclusive CPU time through a per-thread stack."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.local = threading.local()
        self.lock = threading.Lock()

    def _stack(self) -> list[list[float]]:
        stack = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        return stack

    def on_start(self, event: Any) -> None:
        self._stack().append([time.process_time(), 0.0])

    def on_end(self, event: Any) -> None:
        stack = self._stack()
        if not stack:
            return
        start, nested = stack.pop()
        total = time.process_time() - start
        if stack:
            stack[-1][1] += total
        try:
            record = _describe(event.data, total - nested, total)
        except Exception as exc:  # noqa: BLE001 - a report must never break a compilation
            record = {"fn": "?", "error": repr(exc), "cpu": total - nested, "cpu_total": total}
        line = json.dumps(record) + "\n"
        with self.lock, open(self.path, "a") as f:
            f.write(line)

    # the numba.core.event.Listener interface
    def notify(self, event: Any) -> None:
        if event.is_start:
            self.on_start(event)
        elif event.is_end:
            self.on_end(event)


def _describe(data: Any, cpu: float, cpu_total: float) -> dict[str, Any]:
    dispatcher = data["dispatcher"]
    fn = dispatcher.py_func
    module = fn.__module__ or ""
    record: dict[str, Any] = {
        "fn": f"{module}.{fn.__qualname__}", "args": [str(a) for a in data["args"]],
        "cpu": round(cpu, 4), "cpu_total": round(cpu_total, 4),
        "test": os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" (", 1)[0], "pid": os.getpid(),
    }
    if module.startswith("npuemu_kernels."):
        record["kind"] = "kernel"
        stem = module.split(".", 1)[1]
        if stem in _BINARIES:
            record["origin"], record["spec"] = _BINARIES[stem]
        path = getattr(sys.modules.get(module), "__file__", None)
        if path:
            with open(path) as f:
                record["lines"] = f.read().count("\n")
    elif type(dispatcher).__name__ == "InstructionDispatcher":
        record["kind"] = "instruction"
    else:
        record["kind"] = "helper"
    return record


_INSTALLED: list[_Listener] = []
_BINARIES: dict[str, tuple[str, str]] = {}


def note_binary(module: str, origin: str, spec: str) -> None:
    """Remember which kernel and specialisation the generated module ``module`` was last lowered for
    (several binaries with the same code share a module), for the record of its compilation."""
    if _INSTALLED:
        _BINARIES[module] = (origin, spec)


def install() -> None:
    """Start recording if ``NPUEMU_COMPILE_REPORT`` names a file (once per process)."""
    path = os.environ.get(ENV)
    if not path or _INSTALLED:
        return
    from numba.core import event

    class Listener(_Listener, event.Listener):
        pass

    listener = Listener(os.path.abspath(path))
    event.register("numba:compile", listener)
    _INSTALLED.append(listener)


# --------------------------------------------------------------------------- summary


def load(path: str) -> list[dict[str, Any]]:
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def summary(records: list[dict[str, Any]], top: int = 40) -> str:
    """Totals per test file and per kind, then the functions compiled more than once."""
    tests = [r for r in records if r.get("kind") == "test"]
    records = [r for r in records if r.get("kind") != "test"]
    out = []
    total = sum(r["cpu"] for r in records)
    out.append(f"{len(records)} compilations, {total:.1f} CPU s")
    by_kind: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by_kind[r.get("kind", "?")].append(r["cpu"])
    for kind, cpus in sorted(by_kind.items()):
        out.append(f"  {kind:12s} {len(cpus):6d} compilations {sum(cpus):9.1f} CPU s")
    by_file: dict[str, list[float]] = defaultdict(list)
    for r in records:
        by_file[r.get("test", "").split("::")[0] or "(outside a test)"].append(r["cpu"])
    test_cpu: dict[str, float] = defaultdict(float)
    for r in tests:
        test_cpu[r["test"].split("::")[0]] += r["cpu"]
    if tests:
        out.append(f"tests: {len(tests)}, {sum(test_cpu.values()):.1f} CPU s in all")
    out.append("\nper test file: compilations, their CPU s, the tests' CPU s (compilations included)")
    for name in sorted(set(by_file) | set(test_cpu), key=lambda n: -max(sum(by_file.get(n, [])), test_cpu.get(n, 0))):
        cpus = by_file.get(name, [])
        out.append(f"  {len(cpus):6d} {sum(cpus):9.1f} {test_cpu.get(name, 0.0):9.1f}  {name}")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        name = r["fn"].rsplit("_", 1)[0] if r.get("kind") == "kernel" else r["fn"]
        groups[(name, " ".join(r.get("args", [])) if r.get("kind") != "kernel" else "")].append(r)
    out.append(f"\nfunctions compiled more than once (kernels: by name; top {top} by CPU s)")
    repeated = [(k, v) for k, v in groups.items() if len(v) > 1]
    for (name, args), rs in sorted(repeated, key=lambda kv: -sum(r["cpu"] for r in kv[1]))[:top]:
        out.append(f"  {len(rs):4d}x {sum(r['cpu'] for r in rs):8.1f} s  {name} {args[:80]}")
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover - a command-line summary
    print(summary(load(sys.argv[1])))
