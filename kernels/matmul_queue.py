"""``C = A @ B`` with ``TQue``s on A1/B1/A2/B2/CO1: the queue-managed, double-buffered form of kernels/matmul.py.

The same schedule (blocks per core, ``baseM x baseN`` tiles, K in L1 chunks
and L0 steps), with the buffers handed between the stages through queues:
``enque``/``deque`` carry the producer -> consumer syncs (MTE2 -> MTE1 -> M
-> FIX) and ``alloc_tensor``/``free_tensor`` the buffer reuse in the other
direction, so the kernel places no event flag itself.  A1/B1 and A2/B2 hold
two buffers each: the next K chunk is copied into L1 while the current one
is loaded and multiplied, and the next L0 step is loaded while the cube
works on the current one.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._cube import (accumulator, align, ceil_div, copy_a, copy_b, core_block, launch_matmul, load_a,
                                  load_b, matmul_reference, mmad_step, quant_mode, store_c, tile_count)
from npuemu.tiling.matmul import TCubeTiling

DTYPES = ("float16", "bfloat16", "float32")
DEPTH = 2                       # double buffering in L1 and in L0


@asc.jit
def stage_chunk(qa1: asc.TQue, qb1: asc.TQue, ag: asc.GlobalTensor, bg: asc.GlobalTensor, t: TCubeTiling,
                row: int, col: int, tm: int, tn: int, kc: int, trans_b: asc.ConstExpr[bool]):
    """CopyIn: K chunk ``kc`` of the tile's A rows and B columns -> A1/B1 (NZ)."""
    k_chunk = t.baseK * t.stepKa
    kl = min(k_chunk, t.Ka - kc * k_chunk)
    a1 = qa1.alloc_tensor(ag.dtype)
    copy_a(a1, ag[row * t.Ka + kc * k_chunk:], tm, kl, t.Ka)
    qa1.enque(a1)
    b1 = qb1.alloc_tensor(bg.dtype)
    if trans_b:
        copy_b(b1, bg[col * t.Ka + kc * k_chunk:], kl, tn, t.Ka, trans_b)
    else:
        copy_b(b1, bg[kc * k_chunk * t.N + col:], kl, tn, t.N, trans_b)
    qb1.enque(b1)


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_queue_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: TCubeTiling,
                        trans_b: asc.ConstExpr[bool], quant: asc.ConstExpr, deq_scalar: int):
    acc = accumulator(a.dtype)
    c0 = 32 // a.dtype.sizeof()
    k_chunk = t.baseK * t.stepKa
    chunks = ceil_div(t.Ka, k_chunk)
    m0, n0, rows, cols = core_block(t, asc.get_block_idx())
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(b)
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    qa1 = asc.TQue(asc.TPosition.A1, DEPTH)
    qb1 = asc.TQue(asc.TPosition.B1, DEPTH)
    qa2 = asc.TQue(asc.TPosition.A2, DEPTH)
    qb2 = asc.TQue(asc.TPosition.B2, DEPTH)
    qc = asc.TQue(asc.TPosition.CO1, 1)
    pipe.init_buffer(qa1, DEPTH, align(t.baseM, 16) * align(k_chunk, c0) * a.dtype.sizeof())
    pipe.init_buffer(qb1, DEPTH, align(t.baseN, 16) * align(k_chunk, 16) * b.dtype.sizeof())
    pipe.init_buffer(qa2, DEPTH, align(t.baseM, 16) * t.baseK * a.dtype.sizeof())
    pipe.init_buffer(qb2, DEPTH, align(t.baseN, 16) * t.baseK * b.dtype.sizeof())
    pipe.init_buffer(qc, 1, t.baseM * t.baseN * 4)

    tiles_m, tiles_n = tile_count(t, rows, cols)
    for tj in range(tiles_n):
        for ti in range(tiles_m):
            tm = min(t.baseM, rows - ti * t.baseM)
            tn = min(t.baseN, cols - tj * t.baseN)
            row = m0 + ti * t.baseM
            col = n0 + tj * t.baseN
            co1 = qc.alloc_tensor(acc)
            stage_chunk(qa1, qb1, ag, bg, t, row, col, tm, tn, 0, trans_b)
            for kc in range(chunks):
                if kc + 1 < chunks:
                    stage_chunk(qa1, qb1, ag, bg, t, row, col, tm, tn, kc + 1, trans_b)   # prefetch
                kl = min(k_chunk, t.Ka - kc * k_chunk)
                a1 = qa1.deque(a.dtype)
                b1 = qb1.deque(b.dtype)
                for ks in range(ceil_div(kl, t.baseK)):
                    kk = min(t.baseK, kl - ks * t.baseK)
                    a2 = qa2.alloc_tensor(a.dtype)
                    load_a(a2, a1, tm, ks * t.baseK, kk)
                    qa2.enque(a2)
                    b2 = qb2.alloc_tensor(b.dtype)
                    load_b(b2, b1, kl, tn, ks * t.baseK, kk, trans_b)
                    qb2.enque(b2)
                    a2 = qa2.deque(a.dtype)
                    b2 = qb2.deque(b.dtype)
                    mmad_step(co1, a2, b2, tm, tn, kk, kc == 0 and ks == 0)
                    qa2.free_tensor(a2)
                    qb2.free_tensor(b2)
                qa1.free_tensor(a1)
                qb1.free_tensor(b1)
            qc.enque(co1)
            co1 = qc.deque(acc)
            store_c(cg[row * t.N + col:], co1, tm, tn, t.N, quant, deq_scalar)
            qc.free_tensor(co1)


def matmul_queue(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None, *, trans_b: bool = False,
                 **launch: Any) -> np.ndarray:
    """``a @ b`` (``a @ b.T`` with ``trans_b``) by :func:`matmul_queue_kernel`; the result has ``a``'s dtype."""
    return launch_matmul(matmul_queue_kernel, a, b, out, trans_b=trans_b,
                         args=(quant_mode(np.asarray(a).dtype), 0), op="matmul_queue", **launch)


reference = matmul_reference
