"""Compute a matmul tiling on the host, as a pyasc host function does, and print what the kernel will read.

    python examples/matmul_host_tiling.py                       # 1024^3 fp16 on Ascend910B1, 24 cores
    python examples/matmul_host_tiling.py 4096 512 2048 --platform Ascend910B4 --dim 20 --bias

The classes are pyasc's ``asc.lib.host`` ones (here imported from npuemu
directly; under ``npuemu.compat.pyasc`` a script's ``import asc.lib.host as
host`` gets the same).  docs/matmul-tiling.md explains every field.
"""
from __future__ import annotations

import argparse

import npuemu.asc as asc
from npuemu.host.matmul_tiling import (CubeFormat, DataType, MultiCoreMatmulTiling, PlatformAscendCManager,
                                       TPosition)
from npuemu.host.matmul_tiling_check import check_tcube_tiling


def make_tiling(m: int, n: int, k: int, platform: str, dim: int, bias: bool) -> tuple[int, asc.adv.TCubeTiling, str]:
    """(get_tiling's return, the tiling, the reason of a refusal) for an fp16 x fp16 -> fp32 matmul."""
    mm = MultiCoreMatmulTiling(PlatformAscendCManager.get_instance(platform))
    mm.set_dim(dim)
    mm.set_a_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT16, False)
    mm.set_b_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT16, False)
    mm.set_c_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT)
    mm.set_bias_type(TPosition.GM, CubeFormat.ND, DataType.DT_FLOAT)
    mm.enable_bias(bias)
    mm.set_shape(m, n, k)
    mm.set_org_shape(m, n, k)
    mm.set_buffer_space(-1, -1, -1)
    tiling = asc.adv.TCubeTiling()
    ret = mm.get_tiling(tiling)
    return ret, tiling, mm.last_error or ""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", nargs="*", type=int, default=[1024, 1024, 1024], help="M N K")
    parser.add_argument("--platform", default="Ascend910B1")
    parser.add_argument("--dim", type=int, default=24, help="cores the split may use (set_dim)")
    parser.add_argument("--bias", action="store_true")
    args = parser.parse_args(argv)
    m, n, k = args.shape
    ret, t, reason = make_tiling(m, n, k, args.platform, args.dim, args.bias)
    print(f"M={m} N={n} K={k} fp16 on {args.platform}, set_dim({args.dim}): get_tiling returned {ret}")
    if ret != 0:
        print(f"  refused: {reason}")
        return
    for name in ("used_core_num", "single_core_m", "single_core_n", "single_core_k", "base_m", "base_n", "base_k",
                 "step_m", "step_n", "step_k_a", "step_k_b", "depth_a1", "depth_b1", "db_l0a", "db_l0b", "db_l0c",
                 "iterate_order", "is_bias"):
        print(f"  {name:15} {getattr(t, name)}")
    problems = check_tcube_tiling(t, args.platform, "float16", "float16", "float32",
                                  "float32" if args.bias else None, core_num=args.dim, mdl=True)
    print(f"  legal: {not problems}")


if __name__ == "__main__":
    main()
