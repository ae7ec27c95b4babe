"""Cases for tests/test_sweep.py that must fail: a kernel that copies past its UB buffer, and a tiling
function that launches no block for small inputs.  Importable by Dask workers (tests/ is on their path)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.host.tiling import TilingContext, TilingResult

RUNS_FILE = "NPUEMU_SWEEP_TEST_RUNS"        # a file each run of the broken kernel appends its process id to
BAD_LINE = 26                               # the line of the data_copy that overflows the buffer


@asc.jit
def overflowing_copy(x: asc.GlobalAddress, z: asc.GlobalAddress, n: int):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf, 256)                                  # 64 float32 elements
    t = buf.get(asc.float32)
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    asc.data_copy(t, xg, n)                                     # n = 128: past the end of the buffer


def _run(x: np.ndarray, platform: Any = None, check: str | None = None) -> np.ndarray:
    path = os.environ.get(RUNS_FILE)
    if path:
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n")
    z = np.zeros_like(x)
    overflowing_copy[1](x, z, x.size, platform=platform, check=check)
    return z


class _Broken:
    """A BundledKernel-shaped entry: make_inputs, run, reference, tolerance, dtypes."""

    name = "overflowing_copy"
    dtypes = ("float32",)
    test_shapes = ((128,),)
    tolerance: dict[str, Any] = {}

    @staticmethod
    def make_inputs(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> tuple[Any, ...]:
        return (rng.standard_normal(shape).astype(dtype),)

    run = staticmethod(_run)

    @staticmethod
    def reference(x: np.ndarray) -> np.ndarray:
        return x.copy()

    def tol(self, dtype: str) -> None:
        return None


BROKEN = _Broken()


class _Data(asc.Struct):
    n = asc.Field(asc.uint32)


def seventh_tiling(ctx: TilingContext) -> TilingResult:
    """One block per 7 elements: no block at all below 7 (a launch needs at least one)."""
    n = ctx.input(0).size
    return TilingResult(block_dim=min(n // 7, 40), tiling_data=_Data(n=n))


def runs(path: str | Path) -> list[int]:
    p = Path(path)
    return [int(s) for s in p.read_text().split()] if p.exists() else []


DIE_FILE = "NPUEMU_SWEEP_TEST_DIE"           # the first call kills its process (a worker lost mid-case)


def dies_once_tiling(ctx: TilingContext) -> TilingResult:
    """Kills the process the first time it runs (the file named by $NPUEMU_SWEEP_TEST_DIE does not exist yet),
    then tiles everything onto one block."""
    path = Path(os.environ[DIE_FILE])
    if not path.exists():
        path.write_text(f"{os.getpid()}\n")
        os._exit(1)
    return TilingResult(block_dim=1, tiling_data=_Data(n=ctx.input(0).size))
