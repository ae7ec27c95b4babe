"""The two-input routines of ``asc.adv``'s math library: ``power``, ``xor``, ``axpy``.

* ``power(dst, src0, src1)``: ``src0[i] ** src1[i]``.  float16/float32: the
  float64 C-library ``pow`` of the (widened) inputs rounded to float32, then
  to float16 for float16 data.  int32: the exact integer power wrapped to
  32 bits; a negative exponent gives ``1`` for base 1, ``+-1`` for base -1
  and ``0`` otherwise (integer division of 1 by the power; *assumed*), and
  ``0 ** negative`` gives 0 (*assumed*).
* ``xor(dst, src0, src1)``: bitwise exclusive or of int16/uint16 (exact).
* ``axpy(dst, src, scalar)``: ``dst = src * scalar + dst``.  float32: product
  and sum each rounded to float32, as the basic ``axpy`` instruction does;
  float16: the scalar rounded to float16, the product (exact) and the sum in
  float32, the sum rounded once to float16 (the library's float32 scratch);
  float16 ``src`` into a float32 ``dst``: the scalar rounded to float16, the
  product exact in float32, the sum rounded to float32.
"""
from __future__ import annotations

import numpy as np

from ..numerics.half import f16_to_f32, f32_to_f16
from . import vmask as vm
from .adv_math import load16, load32, store16, store32
from .adv_math_scratch import DST, SRC, SRC1, check_apart, check_scratch
from .linkage import instruction


def make_power_float(half):
    esize = 2 if half else 4
    storage = np.uint16 if half else np.float32
    load, store = (load16, store16) if half else (load32, store32)

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, tmp, tmp_len, has_tmp, count, reuse, need, loc):
        vm.binary_count_checks(st, dst, dst_len, s0, s0_len, s1, s1_len, count, loc)
        check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
        nb = count * esize
        check_apart(tmp, tmp_len, has_tmp, dst, nb, DST, loc)
        check_apart(tmp, tmp_len, has_tmp, s0, nb, SRC, loc)
        check_apart(tmp, tmp_len, has_tmp, s1, nb, SRC1, loc)
        d = lm[dst:dst + nb].view(storage)
        a = lm[s0:s0 + nb].view(storage)
        b = lm[s1:s1 + nb].view(storage)
        if has_tmp:
            wide = lm[tmp:tmp + min(tmp_len, 4 * count) // 4 * 4].view(np.float32)
            for i in range(wide.size):
                wide[i] = load(a, i)
        for i in range(count):
            x = np.float64(load(a, i))
            y = np.float64(load(b, i))
            store(d, i, np.float32(x ** y))
        vm.count_form_done(st)

    return run


@instruction
def power_i32(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, tmp, tmp_len, has_tmp, count, reuse, need, loc):
    vm.binary_count_checks(st, dst, dst_len, s0, s0_len, s1, s1_len, count, loc)
    check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
    nb = count * 4
    check_apart(tmp, tmp_len, has_tmp, dst, nb, DST, loc)
    check_apart(tmp, tmp_len, has_tmp, s0, nb, SRC, loc)
    check_apart(tmp, tmp_len, has_tmp, s1, nb, SRC1, loc)
    d = lm[dst:dst + nb].view(np.int32)
    a = lm[s0:s0 + nb].view(np.int32)
    b = lm[s1:s1 + nb].view(np.int32)
    for i in range(count):
        base = np.int64(a[i])
        e = np.int64(b[i])
        if e < 0:
            r = np.int64(1) if base == 1 else (np.int64(1 - 2 * (e & 1)) if base == -1 else np.int64(0))
        else:
            r = np.int64(1)
            p = base
            while e > 0:
                if e & 1:
                    r = (r * p) & 0xFFFFFFFF
                p = (p * p) & 0xFFFFFFFF
                e >>= 1
        d[i] = np.int32(np.uint32(r & 0xFFFFFFFF))
    vm.count_form_done(st)


def make_xor(storage):
    @instruction
    def run(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, tmp, tmp_len, has_tmp, count, reuse, need, loc):
        vm.binary_count_checks(st, dst, dst_len, s0, s0_len, s1, s1_len, count, loc)
        check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
        nb = count * 2
        check_apart(tmp, tmp_len, has_tmp, dst, nb, DST, loc)
        check_apart(tmp, tmp_len, has_tmp, s0, nb, SRC, loc)
        check_apart(tmp, tmp_len, has_tmp, s1, nb, SRC1, loc)
        d = lm[dst:dst + nb].view(storage)
        a = lm[s0:s0 + nb].view(storage)
        b = lm[s1:s1 + nb].view(storage)
        for i in range(count):
            d[i] = a[i] ^ b[i]
        vm.count_form_done(st)

    return run


@instruction(error_model="numpy")
def axpy_f16(st, lm, dst, dst_len, src, src_len, scalar, tmp, tmp_len, has_tmp, count, reuse, need, loc):
    vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
    check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
    nb = count * 2
    check_apart(tmp, tmp_len, has_tmp, dst, nb, DST, loc)
    check_apart(tmp, tmp_len, has_tmp, src, nb, SRC, loc)
    d = lm[dst:dst + nb].view(np.uint16)
    a = lm[src:src + nb].view(np.uint16)
    s = f16_to_f32(f32_to_f16(np.float32(scalar)))
    if has_tmp:
        wide = lm[tmp:tmp + min(tmp_len, 4 * count) // 4 * 4].view(np.float32)
        for i in range(wide.size):
            wide[i] = f16_to_f32(a[i])
    for i in range(count):
        d[i] = f32_to_f16(np.float32(f16_to_f32(a[i]) * s + f16_to_f32(d[i])))
    vm.count_form_done(st)


@instruction(error_model="numpy")
def axpy_f32(st, lm, dst, dst_len, src, src_len, scalar, tmp, tmp_len, has_tmp, count, reuse, need, loc):
    vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
    check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
    nb = count * 4
    check_apart(tmp, tmp_len, has_tmp, dst, nb, DST, loc)
    check_apart(tmp, tmp_len, has_tmp, src, nb, SRC, loc)
    d = lm[dst:dst + nb].view(np.float32)
    a = lm[src:src + nb].view(np.float32)
    s = np.float32(scalar)
    for i in range(count):
        d[i] = np.float32(np.float32(a[i] * s) + d[i])
    vm.count_form_done(st)


@instruction(error_model="numpy")
def axpy_f16_f32(st, lm, dst, dst_len, src, src_len, scalar, tmp, tmp_len, has_tmp, count, reuse, need, loc):
    vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
    check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
    check_apart(tmp, tmp_len, has_tmp, dst, count * 4, DST, loc)
    check_apart(tmp, tmp_len, has_tmp, src, count * 2, SRC, loc)
    d = lm[dst:dst + count * 4].view(np.float32)
    a = lm[src:src + count * 2].view(np.uint16)
    s = f16_to_f32(f32_to_f16(np.float32(scalar)))
    if has_tmp:
        wide = lm[tmp:tmp + min(tmp_len, 4 * count) // 4 * 4].view(np.float32)
        for i in range(wide.size):
            wide[i] = f16_to_f32(a[i])
    for i in range(count):
        d[i] = np.float32(f16_to_f32(a[i]) * s + d[i])
    vm.count_form_done(st)


power_f16 = make_power_float(True)
power_f32 = make_power_float(False)
xor_i16 = make_xor(np.int16)
xor_u16 = make_xor(np.uint16)
