"""Double-buffered vector add in pyasc style: TPipe, two-deep TQues, NumPy arrays.

Usage: vadd_double_buffer.py TOTAL_LENGTH [EXTRA ARGS...]  (extra arguments are echoed)
"""
import sys

import numpy as np

try:
    import torch_npu  # noqa: F401 - an optional device plugin: served by the runner when torch is installed
except ModuleNotFoundError:
    pass

import asc
import asc.runtime.config as config
import asc.lib.runtime as rt

CORES = 8
DEPTH = 2           # two buffers per queue: load of tile i+1 overlaps compute of tile i on hardware
TILES_PER_CORE = 16


@asc.jit
def load_tile(step: int, src_a: asc.GlobalTensor, src_b: asc.GlobalTensor, que_a: asc.TQue, que_b: asc.TQue,
              tile: asc.ConstExpr[int]):
    a_ub = que_a.alloc_tensor(src_a.dtype)
    b_ub = que_b.alloc_tensor(src_b.dtype)
    asc.data_copy(a_ub, src_a[step * tile:], tile)
    asc.data_copy(b_ub, src_b[step * tile:], tile)
    que_a.enque(a_ub)
    que_b.enque(b_ub)


@asc.jit
def add_tile(dst: asc.GlobalTensor, que_a: asc.TQue, que_b: asc.TQue, que_out: asc.TQue,
             tile: asc.ConstExpr[int]):
    a_ub = que_a.deque(dst.dtype)
    b_ub = que_b.deque(dst.dtype)
    sum_ub = que_out.alloc_tensor(dst.dtype)
    asc.add(sum_ub, a_ub, b_ub, tile)
    que_out.enque(sum_ub)
    que_a.free_tensor(a_ub)
    que_b.free_tensor(b_ub)


@asc.jit
def store_tile(step: int, dst: asc.GlobalTensor, que_out: asc.TQue, tile: asc.ConstExpr[int]):
    sum_ub = que_out.deque(dst.dtype)
    asc.data_copy(dst[step * tile:], sum_ub, tile)
    que_out.free_tensor(sum_ub)


@asc.jit
def vadd_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, out: asc.GlobalAddress, per_core: int,
                tile: asc.ConstExpr[int]):
    base = asc.get_block_idx() * per_core
    a_gm = asc.GlobalTensor()
    b_gm = asc.GlobalTensor()
    out_gm = asc.GlobalTensor()
    a_gm.set_global_buffer(a + base, per_core)
    b_gm.set_global_buffer(b + base, per_core)
    out_gm.set_global_buffer(out + base, per_core)
    pipe = asc.TPipe()
    que_a = asc.TQue(asc.TPosition.VECIN, DEPTH)
    que_b = asc.TQue(asc.TPosition.VECIN, DEPTH)
    que_out = asc.TQue(asc.TPosition.VECOUT, DEPTH)
    pipe.init_buffer(que_a, DEPTH, tile * a.dtype.sizeof())
    pipe.init_buffer(que_b, DEPTH, tile * b.dtype.sizeof())
    pipe.init_buffer(que_out, DEPTH, tile * out.dtype.sizeof())
    for step in range(per_core // tile):
        load_tile(step, a_gm, b_gm, que_a, que_b, tile)
        add_tile(out_gm, que_a, que_b, que_out, tile)
        store_tile(step, out_gm, que_out, tile)


def launch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a)
    per_core = a.size // CORES
    tile = per_core // TILES_PER_CORE
    vadd_kernel[CORES, rt.current_stream()](a, b, out, per_core, tile)
    return out


def main() -> None:
    config.set_platform(config.Backend.Model)
    total = int(sys.argv[1])
    rng = np.random.default_rng(7)
    a = rng.standard_normal(total, dtype=np.float32)
    b = rng.standard_normal(total, dtype=np.float32)
    out = launch(a, b)
    rt.synchronize()
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    print(f"PYASC-COMPAT vadd_double_buffer ok argv={sys.argv[1:]!r}")


if __name__ == "__main__":
    main()
