"""Run the benchmarks without asv and print a table.

    python benchmarks/run.py [name-filter ...]

Every ``track_*`` method is reported as its value; ``time_*`` methods are
reported as the best of a few runs, in milliseconds.
"""
from __future__ import annotations

import importlib
import inspect
import itertools
import pathlib
import sys
import time
from typing import Callable

HERE = pathlib.Path(__file__).resolve().parent


def _cases(cls: type) -> list[tuple]:
    params = getattr(cls, "params", None)
    if params is None:
        return [()]
    if params and not isinstance(params[0], (list, tuple)):
        params = [params]
    return list(itertools.product(*params))


def run_class(cls: type, filters: list[str], out: Callable[[str], None] = print) -> int:
    """Run every case of benchmark class ``cls`` whose label matches ``filters``; returns the rows printed."""
    rows = 0
    for case in _cases(cls):
        label = cls.__name__ + (f"[{','.join(map(str, case))}]" if case else "")
        if filters and not any(f in label for f in filters):
            continue
        bench = cls()
        if hasattr(bench, "setup"):
            bench.setup(*case)
        try:
            for name, meth in inspect.getmembers(bench, inspect.ismethod):
                if name.startswith("track_"):
                    value = meth(*case)
                    out(f"{label + '.' + name:<44} {value:>12.3f}  {getattr(meth, 'unit', '')}")
                elif name.startswith("time_"):
                    best = float("inf")
                    for _ in range(3):
                        t = time.perf_counter()
                        meth(*case)
                        best = min(best, time.perf_counter() - t)
                    out(f"{label + '.' + name:<44} {best * 1e3:>12.3f}  ms")
                else:
                    continue
                rows += 1
        finally:
            if hasattr(bench, "teardown"):
                bench.teardown(*case)        # asv passes the case's parameters to teardown as to setup
    return rows


def main(filters: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    print(f"{'benchmark':<44} {'value':>12}  unit")
    for path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(f"benchmarks.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or cls.__name__.startswith("_"):
                continue
            run_class(cls, filters, lambda row: print(row, flush=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
