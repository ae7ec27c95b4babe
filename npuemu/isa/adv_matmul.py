"""Run-time checks of the high-level Matmul object (``asc.adv.Matmul``, docs/matmul-api.md).

The object's work is ordinary cube instructions (``frontend/rules/adv_matmul_lib.py``),
checked as such; these are the object's own rules, reported at the method call's line:
the tiling ``init`` receives must fit the core's L1/L0A/L0B/L0C and keep the cube's
alignment, the object must be initialised and have A and B before it computes, and
an output tensor must hold what is written to it.
"""
from __future__ import annotations

from .. import errors
from ..language.enums import Hardware
from . import state as S
from .fault import Fault, register
from .linkage import instruction

F_BASE_MN = 2200
F_BASE_K = 2201
F_L1 = 2202
F_L0A = 2203
F_L0B = 2204
F_L0C = 2205
F_NOT_INIT = 2206
F_NO_INPUT = 2207
F_OUT_SMALL = 2208
F_BIAS_TABLE = 2209
F_BASE_ZERO = 2210
F_NO_TILE = 2211
F_SHAPE = 2212
F_NO_WORKSPACE = 2214
F_NO_BATCH = 2215

_AB = ("A", "B")

register({
    F_BASE_MN: (errors.AlignmentError,
                lambda a, b, c, env: f"Matmul tiling: base_{'mn'[c]} = {a} is not a multiple of 16 (the cube "
                                     f"works on 16 x 16 fractals; the host tiling keeps base_m and base_n "
                                     f"multiples of 16)"),
    F_BASE_K: (errors.AlignmentError,
               lambda a, b, c, env: f"Matmul tiling: base_k = {a} is not a multiple of C0 = {b} elements (32 "
                                    f"bytes of the input type)"),
    F_L1: (errors.CapacityError,
           lambda a, b, c, env: f"Matmul tiling does not fit L1: depth_a1 * base_m * base_k + depth_b1 * "
                                f"base_k * base_n (+ bias) = {a} bytes, L1 holds {b}"),
    F_L0A: (errors.CapacityError,
            lambda a, b, c, env: f"Matmul tiling does not fit L0A: base_m * base_k (x2 with db_l0a) = {a} "
                                 f"bytes, L0A holds {b}"),
    F_L0B: (errors.CapacityError,
            lambda a, b, c, env: f"Matmul tiling does not fit L0B: base_k * base_n (x2 with db_l0b) = {a} "
                                 f"bytes, L0B holds {b}"),
    F_L0C: (errors.CapacityError,
            lambda a, b, c, env: f"Matmul tiling does not fit L0C: base_m * base_n * 4 (x2 with db_l0c) = "
                                 f"{a} bytes, L0C holds {b}"),
    F_NOT_INIT: (errors.NullPointerError,
                 lambda a, b, c, env: "Matmul used before init: call register_matmul(pipe, matmul, tiling) or "
                                      "matmul.init(tiling) first (after end(), init again)"),
    F_NO_INPUT: (errors.NullPointerError,
                 lambda a, b, c, env: f"Matmul computes without {_AB[a]}: call set_tensor_{'ab'[a]}(...) "
                                      f"before iterate/iterate_all"),
    F_OUT_SMALL: (errors.BoundsError,
                  lambda a, b, c, env: f"Matmul output: writing C needs {a} elements of the tensor, it has {b}"),
    F_BIAS_TABLE: (errors.CapacityError,
                   lambda a, b, c, env: f"Matmul bias: base_n = {a} float32/int32 values do not fit the "
                                        f"{b}-byte bias table"),
    F_BASE_ZERO: (errors.ParamRangeError,
                  lambda a, b, c, env: f"Matmul tiling: base_{'mnk'[c]} = {a} must be positive"),
    F_NO_TILE: (errors.NullPointerError,
                lambda a, b, c, env: "Matmul get_tensor_c/get_offset_c without a tile: call iterate() first "
                                     "(and use its result: it is false once every tile is done)"),
    F_SHAPE: (errors.ParamRangeError,
              lambda a, b, c, env: f"Matmul shape: single-core {'MNK'[c]} = {a} must be positive"),
    F_NO_WORKSPACE: (errors.NullPointerError,
                     lambda a, b, c, env: f"Matmul {'get_tensor_c()' if c == 1 else 'iterate_n_batch'} without a workspace: "
                                          f"its results go to the GM of set_workspace(tensor) (call it first)"),
    F_NO_BATCH: (errors.NullPointerError,
                 lambda a, b, c, env: f"Matmul get_batch_tensor_c without a result: iterate_n_batch computed {b} "
                                      f"round(s) and {a} were fetched already (call iterate_n_batch first)"),
})


