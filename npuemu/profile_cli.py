"""``npuemu profile SCRIPT``: run a script with every kernel built with the cost model, and report.

Any script works: one written against ``npuemu.asc``, a pyasc script (it runs
through the compatibility runner, :mod:`npuemu.compat.pyasc`), or one that
calls the op layer.  Each launch's summary (msprof's per-pipe figures) is
printed, and its pipeline is written as Chrome trace / Perfetto JSON (and,
with ``--png``, as a PNG chart) into the output folder.  See
docs/cost-model.md.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("profile", help="run a script with the cost model on: per-launch summary, Perfetto "
                                       "trace (and PNG) of the pipeline")
    p.add_argument("script", help="the Python script to run (npuemu or pyasc)")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    p.add_argument("--out", default="npuemu-profile", help="folder for the traces (default ./npuemu-profile)")
    p.add_argument("--png", action="store_true", help="also draw each launch to a PNG (needs matplotlib)")
    p.add_argument("--cores", type=int, default=4, help="cores drawn in the PNG timeline (the slowest first)")
    return p


def run(args: argparse.Namespace) -> int:
    from .compat.pyasc import print_script_error, run_path
    from .cost import record_profiles
    from .errors import UsageError
    if not os.path.isfile(args.script):
        raise UsageError(f"can't open file {args.script!r}: no such file")
    if args.png:
        import matplotlib  # noqa: F401 - fail before the script runs, with the install hint
    out = Path(args.out)
    saved = os.environ.get("NPUEMU_PROFILE")
    os.environ["NPUEMU_PROFILE"] = "1"
    status = 0
    try:
        with record_profiles() as profiles:
            try:
                run_path(args.script, args.args)
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except Exception as exc:  # noqa: BLE001 - report the script's error, then what it launched
                print_script_error(exc)
                status = 1
    finally:
        if saved is None:
            os.environ.pop("NPUEMU_PROFILE", None)
        else:
            os.environ["NPUEMU_PROFILE"] = saved
    if not profiles:
        print(f"npuemu profile: {args.script} launched no kernel", file=sys.stderr)
        return status or 1
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, p in enumerate(profiles):
        stem = out / f"{i:03d}_{_safe(p.kernel)}"
        trace = p.write_trace(stem.with_suffix(".json"))
        print(f"[{i}] {p.summary()}\n  trace: {trace}")
        if args.png:
            print(f"  chart: {p.write_chart(stem.with_suffix('.png'), args.cores)}")
        rows.append(p)
    if len(rows) > 1:
        print(f"\n{len(rows)} launches, {sum(p.task_us for p in rows):.2f} us predicted in all:")
        for i, p in enumerate(rows):
            print(f"  [{i}] {p.kernel:<28} {p.task_us:10.2f} us  {_bound(p)}")
    print(f"open the traces in https://ui.perfetto.dev (or chrome://tracing): {out}/")
    return status


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "kernel"


def _bound(p) -> str:
    from .cost import CostError
    try:
        return f"{p.bound}-bound"
    except CostError:
        return "no instruction charged"
