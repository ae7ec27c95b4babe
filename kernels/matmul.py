"""``C = A @ B`` with the cube's basic API: static L1/L0 tensors and hand-placed hardware syncs.

Every cube core computes one ``singleCoreM x singleCoreN`` block of C
(tiling/matmul.py; the last row and column of blocks are the tails), in
``baseM x baseN`` tiles.  For each tile, K runs through L1 in chunks of
``stepKa * baseK`` and each chunk through L0A/L0B in steps of ``baseK``; the
products accumulate in L0C and ``fixpipe`` writes the tile to GM, rounding
float32 to float16/bfloat16 on the way (or keeping float32, or int32 for
int8).  Any M, N, K works: the copies take the exact rows and columns, the
L1/L0 buffers are padded to whole fractals, and ``mmad`` and ``fixpipe`` only
touch the real ``m x n x k``.

Buffers: A1/B1 one chunk each, L0A/L0B two halves used alternately (``p``; one if
the tiling turned L0 double buffering off),
L0C one tile.  Event flags carry the dependencies:

* MTE2_MTE1 - the chunk is in L1 before MTE1 loads from it;
* MTE1_MTE2 - MTE1 has finished reading L1 before MTE2 overwrites it;
* MTE1_M    - L0A/L0B half ``p`` is loaded before the cube reads it;
* M_MTE1    - the cube has finished reading half ``p`` before MTE1 reloads it;
* M_FIX     - the tile's last ``mmad`` is done before ``fixpipe`` reads L0C;
* FIX_M     - ``fixpipe`` has read L0C before the next tile's first ``mmad``.

The "free" flags (MTE1_MTE2, M_MTE1, FIX_M) are set once before the loop and
waited for once after it, so every wait has a matching set.  The pipeline is
``kernels._cube.matmul_block``, which the fused Linear's cube side and the
int8 kernels reuse.

B may be given as ``[K, N]`` or, with ``trans_b``, as ``[N, K]``.  A
float32 ``[K, N]`` B is staged in 16-row strips and reaches L0B through
``load_data_with_transpose``; int8 B must be ``[N, K]`` in L1, so the host
function passes an int8 ``[K, N]`` B transposed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.kernels._cube import launch_matmul, matmul_block, matmul_reference, quant_mode
from npuemu.tiling.matmul import TCubeTiling

DTYPES = ("float16", "bfloat16", "float32")


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: TCubeTiling,
                  trans_b: asc.ConstExpr[bool], quant: asc.ConstExpr, deq_scalar: int):
    ag = asc.GlobalTensor()
    bg = asc.GlobalTensor()
    cg = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg.set_global_buffer(b)
    cg.set_global_buffer(c)
    matmul_block(ag, bg, cg, t, trans_b, quant, deq_scalar)


@asc.jit(kernel_type=asc.KernelType.AIC_ONLY)
def matmul_op_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: TCubeTiling,
                     trans_b: asc.ConstExpr[bool]):
    """:func:`matmul_kernel` with ``fixpipe``'s conversion chosen by ``c``'s dtype (the op library's MatMul).

    An op's launch passes only what its attributes decide; the output dtype
    is part of the binary's signature, so the conversion is chosen here.
    """
    if c.dtype == asc.float16:
        matmul_kernel(a, b, c, t, trans_b, asc.QuantModes.F322F16, 0)
    elif c.dtype == asc.bfloat16:
        matmul_kernel(a, b, c, t, trans_b, asc.QuantModes.F322BF16, 0)
    else:
        matmul_kernel(a, b, c, t, trans_b, asc.QuantModes.NoQuant, 0)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None, *, trans_b: bool = False,
           **launch: Any) -> np.ndarray:
    """``a @ b`` (``a @ b.T`` with ``trans_b``) by :func:`matmul_kernel`; the result has ``a``'s dtype.

    float16/bfloat16 products accumulate in float32 and are rounded once on
    the way out; float32 stays float32.
    """
    return launch_matmul(matmul_kernel, a, b, out, trans_b=trans_b, args=(quant_mode(np.asarray(a).dtype), 0),
                         **launch)


reference = matmul_reference
