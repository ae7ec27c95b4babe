"""``npuemu sweep``: run a sweep from the command line, in this process or on a Dask cluster.

    npuemu sweep                                             # bundled tiling functions x every platform
    npuemu sweep --what property --examples 200 --local-workers 2
    npuemu sweep --what kernels --target add --dtype float16 --check full --scheduler tcp://host:8786
    npuemu sweep --json sweep.json                           # the result file for CI

Prints a progress line while it runs and a summary table at the end; exits
with status 1 when a case failed (refusals are reported, not failures).
"""
from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from .cases import CHECK_LEVELS


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Declare the ``sweep`` subcommand on ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("sweep", help="run tiling functions or kernels over platforms, dtypes and shapes, "
                                     "in this process or on a Dask cluster (docs/scale-out.md)")
    p.add_argument("--what", choices=("tiling", "property", "kernels"), default="tiling",
                   help="tiling: each bundled tiling function on shape classes; property: Hypothesis properties "
                        "of them over drawn shapes; kernels: bundled kernels against NumPy (default: tiling)")
    p.add_argument("--target", action="append", help="only this tiling function or kernel; module:attribute "
                                                      "for your own (repeatable)")
    p.add_argument("--platform", action="append", help="only this SoC profile (repeatable; default: every "
                                                        "built-in profile, Ascend910B1 for kernels)")
    p.add_argument("--dtype", action="append", help="only this dtype (repeatable)")
    p.add_argument("--shape-class", action="append", help="tiling: only this shape class (one, prime, edge, "
                                                           "aligned, wide, huge; repeatable)")
    p.add_argument("--shape", action="append", help="kernels: this shape, e.g. 8x64 (repeatable; default: each "
                                                     "kernel's test shapes)")
    p.add_argument("--check", choices=CHECK_LEVELS, default="default", help="kernels: the check level")
    p.add_argument("--seed", type=int, action="append", help="kernels: input seed; property: Hypothesis seed "
                                                             "(repeatable for kernels; default 0)")
    p.add_argument("--examples", type=int, default=50, help="property: examples per case (default 50)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler (tcp://host:8786)")
    where.add_argument("--local-workers", type=int, metavar="N", help="run on a LocalCluster of N worker processes")
    p.add_argument("--store", metavar="DIR", help="the kernel cache directory the workers share "
                                                   "(their NPUEMU_CACHE_DIR; default: the workers' own)")
    p.add_argument("--chunk", type=int, default=1, help="cases per Dask task (default 1; tens for tiling "
                                                        "cases, which take less than Dask's cost per task)")
    p.add_argument("--retries", type=int, default=2, help="re-runs of a case whose worker was lost (default 2)")
    p.add_argument("--json", metavar="FILE", help="write the results to FILE as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    return p


def _shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        dims = ()
    if not dims or any(d < 1 for d in dims):
        raise UsageError(f"--shape {text!r}: a shape is positive dimensions joined by 'x' (8x64)")
    return dims


def cases_of(args: argparse.Namespace) -> list[Any]:
    """The cases the command line asks for."""
    from .cases import kernel_cases, property_cases, tiling_cases
    if args.what == "tiling":
        return tiling_cases(args.target, args.platform, args.dtype, args.shape_class)
    if args.what == "property":
        return property_cases(args.target, args.platform, args.dtype, args.examples, (args.seed or [0])[0])
    return kernel_cases(args.target, args.platform or ["Ascend910B1"], args.dtype,
                        [_shape(s) for s in args.shape] if args.shape else None, args.check, args.seed or [0])


def run(args: argparse.Namespace) -> int:
    """Run the sweep ``args`` describe; print the table; 1 if a case failed."""
    from .engine import sweep
    cases = cases_of(args)
    if not cases:
        raise UsageError("the filters leave no case to run")
    print(f"{len(cases)} cases", flush=True)
    report = sweep(cases, scheduler=args.scheduler, local_workers=args.local_workers, store=args.store,
                   retries=args.retries, progress=not args.quiet, chunk=args.chunk)
    print(report.table())
    if args.json:
        print(f"results in {report.write_json(args.json)}")
    return 0 if report.ok else 1
