"""Fused Linear, ``y = act(x @ w + bias)``, as ATB's fused Linear: one MIX_AIC_1_2 kernel.

The cube core of each AI Core computes its block of ``x @ w`` exactly like
kernels/matmul.py (``_cube.matmul_block``) but keeps float32 (``fixpipe``
NoQuant) and writes it to a GM workspace, then raises cross-core flag
:data:`HANDOFF` in mode 2, which releases both vector cores of the same AI
Core.  Each vector core takes half of the block's rows; for every row it
streams the float32 products through UB, adds the bias, applies the
activation (tanh-GELU or leaky ReLU, kernels/gelu.py and
kernels/leaky_relu.py) in float32, rounds once to the output dtype and writes
the row of ``y``.  The intermediate never leaves float32, so the result
differs from the unfused ``act(matmul(x, w) + bias)`` (which rounds the
product first) by design.

``w`` is ``[K, N]``, or ``[N, K]`` with ``trans_b`` (the layout of a torch
``Linear`` weight and ATB's default); ``bias`` has ``N`` elements of ``x``'s
dtype.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import npuemu.asc as asc
from npuemu.asc import Field, KnownTypes, Struct, StructField
from npuemu.errors import LaunchError
from npuemu.host.tiling import TilingContext, TilingError, TilingResult
from npuemu.kernels._cube import ceil_div, core_block, launch_matmul, matmul_block
from npuemu.kernels._stream import from_float, global_slice, load_tile, store_tile, to_float
from npuemu.kernels.gelu import SQRT_2_OVER_PI_X2, CUBIC, gelu_tile
from npuemu.kernels.leaky_relu import leaky_relu_tile
from npuemu.platform import get_platform
from npuemu.tiling.matmul import TCubeTiling, matmul_tiling

DTYPES = ("float16", "bfloat16", "float32")
ACTIVATIONS = ("gelu", "leaky_relu")
HANDOFF = 3                      # cross-core flag: the block of x @ w is in the workspace
VEC_ALIGN = 64                   # vector chunk granularity (elements): whole 32-byte blocks for every dtype
VEC_MAX = 4096
UB_BYTES_PER_ELEMENT = 2 * 4 + 2 * 4 + 4 + 4 + 4 + 4   # queues in/out/bias (x2 where double buffered), scratch


@asc.jit
def vector_rows(ws: asc.GlobalAddress, bias: asc.GlobalAddress, y: asc.GlobalAddress, t: TCubeTiling,
                act: asc.ConstExpr, alpha: float, vec_len: int):
    """This vector core's half of its AI Core's block: ``y = act(ws + bias)`` row by row."""
    m0, n0, rows, cols = core_block(t, asc.get_block_idx() // 2)
    half = ceil_div(rows, 2)
    first = asc.get_sub_block_idx() * half
    count = min(half, rows - first)
    wsg = global_slice(ws, 0, t.M * t.N)
    bg = global_slice(bias, 0, t.N)
    yg = global_slice(y, 0, t.M * t.N)
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 2)
    qbias = asc.TQue(asc.TPosition.VECIN, 1)
    qout = asc.TQue(asc.TPosition.VECOUT, 2)
    calc = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(qin, 2, vec_len * 4)
    pipe.init_buffer(qbias, 1, vec_len * 4)
    pipe.init_buffer(qout, 2, vec_len * 4)
    pipe.init_buffer(calc, 3 * vec_len * 4)
    bias32 = calc.get_with_offset(vec_len, 0, asc.float32)
    pre = calc.get_with_offset(vec_len, vec_len * 4, asc.float32)
    post = calc.get_with_offset(vec_len, 2 * vec_len * 4, asc.float32)
    chunks = ceil_div(cols, vec_len)
    if count < 1:
        chunks = 0                    # a one-row block leaves the second vector core nothing to do
    for cc in range(chunks):
        cl = min(vec_len, cols - cc * vec_len)
        col = n0 + cc * vec_len
        load_tile(qbias, bg[col:], cl)
        braw = qbias.deque(y.dtype)
        if y.dtype == asc.float32:
            asc.adds(bias32, braw, 0.0, cl)
        else:
            to_float(bias32, braw, cl)
        qbias.free_tensor(braw)
        for r in range(count):
            off = (m0 + first + r) * t.N + col
            load_tile(qin, wsg[off:], cl)
            x = qin.deque(asc.float32)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            asc.add(pre, x, bias32, cl)
            qin.free_tensor(x)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            out = qout.alloc_tensor(y.dtype)
            if y.dtype == asc.float32:
                act(out, pre, alpha, cl)
            else:
                act(post, pre, alpha, cl)
                asc.pipe_barrier(asc.PipeID.PIPE_V)
                from_float(out, post, cl)
            qout.enque(out)
            store_tile(qout, yg[off:], cl)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def linear_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, bias: asc.GlobalAddress, y: asc.GlobalAddress,
                  workspace: asc.GlobalAddress, t: TCubeTiling, trans_b: asc.ConstExpr[bool], act: asc.ConstExpr,
                  alpha: float, vec_len: int):
    ws = asc.get_user_workspace(workspace)
    if asc.ascend_is_aic():
        xg = asc.GlobalTensor()
        wg = asc.GlobalTensor()
        cg = asc.GlobalTensor()
        xg.set_global_buffer(x)
        wg.set_global_buffer(w)
        cg.set_global_buffer(ws)
        matmul_block(xg, wg, cg, t, trans_b, asc.QuantModes.NoQuant, 0)
        asc.cross_core_set_flag(HANDOFF, 2, asc.PipeID.PIPE_FIX)
    if asc.ascend_is_aiv():
        asc.cross_core_wait_flag(HANDOFF, 2)
        vector_rows(ws, bias, y, t, act, alpha, vec_len)


def vector_chunk(n: int, platform: Any = None) -> int:
    """Elements of a row the vector cores process at a time: what UB holds, at most :data:`VEC_MAX`."""
    p = get_platform(platform)
    if not p.aic_count or p.aiv_count // p.aic_count < 2:
        raise TilingError(f"linear runs as MIX_AIC_1_2, which needs AI Cores with two AIV cores each; {p.name} "
                          f"has {p.aic_count} AIC and {p.aiv_count} AIV cores")
    fit = p.ub_size // UB_BYTES_PER_ELEMENT // VEC_ALIGN * VEC_ALIGN
    if fit < VEC_ALIGN:
        raise TilingError(f"the vector side of linear needs {VEC_ALIGN * UB_BYTES_PER_ELEMENT} bytes of UB; "
                          f"{p.name} has {p.ub_size}")
    return min(fit, VEC_MAX, -(-n // VEC_ALIGN) * VEC_ALIGN)


class LinearTiling(Struct):
    """Tiling data of :func:`linear_op_kernel`: the cube side's tiling and the vector side's chunk."""

    cube = StructField(TCubeTiling)
    vec_len = Field(KnownTypes.int32)          # :func:`vector_chunk` of N on the launch's platform


def linear_tiling(ctx: TilingContext) -> TilingResult:
    """``matmul_tiling`` (attributes ``trans_b``, ``workspace_c_bytes``) plus the vector chunk, in one struct."""
    result = matmul_tiling(ctx)
    cube = result.tiling_data
    data = LinearTiling(cube=cube, vec_len=vector_chunk(cube.N, ctx.platform))
    return dataclasses.replace(result, tiling_data=data)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def linear_op_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, bias: asc.GlobalAddress, y: asc.GlobalAddress,
                     workspace: asc.GlobalAddress, t: LinearTiling, trans_b: asc.ConstExpr[bool],
                     act: asc.ConstExpr, alpha: float):
    """:func:`linear_kernel` with everything the host decides in the tiling data (the op library's Linear).

    An op's launch passes the tiling data and what its attributes decide; the
    vector chunk depends on N and the platform's UB, so it travels in
    :class:`LinearTiling` rather than as an argument.
    """
    linear_kernel(x, w, bias, y, workspace, t.cube, trans_b, act, alpha, t.vec_len)


def linear(x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str = "gelu", alpha: float = 0.01,
           out: np.ndarray | None = None, *, trans_b: bool = False, **launch: Any) -> np.ndarray:
    """``act(x @ w + bias)`` (``x @ w.T`` with ``trans_b``) by :func:`linear_kernel`; the result has ``x``'s dtype.

    ``activation`` is ``"gelu"`` (tanh approximation) or ``"leaky_relu"``
    (negative slope ``alpha``).
    """
    if activation not in ACTIVATIONS:
        raise LaunchError(f"linear: activation must be one of {ACTIVATIONS}, got {activation!r}")
    x, bias = np.asarray(x), np.asarray(bias)
    n = np.asarray(w).shape[0 if trans_b else 1]
    if bias.shape != (n,) or bias.dtype != x.dtype:
        raise LaunchError(f"linear: bias must be {n} values of {x.dtype}, got {bias.dtype}{list(bias.shape)}")
    act = gelu_tile if activation == "gelu" else leaky_relu_tile
    vec_len = vector_chunk(n, launch.get("platform"))
    return launch_matmul(linear_kernel, x, w, out, trans_b=trans_b, inputs_after=(np.ascontiguousarray(bias),),
                         args=(act, float(alpha), vec_len), attrs={"workspace_c_bytes": 4},
                         workspace_dtype=asc.float32, op="linear", **launch)


def reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray, activation: str = "gelu", alpha: float = 0.01,
              trans_b: bool = False) -> np.ndarray:
    """float32 ``x @ w + bias`` on the upcast inputs, the activation in float64, one rounding to ``x``'s dtype."""
    pre = (x.astype(np.float32) @ (w.T if trans_b else w).astype(np.float32) + bias.astype(np.float32))
    a = pre.astype(np.float64)
    if activation == "gelu":
        r = a / (1.0 + np.exp(-SQRT_2_OVER_PI_X2 * (a + CUBIC * a ** 3)))
    else:
        r = np.where(a >= 0, a, a * np.float32(alpha))
    return r.astype(np.float32).astype(x.dtype)