@instruction
def check_workspace_set(st, init, ws_set, what, loc):
    """``iterate_n_batch`` (``what`` 0), ``get_tensor_c()`` (1): initialised, with a ``set_workspace``."""
    if init == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    if ws_set == 0:
        raise Fault(F_NO_WORKSPACE, loc, 0, 0, what)
    return 0


@instruction
def check_batch_left(st, init, fetched, loops, loc):
    """``get_batch_tensor_c``: a round of ``iterate_n_batch`` not fetched yet."""
    if init == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    if fetched >= loops:
        raise Fault(F_NO_BATCH, loc, fetched, loops, 0)
    return 0


@instruction
def check_tiling(st, bm, bn, bk, depth_a1, depth_b1, db_a, db_b, db_c, size_in, bias, loc):
    """The tiling ``init`` received against the core's buffers (TCubeTiling's constraints)."""
    for i, v in enumerate((bm, bn, bk)):
        if v <= 0:
            raise Fault(F_BASE_ZERO, loc, v, 0, i)
    c0 = 32 // size_in
    if bm % 16 != 0:
        raise Fault(F_BASE_MN, loc, bm, 0, 0)
    if bn % 16 != 0:
        raise Fault(F_BASE_MN, loc, bn, 0, 1)
    if bk % c0 != 0:
        raise Fault(F_BASE_K, loc, bk, c0, 0)
    da = max(depth_a1, 1)
    dbb = max(depth_b1, 1)
    l1 = (da * bm * bk + dbb * bk * bn) * size_in + (bn * 4 if bias else 0)
    if l1 > st[S.SEG_SIZE + Hardware.L1]:
        raise Fault(F_L1, loc, l1, st[S.SEG_SIZE + Hardware.L1], 0)
    l0a = bm * bk * size_in * (2 if db_a == 2 else 1)
    if l0a > st[S.SEG_SIZE + Hardware.L0A]:
        raise Fault(F_L0A, loc, l0a, st[S.SEG_SIZE + Hardware.L0A], 0)
    l0b = bn * bk * size_in * (2 if db_b == 2 else 1)
    if l0b > st[S.SEG_SIZE + Hardware.L0B]:
        raise Fault(F_L0B, loc, l0b, st[S.SEG_SIZE + Hardware.L0B], 0)
    l0c = bm * bn * 4 * (2 if db_c == 2 else 1)
    if l0c > st[S.SEG_SIZE + Hardware.L0C]:
        raise Fault(F_L0C, loc, l0c, st[S.SEG_SIZE + Hardware.L0C], 0)
    if bias and bn * 4 > st[S.SEG_SIZE + Hardware.BIAS]:
        raise Fault(F_BIAS_TABLE, loc, bn, st[S.SEG_SIZE + Hardware.BIAS], 0)
    return 1


@instruction
def check_ready(st, init, a_set, b_set, sm, sn, sk, loc):
    """Before computing: initialised, A and B set, positive single-core shape."""
    if init == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    if a_set == 0:
        raise Fault(F_NO_INPUT, loc, 0, 0, 0)
    if b_set == 0:
        raise Fault(F_NO_INPUT, loc, 1, 0, 0)
    for i, v in enumerate((sm, sn, sk)):
        if v <= 0:
            raise Fault(F_SHAPE, loc, v, 0, i)
    return 0


@instruction
def check_init(st, init, loc):
    """A method that needs ``init`` first."""
    if init == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    return 0


@instruction
def check_out(st, init, tiles, need, size, loc):
    """An output write: a tile computed (``tiles`` > 0), ``need`` elements within ``size`` (-1: unbounded)."""
    if init == 0:
        raise Fault(F_NOT_INIT, loc, 0, 0, 0)
    if tiles <= 0:
        raise Fault(F_NO_TILE, loc, 0, 0, 0)
    if size >= 0 and need > size:
        raise Fault(F_OUT_SMALL, loc, need, size, 0)
    return 0
