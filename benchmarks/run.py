"""Run the benchmarks without asv and print a table.

    python benchmarks/run.py [name-filter ...]
    python benchmarks/run.py --local-workers 2 [name-filter ...]      # benchmark classes spread over workers
    python benchmarks/run.py --scheduler tcp://host:8786 [name-filter ...]

Every ``track_*`` method is reported as its value; ``time_*`` methods are
reported as the best of a few runs, in milliseconds.

On a Dask cluster each benchmark class is one task: all its cases run in one
worker process, so a ratio compares two timings taken in the same process
(workers run one task at a time: start them with ``--nthreads 1``).  Rows
print as classes finish, prefixed with the worker that measured them; the
workers must import ``benchmarks`` (start them from a checkout, or with it on
``PYTHONPATH``).
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


def _classes() -> list[tuple[str, str]]:
    """(module, class) of every benchmark class, in file order."""
    found = []
    for path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(f"benchmarks.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and not cls.__name__.startswith("_"):
                found.append((module.__name__, cls.__name__))
    return found


def class_rows(task: tuple[str, str, list[str]]) -> list[str]:
    """One cluster task: run the benchmark class ``(module, class, filters)`` here; its rows, with this
    process's worker."""
    import os
    module, name, filters = task
    rows: list[str] = []
    run_class(getattr(importlib.import_module(module), name), filters, rows.append)
    try:
        from distributed import get_worker
        where = get_worker().address
    except (ImportError, ValueError):
        where = f"pid {os.getpid()}"
    return [f"{row}  [{where}]" for row in rows]


def main(filters: list[str], scheduler: str | None = None, local_workers: int | None = None) -> int:
    sys.path.insert(0, str(HERE.parent))
    print(f"{'benchmark':<44} {'value':>12}  unit")
    if scheduler is None and local_workers is None:
        for module, name in _classes():
            run_class(getattr(importlib.import_module(module), name), filters, lambda row: print(row, flush=True))
        return 0
    import os
    from npuemu.sweep.engine import connect, require_distributed, run_map
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE.parent), os.environ.get("PYTHONPATH")) if p)
    tasks = [(m, c, filters) for m, c in _classes()
             if not filters or any(f in c or c in f or f.startswith(c + "[") for f in filters)]
    with connect(require_distributed(), scheduler, None, local_workers, 30.0) as (client, _):
        run_map(client, class_rows, tasks, retries=0, progress=lambda rows: print("\n".join(rows), flush=True)
                if rows else None)
    return 0


def _args(argv: list[str]) -> tuple[list[str], str | None, int | None]:
    import argparse
    p = argparse.ArgumentParser(prog="benchmarks/run.py")
    p.add_argument("filters", nargs="*")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS")
    where.add_argument("--local-workers", type=int, metavar="N")
    a = p.parse_args(argv)
    return a.filters, a.scheduler, a.local_workers


if __name__ == "__main__":
    raise SystemExit(main(*_args(sys.argv[1:])))
