"""The ``npuemu`` command line: ``demo``, ``warmup``, ``platforms``, ``cache``, ``build`` (:mod:`npuemu.ops.build_cli`),
``sweep`` (:mod:`npuemu.sweep.cli`), ``profile`` (:mod:`npuemu.profile_cli`).

Every failure a user can cause (an unknown platform or kernel name, a
missing optional dependency) ends in one line on stderr and exit status 2,
never a traceback.
"""
from __future__ import annotations

import argparse
import sys


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo
    from .kernels.catalog import chosen
    chosen(args.kernel or None)                 # an unknown name: one line, before anything runs
    rows = run_demo(platform=args.platform, kernels=args.kernel or None, scale=args.scale, repeat=args.repeat)
    return 0 if rows and all(r.passed for r in rows) else 1


def _warmup(args: argparse.Namespace) -> int:
    from .warmup import warmup
    steps = warmup(checks=tuple(args.check or ("default",)), kernels=args.kernel or None, platform=args.platform)
    return 0 if all(not s.error for s in steps) else 1


_PLATFORM_COLUMNS = (
    # heading, width, value
    ("name", 16, lambda p: p.name),
    ("AIC", 4, lambda p: p.aic_count),
    ("AIV", 4, lambda p: p.aiv_count),
    ("UB KiB", 7, lambda p: p.ub_size // 1024),
    ("L1 KiB", 7, lambda p: p.l1_size // 1024),
    ("L0A/B/C KiB", 12, lambda p: f"{p.l0a_size // 1024}/{p.l0b_size // 1024}/{p.l0c_size // 1024}"),
    ("BT KiB", 7, lambda p: f"{p.bt_size / 1024:g}"),
    ("MHz", 5, lambda p: f"{p.clock_mhz:g}"),
    ("L2 MiB", 7, lambda p: p.l2_size >> 20),
    ("HBM GiB", 8, lambda p: p.hbm_size >> 30),
    ("HBM GB/s", 9, lambda p: f"{p.hbm_bandwidth_gbps:g}"),
    ("fp16 TFLOPS", 12, lambda p: f"{p.cube_fp16_tflops:.1f}"),
    ("sysWS MiB", 10, lambda p: f"{p.system_workspace_size / (1 << 20):g}"),
)


def _platforms(args: argparse.Namespace) -> int:
    from .platform import get_platform, platforms
    if args.name:
        _platform_detail(get_platform(args.name))
        return 0
    print(" ".join(f"{h:<{w}}" if i == 0 else f"{h:>{w}}" for i, (h, w, _) in enumerate(_PLATFORM_COLUMNS))
          + "  unconfirmed")
    for p in platforms():
        cells = [f"{str(fn(p)):<{w}}" if i == 0 else f"{str(fn(p)):>{w}}"
                 for i, (_, w, fn) in enumerate(_PLATFORM_COLUMNS)]
        print(" ".join(cells) + f"  {len(p.unconfirmed)} field(s)" if p.unconfirmed else " ".join(cells) + "  -")
    print("\n`npuemu platforms NAME` lists every field of a profile with its source; UNCONFIRMED marks values "
          "no CANN platform file or official document confirms.")
    return 0


def _platform_detail(p) -> None:
    import dataclasses
    from .profiles import SOURCES
    print(f"{p.name}  (UNCONFIRMED: no CANN platform file or official document confirms the value)")
    keys = dict(p.sources)
    used = []
    for f in dataclasses.fields(p):
        if f.name in ("name", "unconfirmed", "sources"):
            continue
        key = keys.get(f.name, "default")
        if key != "default" and key not in used:
            used.append(key)
        mark = "UNCONFIRMED" if f.name in p.unconfirmed else ""
        print(f"  {f.name:<26} {getattr(p, f.name)!s:>14}  [{key}] {mark}".rstrip())
    print("sources:")
    for key in used:
        print(f"  [{key}] {SOURCES.get(key, key)}")
    print("  [default] npuemu's default (no source recorded for this profile)")


def _cache(args: argparse.Namespace) -> int:
    from .codegen.cache import cache_dir, clear
    d = cache_dir()
    if args.clear:
        print(f"removed {clear()}")
    else:
        n = len(list((d / "npuemu_kernels").glob("*.py"))) if d.exists() else 0
        b = len(list((d / "binaries").glob("*.json"))) if d.exists() else 0
        print(f"{d}: {n} generated kernel modules, {b} stored binaries")
    return 0


def main(argv: list[str] | None = None) -> int:
    from . import __version__
    parser = argparse.ArgumentParser(prog="npuemu", description="Ascend NPU kernel emulator")
    parser.add_argument("--version", action="version", version=f"npuemu {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the bundled kernels, check them against NumPy, print a report")
    demo.add_argument("--platform", default=None, help="SoC profile (default Ascend910B1)")
    demo.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    demo.add_argument("--scale", type=float, default=1.0, help="multiply the demo shapes by this factor")
    demo.add_argument("--repeat", type=int, default=3, help="timed runs per kernel (best is reported)")
    demo.set_defaults(func=_demo)
    warm = sub.add_parser("warmup", help="compile the bundled kernels and the instructions they call, ahead "
                                         "of first use (once per machine)")
    warm.add_argument("--check", action="append", choices=("off", "default", "full"),
                      help="check level to compile for (repeatable; default: default)")
    warm.add_argument("--kernel", action="append", help="only this kernel (repeatable)")
    warm.add_argument("--platform", default=None, help="SoC profile (default Ascend910B1)")
    warm.set_defaults(func=_warmup)
    plat = sub.add_parser("platforms", help="list the SoC profiles (or one profile's fields with sources)")
    plat.add_argument("name", nargs="?", default=None, help="show every field of this profile with its source")
    plat.set_defaults(func=_platforms)
    cache = sub.add_parser("cache", help="show or clear the compiled-kernel cache")
    cache.add_argument("--clear", action="store_true")
    cache.set_defaults(func=_cache)
    from .ops import build_cli
    build_cli.add_parser(sub).set_defaults(func=build_cli.run)
    from .sweep import cli as sweep_cli
    sweep_cli.add_parser(sub).set_defaults(func=sweep_cli.run)
    from . import profile_cli
    profile_cli.add_parser(sub).set_defaults(func=profile_cli.run)
    args = parser.parse_args(argv)
    from .errors import NpuemuError
    try:
        return args.func(args)
    except NpuemuError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    except ModuleNotFoundError as exc:
        if exc.name not in _OPTIONAL:
            raise
        message = f"this needs {exc.name}: pip install {_OPTIONAL[exc.name]}"
    print(f"npuemu {args.command}: error: {message}", file=sys.stderr)
    return 2


# optional dependencies a command may need, and how to install them
_OPTIONAL = {"torch": "torch", "matplotlib": "'npuemu[plot]'", "asv": "'npuemu[bench]'", "xdist": "'npuemu[test]'",
             "distributed": "'npuemu[scaleout]'", "dask": "'npuemu[scaleout]'"}


if __name__ == "__main__":
    sys.exit(main())
