"""``asc.adv.softmax``: row-wise softmax of a ``[src_m, src_k]`` UB tensor with its tiling.

Numerics (the library works in float32; float16 data is widened exactly):
the row maximum (exact), ``e = exp(x - max)`` as the float64 C-library
value rounded to float32, the row sum of ``e`` added in float32 as a
pairwise tree (:func:`tree_sum`; the vector unit reduces 64-lane repeats,
so its order differs and so may the last bit), ``dst = e / sum`` rounded
to float32 and then to the destination type.  ``sum`` and ``max`` are
rounded to their own type and repeated over one 32-byte block per row.
The exponentials are written to ``temp_buffer`` as the routine's scratch.

Fault codes 2310-2319.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import errors
from .adv_math import load16, load32, store16, store32
from .adv_math_scratch import DST, MAX, SRC, SUM, check_apart, check_scratch, UB
from . import state as S
from .fault import Fault, register
from .linkage import instruction

F_SM_ALIGN = 2310
F_SM_OVER = 2311
F_SM_SPLIT = 2312
F_SM_SHAPE = 2313
F_SM_TMP = 2314
F_SM_BASIC = 2315
F_SM_TMP_ALIGN = 2316
NAMES = ("dst", "src", "src1", "gamma", "sum", "max")

register({
    F_SM_ALIGN: (errors.ParamRangeError,
                 lambda a, b, c, env: f"softmax: tiling.src_k = {a} elements of {b} bytes is not a multiple of 32 "
                                      f"bytes; the last axis must be 32-byte aligned (pad it)"),
    F_SM_OVER: (errors.BoundsError,
                lambda a, b, c, env: f"softmax: {NAMES[c]} needs {a} elements for the tiling's shape but holds {b}"),
    F_SM_SPLIT: (errors.ParamRangeError,
                 lambda a, b, c, env: f"softmax: tiling.split_m is {a} for {b} rows: the tiling was computed with a "
                                      f"local_work_size too small for one row (see get_softmax_min_tmp_size)"),
    F_SM_SHAPE: (errors.ParamRangeError,
                 lambda a, b, c, env: f"softmax: the tiling is inconsistent: range_m * split_m + tail_m = {a} but "
                                      f"src_m = {b}; fill it with softmax_tiling_func"),
    F_SM_TMP: (errors.CapacityError,
               lambda a, b, c, env: f"softmax: the tiling processes {c} rows per round, which needs {b} bytes of "
                                    f"scratch, but only {a} are available; compute the tiling with "
                                    f"local_work_size = the temp_buffer's size"),
    F_SM_BASIC: (errors.ParamRangeError,
                 lambda a, b, c, env: f"softmax: basic_block needs src_k % 64 == 0 and split_m % 8 == 0, got "
                                      f"src_k = {a}, split_m = {b}"),
    F_SM_TMP_ALIGN: (errors.ParamRangeError,
                     lambda a, b, c, env: f"softmax: tiling.reduce_k = {a} is not one 32-byte block of {b}-byte "
                                          f"sum/max elements ({32 // max(b, 1)}); the tiling was computed for "
                                          f"another dtype size"),
})


@njit(cache=True, error_model="numpy")
def tree_sum(buf, n):
    """Sum of ``buf[:n]`` (float32) by pairwise halving; ``buf`` is overwritten."""
    if n == 0:
        return np.float32(0.0)
    while n > 1:
        h = (n + 1) // 2
        for i in range(n // 2):
            buf[i] = np.float32(buf[i] + buf[i + h])
        n = h
    return buf[0]


def make_softmax(half, sum_half):
    esize = 2 if half else 4
    sesize = 2 if sum_half else 4
    storage = np.uint16 if half else np.float32
    sstorage = np.uint16 if sum_half else np.float32
    load, store = (load16, store16) if half else (load32, store32)
    sstore = store16 if sum_half else store32

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, sm, sm_len, mx, mx_len, src, src_len, tmp, tmp_len, has_tmp,
            src_m, src_k, reduce_k, split_m, range_m, tail_m, basic, loc):
        if (src_k * esize) % 32 != 0:
            raise Fault(F_SM_ALIGN, loc, src_k, esize, 0)
        if reduce_k * sesize != 32:
            raise Fault(F_SM_TMP_ALIGN, loc, reduce_k, sesize, 0)
        total = src_m * src_k
        for addr_len, which in ((src_len, SRC), (dst_len, DST)):
            if total > addr_len:
                raise Fault(F_SM_OVER, loc, total, addr_len, which)
        if src_m * reduce_k > sm_len:
            raise Fault(F_SM_OVER, loc, src_m * reduce_k, sm_len, SUM)
        if src_m * reduce_k > mx_len:
            raise Fault(F_SM_OVER, loc, src_m * reduce_k, mx_len, MAX)
        if src_m > 0 and split_m <= 0:
            raise Fault(F_SM_SPLIT, loc, split_m, src_m, 0)
        if range_m * split_m + tail_m != src_m or range_m < 0 or tail_m < 0:
            raise Fault(F_SM_SHAPE, loc, range_m * split_m + tail_m, src_m, 0)
        if basic and (src_k % 64 != 0 or split_m % 8 != 0):
            raise Fault(F_SM_BASIC, loc, src_k, split_m, 0)
        need = split_m * (reduce_k + src_k + 64) * 4
        avail = tmp_len if has_tmp else st[S.SEG_SIZE + UB] - st[S.PIPE_CUR + UB]
        if avail < need:
            raise Fault(F_SM_TMP, loc, avail, need, split_m)
        check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
        check_apart(tmp, tmp_len, has_tmp, dst, total * esize, DST, loc)
        check_apart(tmp, tmp_len, has_tmp, src, total * esize, SRC, loc)
        check_apart(tmp, tmp_len, has_tmp, sm, src_m * reduce_k * sesize, SUM, loc)
        check_apart(tmp, tmp_len, has_tmp, mx, src_m * reduce_k * sesize, MAX, loc)
        d = lm[dst:dst + total * esize].view(storage)
        a = lm[src:src + total * esize].view(storage)
        s_out = lm[sm:sm + src_m * reduce_k * sesize].view(sstorage)
        m_out = lm[mx:mx + src_m * reduce_k * sesize].view(sstorage)
        if has_tmp:
            e = lm[tmp:tmp + src_k * 4].view(np.float32)
        else:
            e = np.empty(src_k, np.float32)
        acc = np.empty(src_k, np.float32)
        for r in range(src_m):
            base = r * src_k
            m = np.float32(-np.inf)
            for j in range(src_k):
                x = load(a, base + j)
                if x > m or x != x:
                    m = x
            for j in range(src_k):
                e[j] = np.float32(math.exp(np.float64(np.float32(load(a, base + j) - m))))
                acc[j] = e[j]
            total_sum = tree_sum(acc, src_k)
            for j in range(src_k):
                store(d, base + j, np.float32(e[j] / total_sum))
            for j in range(reduce_k):
                sstore(s_out, r * reduce_k + j, total_sum)
                sstore(m_out, r * reduce_k + j, m)

    return run


softmax_f32 = make_softmax(False, False)
softmax_f16 = make_softmax(True, True)
softmax_f16_f32 = make_softmax(True, False)
