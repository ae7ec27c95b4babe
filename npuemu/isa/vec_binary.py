"""Binary vector instructions (``add``, ``sub``, ...) on UB tensors.

Each instruction exists per storage dtype; float16 values are widened to
float32, combined, and rounded back to float16 after every instruction (the
float32 result of one +, -, * or / of two float16 values rounds to the same
float16 as an exact computation would, so this is bit-exact).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..numerics.half import f16_to_f32, f32_to_f16
from .common import BLOCK, check_aligned, check_count


@njit(cache=True, inline="always")
def _add(a, b):
    return a + b


def make_count_op(op, storage, half):
    """The count form ``op(dst, src0, src1, count)`` for one storage dtype."""
    esize = np.dtype(storage).itemsize

    @njit(cache=True)
    def run(lm, dst, dst_len, s0, s0_len, s1, s1_len, count, loc):
        check_count(count, dst_len, loc)
        check_count(count, s0_len, loc)
        check_count(count, s1_len, loc)
        check_aligned(dst, BLOCK, 1, loc)
        check_aligned(s0, BLOCK, 1, loc)
        check_aligned(s1, BLOCK, 1, loc)
        nb = count * esize
        d = lm[dst:dst + nb].view(storage)
        a = lm[s0:s0 + nb].view(storage)
        b = lm[s1:s1 + nb].view(storage)
        if half:
            for i in range(count):
                d[i] = f32_to_f16(op(f16_to_f32(a[i]), f16_to_f32(b[i])))
        else:
            for i in range(count):
                d[i] = op(a[i], b[i])

    return run


add_f32 = make_count_op(_add, np.float32, False)
add_f16 = make_count_op(_add, np.uint16, True)
add_i32 = make_count_op(_add, np.int32, False)
add_i16 = make_count_op(_add, np.int16, False)
