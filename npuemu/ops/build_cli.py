"""``npuemu build OP [OP ...] [--platform P] [--check LEVEL] [--static SHAPES ...] [--no-native]``.

Builds the named ops' binaries ahead of time (:func:`npuemu.ops.binaries.build`):
one binary per column x implementation mode x attribute binary value, each
with its descriptor, and the op's index file for the platform, so that the
first call of the op in any process finds them.  Ops are looked up in
:mod:`npuemu.ops.registry` (the op library's ops are registered before the
lookup).  One line is printed per binary as it is built, with the time
it took, then a summary.

``--static`` builds static (shape-specialised) binaries too: its value lists
one shape per input, dimensions joined by ``x``, shapes by ``,``
(``--static 8x64,8x64`` for an op with two inputs); give it once per shape
list.  The tiling runs at build time and a call with exactly those shapes
skips it.

``--scheduler tcp://HOST:PORT`` (or ``--local-workers N``) builds the binary
columns in parallel on a Dask cluster, one task per op column, through
:mod:`npuemu.sweep.engine` (workers running other npuemu code are refused).
The workers write into the kernel cache they share with this process
(``--store DIR``, their ``NPUEMU_CACHE_DIR``); this process then records the
descriptors and index files from the binary store, lowering nothing.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from ..errors import UsageError
from ..options import CHECK_LEVELS


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Declare the ``build`` subcommand on ``sub`` (an argparse subparsers object)."""
    p = sub.add_parser("build", help="build ops' binaries ahead of time (descriptors and index per platform)")
    p.add_argument("op", nargs="+", help="op type, as registered (e.g. Add, Relu, MatMul)")
    p.add_argument("--platform", default=None, help="SoC profile (default Ascend910B1)")
    p.add_argument("--check", default=None, choices=CHECK_LEVELS,
                   help="check level the binaries are built for (default: the kernel's, else NPUEMU_CHECK)")
    p.add_argument("--static", action="append", default=[], metavar="SHAPES",
                   help="also build static binaries for these input shapes, e.g. 8x64,8x64 (repeatable)")
    p.add_argument("--no-native", action="store_true",
                   help="lower the kernels only; their machine code is compiled on first launch")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="build the columns in parallel on this Dask scheduler (tcp://host:8786)")
    where.add_argument("--local-workers", type=int, metavar="N",
                       help="build the columns in parallel on a LocalCluster of N worker processes")
    p.add_argument("--store", metavar="DIR", help="with --scheduler: the kernel cache the workers share with "
                                                   "this process (default: this process's NPUEMU_CACHE_DIR)")
    return p


def parse_shapes(text: str) -> list[tuple[int, ...]]:
    """``"8x64,64"`` -> ``[(8, 64), (64,)]``; ``scalar`` is a 0-d shape."""
    shapes = []
    for part in text.split(","):
        part = part.strip().lower()
        if part == "scalar":
            shapes.append(())
            continue
        try:
            dims = tuple(int(d) for d in part.split("x"))
        except ValueError:
            dims = ()
        if not dims or any(d < 1 for d in dims):
            raise UsageError(f"--static {text!r}: a shape is positive dimensions joined by 'x' (8x64), shapes "
                             f"are joined by ',' (one per input), got {part!r}")
        shapes.append(dims)
    return shapes


def run(args: argparse.Namespace) -> int:
    """Build every op named in ``args``; print a line per binary and a summary."""
    from ..platform import get_platform
    from .binaries import build
    from .index import ops_dir
    from . import library  # noqa: F401  (registers the op library's ops)
    from .registry import get

    plat = get_platform(args.platform)
    ops = [get(name) for name in dict.fromkeys(args.op)]       # every name checked before anything is built
    static = [parse_shapes(s) for s in args.static]
    for op in ops:
        for shapes in static if op.kernel is not None else ():
            if len(shapes) != len(op.inputs):
                raise UsageError(f"--static {','.join('x'.join(map(str, s)) or 'scalar' for s in shapes)}: op "
                                 f"{op.name} takes {len(op.inputs)} input(s) "
                                 f"({', '.join(p.name for p in op.inputs)}): give one shape per input")
    start = last = time.perf_counter()
    count = 0

    def progress(line: str) -> None:
        nonlocal last, count
        now = time.perf_counter()
        count += 1
        print(f"[{count}] {line}  ({now - last:.2f} s)", flush=True)
        last = now

    scheduler, workers = getattr(args, "scheduler", None), getattr(args, "local_workers", None)
    if scheduler is not None or workers is not None:
        count = _build_on_cluster(args, ops, plat, static, progress)
        for op in ops:          # descriptors and index from the store: every kernel is found there, none lowered
            build(op, plat, static=static, check=args.check, native=False)
    else:
        for op in ops:
            build(op, plat, static=static, check=args.check, native=not args.no_native, progress=progress)
    print(f"built {count} binar{'y' if count == 1 else 'ies'} of {len(ops)} op(s) for {plat.name} in "
          f"{time.perf_counter() - start:.1f} s; index files and descriptors in {ops_dir() / plat.name}")
    return 0


def build_column(task: tuple[Any, ...]) -> list[str]:
    """One Dask task of ``npuemu build --scheduler``: build one column of one op; its progress lines."""
    import os
    op_name, platform, column, check, static, native, store = task
    if store and os.environ.get("NPUEMU_CACHE_DIR") != store:
        os.environ["NPUEMU_CACHE_DIR"] = store
    from . import library  # noqa: F401  (registers the op library's ops)
    from .binaries import build
    from .registry import get
    lines: list[str] = []
    start = time.perf_counter()
    build(get(op_name), platform, static=static, columns=[column], check=check, native=native,
          progress=lines.append)
    took = (time.perf_counter() - start) / max(len(lines), 1)
    return [f"{line}  (~{took:.2f} s, column {column} on pid {os.getpid()})" for line in lines]


def _build_on_cluster(args: argparse.Namespace, ops: list[Any], plat: Any, static: list[Any],
                      progress: Any) -> int:
    """Build every column of ``ops`` on the cluster ``args`` name, one task per column; binaries built."""
    from ..binary.store import store_dir
    from ..sweep.engine import require_distributed, connect, run_map
    store = args.store or str(store_dir().parent)
    tasks = [(op.name, plat.name, col, args.check, static, not args.no_native, store)
             for op in ops for col in range(len(op.columns))]
    built = 0

    def lines(done: list[str]) -> None:
        nonlocal built
        for line in done:
            built += 1
            print(f"[{built}] {line}", flush=True)

    with connect(require_distributed(), args.scheduler, None, args.local_workers, 30.0) as (client, mode):
        print(f"building {len(tasks)} column(s) on {mode}", flush=True)
        run_map(client, build_column, tasks, progress=lines)
    return built
