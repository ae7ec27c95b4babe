"""Property-testing your own tiling function, and the kernel that reads it, against NumPy.

The op is ``z = x * y + x`` on two arrays of any shape.  This file has all of
it: the tiling data, the tiling function, the kernel, the host function that
tiles and launches, and the tests.  Run it with

    python -m pytest examples/property_test_my_tiling.py
    NPUEMU_HYPOTHESIS_PROFILE=thorough python -m pytest examples/property_test_my_tiling.py

or as a script (``python examples/property_test_my_tiling.py``).
"""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import npuemu.asc as asc
from npuemu.host import CoreMemType, TilingContext, TilingError, TilingResult, run_op
from npuemu.testing import BlockWork, TilingPlan, assert_kernel_matches, assert_tiling, profiles, tile_loop
from npuemu.testing import strategies as nst

BUFFERS = 2          # every queue is double buffered
TENSORS = 3          # x, y and z each have a queue
MAX_TILE = 16384     # bytes of one tile of one tensor

# ------------------------------------------------------------------------------------------- the op


class MyTiling(asc.Struct):
    total = asc.Field(asc.uint32)       # elements in x
    block_len = asc.Field(asc.uint32)   # elements per block; the last block takes what is left
    tile_len = asc.Field(asc.uint32)    # elements per UB tile


def my_tiling(ctx: TilingContext) -> TilingResult:
    """Whole 32-byte blocks per core (so every core starts aligned), tiles as large as the UB allows."""
    x = ctx.input(0)
    n, s = x.size, x.itemsize
    pa = ctx.platform_ascendc()                      # sizes from the profile: custom ones work too
    cores = pa.get_core_num_aiv()
    ub = pa.get_core_mem_size(CoreMemType.UB)
    per_block = 32 // s
    blocks = -(-n // per_block)                      # 32-byte blocks of work
    block_len = -(-blocks // cores) * per_block
    tile = min(block_len, MAX_TILE // s, ub // (BUFFERS * TENSORS * s) // per_block * per_block)
    if tile < 1:
        raise TilingError(f"one 32-byte block of x, y and z, double buffered, needs "
                          f"{BUFFERS * TENSORS * 32} bytes of UB; {ctx.platform.name} has {ub}")
    return TilingResult(block_dim=-(-n // block_len),
                        tiling_data=MyTiling(total=n, block_len=block_len, tile_len=tile))


@asc.jit
def copy_in(q: asc.TQue, src: asc.GlobalTensor, count: int):
    """GM -> UB; a tail that is not a whole number of 32-byte blocks goes through data_copy_pad."""
    t = q.alloc_tensor(src.dtype)
    nbytes = count * src.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(t, src, count)
    else:
        asc.data_copy_pad(t, src, asc.DataCopyExtParams(1, nbytes, 0, 0, 0),
                          asc.DataCopyPadExtParams(src.dtype, False, 0, 0, 0))
    q.enque(t)


@asc.jit
def copy_out(q: asc.TQue, dst: asc.GlobalTensor, count: int):
    """UB -> GM, the same way."""
    t = q.deque(dst.dtype)
    nbytes = count * dst.dtype.sizeof()
    if nbytes % 32 == 0:
        asc.data_copy(dst, t, count)
    else:
        asc.data_copy_pad(dst, t, asc.DataCopyExtParams(1, nbytes, 0, 0, 0))
    q.free_tensor(t)


@asc.jit
def my_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, t: MyTiling):
    start = asc.get_block_idx() * t.block_len
    length = min(t.block_len, t.total - start)
    xg, yg, zg = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x + start, length)
    yg.set_global_buffer(y + start, length)
    zg.set_global_buffer(z + start, length)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFFERS)
    qy = asc.TQue(asc.TPosition.VECIN, BUFFERS)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFFERS)
    pipe.init_buffer(qx, BUFFERS, t.tile_len * x.dtype.sizeof())
    pipe.init_buffer(qy, BUFFERS, t.tile_len * y.dtype.sizeof())
    pipe.init_buffer(qz, BUFFERS, t.tile_len * z.dtype.sizeof())
    for i in range((length + t.tile_len - 1) // t.tile_len):
        off = i * t.tile_len
        count = min(t.tile_len, length - off)
        copy_in(qx, xg[off:], count)
        copy_in(qy, yg[off:], count)
        lx = qx.deque(x.dtype)
        ly = qy.deque(y.dtype)
        lz = qz.alloc_tensor(z.dtype)
        asc.mul(lz, lx, ly, count)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.add(lz, lz, lx, count)
        qz.enque(lz)
        qx.free_tensor(lx)
        qy.free_tensor(ly)
        copy_out(qz, zg[off:], count)


def my_op(x: np.ndarray, y: np.ndarray, **launch) -> np.ndarray:
    """``x * y + x`` on the emulated NPU: tiles with my_tiling and launches my_kernel (``platform=`` etc.)."""
    z = np.empty_like(x)
    run_op(my_kernel, my_tiling, (x, y), (z,), **launch)
    return z


# ---------------------------------------------------------------------------------------- the tests


def my_plan(ctx: TilingContext, result: TilingResult) -> TilingPlan:
    """What my_tiling decided, computed the way my_kernel reads MyTiling."""
    t = result.tiling_data
    blocks = []
    for i in range(result.block_dim):
        start = i * t.block_len
        length = min(t.block_len, t.total - start)
        blocks.append(BlockWork(start, length, t.tile_len, *tile_loop(length, t.tile_len)))
    x = ctx.input(0)
    return TilingPlan(total=x.size, elem_bytes=x.itemsize, block_dim=result.block_dim, blocks=blocks,
                      core_count=ctx.platform.aiv_count, ub_size=ctx.platform.ub_size,
                      ub_bytes_per_element=BUFFERS * TENSORS * x.itemsize,
                      align_bytes=32, balance="last-short")


@profiles.settings(ci=50, thorough=2000)
@given(ctx=nst.tiling_contexts(shapes=nst.shapes(max_size=1 << 31),       # 1, primes, 2**k +- 1, huge
                               dtypes=nst.dtypes(["float16", "float32"]),
                               platforms=nst.platforms(),                  # built-in and random custom ones
                               n_inputs=2))
def test_my_tiling(ctx):
    # coverage, core bound, no empty core, alignment, UB capacity, loop/tail, balance, determinism
    assert_tiling(my_tiling, ctx, my_plan)


SMALL = nst.make_platform(aiv_count=7, ub_size=48 * 1024)      # few cores, small UB: many tiles and tails


@profiles.settings(ci=5, thorough=100)
@given(shape=nst.shapes(max_size=1 << 16), dtype=nst.dtypes(["float16", "float32"]),
       platform=st.sampled_from(["Ascend910B1", SMALL]), seed=nst.seeds())
def test_my_op_matches_numpy(shape, dtype, platform, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    # bit-exact: the vector unit rounds each mul and add as NumPy does
    assert_kernel_matches(my_op, lambda x, y: x * y + x, (x, y), platform=platform)


if __name__ == "__main__":
    test_my_tiling()
    test_my_op_matches_numpy()
    print("all properties hold")
