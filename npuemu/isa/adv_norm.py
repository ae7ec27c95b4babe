"""``asc.adv.rmsnorm``: RmsNorm of a ``[b, s, h]`` UB tensor with its tiling.

Numerics (float32 throughout; float16 data widened exactly): per row, the
squares rounded to float32 and summed as a pairwise float32 tree
(:func:`npuemu.isa.adv_softmax.tree_sum`), times ``reciprocal_of_h_length``
(float32), plus ``epsilon`` (float32), ``1 / sqrt`` computed in float64 and
rounded to float32; then ``x * r`` and ``* gamma``, each rounded to
float32, and the result rounded to the destination type.  The sum runs over
all ``h_length`` elements: the padding past ``original_h_length`` must be
zero (as on hardware).  The squares go to ``temp_buffer`` as scratch.

Fault codes 2320-2329.
"""
from __future__ import annotations

import math

import numpy as np

from .. import errors
from .adv_math import load16, load32, store16, store32
from .adv_math_scratch import DST, GAMMA, SRC, UB, check_apart, check_scratch
from .adv_softmax import tree_sum
from . import state as S
from .fault import Fault, register
from .linkage import instruction

F_RN_ALIGN = 2320
F_RN_OVER = 2321
F_RN_ORIG = 2322
F_RN_SHAPE = 2323
F_RN_TMP = 2324
F_RN_BASIC = 2325
NAMES = ("dst", "src", "src1", "gamma", "sum", "max")

register({
    F_RN_ALIGN: (errors.ParamRangeError,
                 lambda a, b, c, env: f"rmsnorm: tiling.h_length = {a} elements of {b} bytes is not a multiple of "
                                      f"32 bytes; pad h to 32 bytes (original_h_length keeps the real width)"),
    F_RN_OVER: (errors.BoundsError,
                lambda a, b, c, env: f"rmsnorm: {NAMES[c]} needs {a} elements for the tiling's shape but holds {b}"),
    F_RN_ORIG: (errors.ParamRangeError,
                lambda a, b, c, env: f"rmsnorm: tiling.original_h_length = {a} must be in [1, h_length = {b}]"),
    F_RN_SHAPE: (errors.ParamRangeError,
                 lambda a, b, c, env: f"rmsnorm: the tiling is inconsistent ({a} elements in its rounds, {b} in "
                                      f"b * s * h); fill it with get_rms_norm_tiling_info"),
    F_RN_TMP: (errors.CapacityError,
               lambda a, b, c, env: f"rmsnorm: the tiling processes {c} rows per round, which needs {b} bytes of "
                                    f"scratch, but only {a} are available; compute the tiling with "
                                    f"stack_buffer_size = the temp_buffer's size"),
    F_RN_BASIC: (errors.ParamRangeError,
                 lambda a, b, c, env: f"rmsnorm: basic_block needs h % 64 == 0, h < 2048 and b * s % 8 == 0, got "
                                      f"h = {a}, b * s = {b}"),
})


def make_rmsnorm(half):
    esize = 2 if half else 4
    storage = np.uint16 if half else np.float32
    load, store = (load16, store16) if half else (load32, store32)
    coeff = 2 if half else 1

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, src, src_len, gamma, gamma_len, tmp, tmp_len, has_tmp, eps,
            b, s, h, orig_h, recip, main_bsh, main_bs, loop_round, tail_bsh, tail_bs, basic, loc):
        if (h * esize) % 32 != 0:
            raise Fault(F_RN_ALIGN, loc, h, esize, 0)
        rows = b * s
        total = rows * h
        for n, which in ((src_len, SRC), (dst_len, DST)):
            if total > n:
                raise Fault(F_RN_OVER, loc, total, n, which)
        if h > gamma_len:
            raise Fault(F_RN_OVER, loc, h, gamma_len, GAMMA)
        if orig_h < 1 or orig_h > h:
            raise Fault(F_RN_ORIG, loc, orig_h, h, 0)
        if (total > 0 and main_bs <= 0) or main_bsh != main_bs * h or loop_round * main_bsh + tail_bsh != total \
                or tail_bsh != tail_bs * h:
            raise Fault(F_RN_SHAPE, loc, loop_round * main_bsh + tail_bsh, total, 0)
        if basic and (h % 64 != 0 or h >= 2048 or rows % 8 != 0):
            raise Fault(F_RN_BASIC, loc, h, rows, 0)
        need = (main_bs * h * coeff + (main_bs + 7) // 8 * 8) * 4
        avail = tmp_len if has_tmp else st[S.SEG_SIZE + UB] - st[S.PIPE_CUR + UB]
        if avail < need:
            raise Fault(F_RN_TMP, loc, avail, need, main_bs)
        check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
        check_apart(tmp, tmp_len, has_tmp, dst, total * esize, DST, loc)
        check_apart(tmp, tmp_len, has_tmp, src, total * esize, SRC, loc)
        check_apart(tmp, tmp_len, has_tmp, gamma, h * esize, GAMMA, loc)
        d = lm[dst:dst + total * esize].view(storage)
        a = lm[src:src + total * esize].view(storage)
        g = lm[gamma:gamma + h * esize].view(storage)
        sq = lm[tmp:tmp + h * 4].view(np.float32) if has_tmp else np.empty(h, np.float32)
        e32 = np.float32(eps)
        rc = np.float32(recip)
        for r in range(rows):
            base = r * h
            for j in range(h):
                x = load(a, base + j)
                sq[j] = np.float32(x * x)
            mean = np.float32(tree_sum(sq, h) * rc)
            inv = np.float32(1.0 / math.sqrt(np.float64(np.float32(mean + e32))))
            for j in range(h):
                store(d, base + j, np.float32(np.float32(load(a, base + j) * inv) * load(g, j)))

    return run


rmsnorm_f32 = make_rmsnorm(False)
rmsnorm_f16 = make_rmsnorm(True)
