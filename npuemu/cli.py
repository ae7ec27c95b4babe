"""The ``npuemu`` command line: ``demo``, ``platforms``, ``cache``."""
from __future__ import annotations

import argparse
import shutil
import sys


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    rows = run_demo(platform=args.platform, kernels=args.kernel or None, scale=args.scale, repeat=args.repeat)
    return 0 if rows and all(r.passed for r in rows) else 1


def _platforms(args: argparse.Namespace) -> int:
    from .runtime.platform import platforms
    print(f"{'name':<16} {'AIC':>4} {'AIV':>4} {'UB KiB':>7} {'L1 KiB':>7} {'L0C KiB':>8}  unconfirmed")
    for p in platforms():
        print(f"{p.name:<16} {p.aic_count:>4} {p.aiv_count:>4} {p.ub_size // 1024:>7} {p.l1_size // 1024:>7} "
              f"{p.l0c_size // 1024:>8}  {', '.join(p.unconfirmed) or '-'}")
    return 0


def _cache(args: argparse.Namespace) -> int:
    from .codegen.compiler import cache_dir
    d = cache_dir()
    if args.clear:
        shutil.rmtree(d, ignore_errors=True)
        print(f"removed {d}")
    else:
        n = len(list((d / "npuemu_kernels").glob("*.py"))) if d.exists() else 0
        print(f"{d}: {n} generated kernel modules")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="npuemu", description="Ascend NPU kernel emulator")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the bundled kernels, check them against NumPy, print a report")
    demo.add_argument("--platform", default=None, help="SoC profile (default Ascend910B1)")
    demo.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    demo.add_argument("--scale", type=float, default=1.0, help="multiply the demo shapes by this factor")
    demo.add_argument("--repeat", type=int, default=3, help="timed runs per kernel (best is reported)")
    demo.set_defaults(func=_demo)
    sub.add_parser("platforms", help="list the SoC profiles").set_defaults(func=_platforms)
    cache = sub.add_parser("cache", help="show or clear the compiled-kernel cache")
    cache.add_argument("--clear", action="store_true")
    cache.set_defaults(func=_cache)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
