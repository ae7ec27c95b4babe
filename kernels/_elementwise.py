"""Pipelined elementwise kernel templates: the compute step is a helper passed as a constant.

``unary_kernel(x, z, t, compute, alpha, widen_half)`` streams ``x`` through UB
tile by tile and calls ``compute(dst, src, alpha, count)`` on each tile;
``binary_kernel`` does the same with two inputs.  Inputs in bfloat16 (which
the A2 vector unit does not compute on) and, if ``widen_half``, float16 are
widened to float32 for the compute step and rounded back once, as production
kernels do for accuracy.  ``kernels/add.py`` spells the same pipeline out
without the template.
"""
from __future__ import annotations

import npuemu.asc as asc
from npuemu.kernels._stream import (core_tiles, from_float, global_slice, load_tile, store_tile, tile_extent,
                                    to_float)
from npuemu.tiling.elementwise import BUFFER_NUM, ElementwiseTiling


@asc.jit
def _wide(d: asc.ConstExpr, widen_half: asc.ConstExpr):
    return d == asc.bfloat16 or (widen_half and d == asc.float16)


@asc.jit
def unary_kernel(x: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling, alpha: float,
                 compute: asc.ConstExpr, widen_half: asc.ConstExpr[bool]):
    start, length, tiles, tile_len, last_len = core_tiles(t)
    buf_len = max(tile_len, last_len)
    xg = global_slice(x, start, length)
    zg = global_slice(z, start, length)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(qx, BUFFER_NUM, buf_len * x.dtype.sizeof())
    pipe.init_buffer(qz, BUFFER_NUM, buf_len * z.dtype.sizeof())
    wide = _wide(x.dtype, widen_half)
    if wide:
        calc = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(calc, 2 * buf_len * 4)
    for i in range(tiles + (1 if last_len > 0 else 0)):
        off, count = tile_extent(i, tiles, tile_len, last_len, length)
        load_tile(qx, xg[off:], count)
        lx = qx.deque(x.dtype)
        lz = qz.alloc_tensor(z.dtype)
        if wide:
            fx = calc.get_with_offset(buf_len, 0, asc.float32)
            fz = calc.get_with_offset(buf_len, buf_len * 4, asc.float32)
            to_float(fx, lx, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            compute(fz, fx, alpha, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            from_float(lz, fz, count)
        else:
            compute(lz, lx, alpha, count)
        qz.enque(lz)
        qx.free_tensor(lx)
        store_tile(qz, zg[off:], count)


@asc.jit
def binary_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, t: ElementwiseTiling,
                  alpha: float, compute: asc.ConstExpr, widen_half: asc.ConstExpr[bool]):
    start, length, tiles, tile_len, last_len = core_tiles(t)
    buf_len = max(tile_len, last_len)
    xg = global_slice(x, start, length)
    yg = global_slice(y, start, length)
    zg = global_slice(z, start, length)
    pipe = asc.TPipe()
    qx = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qy = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    qz = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(qx, BUFFER_NUM, buf_len * x.dtype.sizeof())
    pipe.init_buffer(qy, BUFFER_NUM, buf_len * y.dtype.sizeof())
    pipe.init_buffer(qz, BUFFER_NUM, buf_len * z.dtype.sizeof())
    wide = _wide(x.dtype, widen_half)
    if wide:
        calc = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(calc, 3 * buf_len * 4)
    for i in range(tiles + (1 if last_len > 0 else 0)):
        off, count = tile_extent(i, tiles, tile_len, last_len, length)
        load_tile(qx, xg[off:], count)
        load_tile(qy, yg[off:], count)
        lx = qx.deque(x.dtype)
        ly = qy.deque(y.dtype)
        lz = qz.alloc_tensor(z.dtype)
        if wide:
            fx = calc.get_with_offset(buf_len, 0, asc.float32)
            fy = calc.get_with_offset(buf_len, buf_len * 4, asc.float32)
            fz = calc.get_with_offset(buf_len, 2 * buf_len * 4, asc.float32)
            to_float(fx, lx, count)
            to_float(fy, ly, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            compute(fz, fx, fy, alpha, count)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            from_float(lz, fz, count)
        else:
            compute(lz, lx, ly, alpha, count)
        qz.enque(lz)
        qx.free_tensor(lx)
        qy.free_tensor(ly)
        store_tile(qz, zg[off:], count)
