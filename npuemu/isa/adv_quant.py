"""``asc.adv.quant``: per-tensor quantisation of float16/float32 to int8 (Ascend C AscendQuant).

Each step as the library's vector instructions round it: ``src``, ``scale``
and ``offset`` converted to float16 (round to nearest even); ``x * scale``
rounded to float16; ``+ offset`` rounded to float16; the conversion to int8
rounds half to even and saturates at -128 / 127 (documented), NaN giving 0
(*assumed*, the saturation mode of the casts).  The float16 products go to
``temp_buffer`` as scratch.
"""
from __future__ import annotations

import numpy as np

from ..numerics.half import f16_to_f32, f32_to_f16
from . import vmask as vm
from .adv_math import load16, load32
from .adv_math_scratch import DST, SRC, check_apart, check_scratch
from .linkage import instruction


def make_quant(half):
    esize = 2 if half else 4
    storage = np.uint16 if half else np.float32
    load = load16 if half else load32

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, src, src_len, scale, offset, tmp, tmp_len, has_tmp, count, need, loc):
        vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
        check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
        check_apart(tmp, tmp_len, has_tmp, dst, count, DST, loc)
        check_apart(tmp, tmp_len, has_tmp, src, count * esize, SRC, loc)
        d = lm[dst:dst + count].view(np.int8)
        a = lm[src:src + count * esize].view(storage)
        s = f16_to_f32(f32_to_f16(np.float32(scale)))
        o = f16_to_f32(f32_to_f16(np.float32(offset)))
        wide = lm[tmp:tmp + min(tmp_len, 2 * count) // 2 * 2].view(np.uint16)
        for i in range(count):
            x = f16_to_f32(f32_to_f16(load(a, i)))
            t = f16_to_f32(f32_to_f16(np.float32(x * s)))
            if has_tmp and i < wide.size:
                wide[i] = f32_to_f16(t)
            t = f16_to_f32(f32_to_f16(np.float32(t + o)))
            if t != t:
                q = 0
            else:
                r = np.rint(np.float64(t))
                q = int(min(max(r, -128.0), 127.0))
            d[i] = np.int8(q)
        vm.count_form_done(st)

    return run


quant_f16 = make_quant(True)
quant_f32 = make_quant(False)
