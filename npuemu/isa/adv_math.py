"""The element-wise math library of ``asc.adv`` (Ascend C 高阶 API, 数学计算): one-input routines.

``dst[i] = f(src[i])`` for the first ``count`` elements, float16 or float32.
The library runs each routine on float32 (float16 data widened exactly),
so npuemu defines the result as: the float64 C-library value of ``f`` at
the (widened) input, rounded to float32, and for float16 data rounded again
to float16.  The exact routines (``floor``, ``ceil``, ``trunc``, ``round``,
``sign``, ``frac``) are exact in either type; ``round`` is round-half-to-even
(the A2 library's float path is one ``Cast`` with ``CAST_RINT``).  ``exp``
with ``taylor_expand_level = n > 0`` follows the library's algorithm:
``exp(x) = exp(int(x)) * T_n(frac(x))`` with ``T_n`` the Taylor polynomial of
degree ``n``, every step in float32 (*assumed*: degree ``n``, i.e. ``n + 1``
terms).  Hardware results are not bit-documented; expect them to differ by
a few float32 ulp (docs/adv-api.md lists npuemu's measured accuracy).

Scratch and ``is_reuse_source``: see :mod:`npuemu.isa.adv_math_scratch`.  The
routine writes the widened inputs (float32) into the first bytes of
``temp_buffer`` -- so a kernel that expects the scratch to survive the call
sees it changed, as on hardware -- and, for float32 with
``is_reuse_source``, leaves the results in ``src`` as well (the library uses
``src`` as scratch; its contents afterwards are unspecified there).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..numerics.half import f16_to_f32, f32_to_f16
from . import vmask as vm
from .adv_math_scratch import DST, SRC, check_apart, check_scratch
from .linkage import instruction

(ACOS, ACOSH, ASIN, ASINH, ATAN, ATANH, CEIL, COS, COSH, DIGAMMA, ERF, ERFC, EXP, FLOOR, FRAC, LGAMMA, LOG, ROUND,
 SIGN, SIN, SINH, TAN, TANH, TRUNC) = range(24)
NAMES = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "digamma", "erf", "erfc", "exp",
         "floor", "frac", "lgamma", "log", "round", "sign", "sin", "sinh", "tan", "tanh", "trunc")


@njit(cache=True, error_model="numpy")
def digamma64(x):
    """psi(x) in float64: reflection below 0, recurrence up to 6, then the asymptotic series."""
    if x != x or x == -np.inf:
        return np.nan
    if x == np.inf:
        return np.inf
    if x <= 0.0 and x == math.floor(x):
        return np.nan                     # the poles (assumed NaN, as for lgamma's sign ambiguity)
    r = 0.0
    if x < 0.0:
        r = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 6.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (
        -1.0 / 132 + f * (691.0 / 32760 + f * (-1.0 / 12)))))))
    return r + math.log(x) - 0.5 / x + t


@njit(cache=True, error_model="numpy")
def exp_taylor(x, level):
    """``exp`` as the library computes it with ``taylor_expand_level = level``, in float32 steps."""
    if level <= 0 or x != x or abs(x) == np.inf:
        return np.float32(math.exp(np.float64(x)))
    ip = np.float32(math.trunc(x))
    fp = np.float32(x - ip)
    big = np.float32(math.exp(np.float64(ip)))
    term = np.float32(1.0)
    s = np.float32(1.0)
    for k in range(1, level + 1):
        term = np.float32(term * fp / np.float32(k))
        s = np.float32(s + term)
    return np.float32(big * s)


@njit(cache=True, error_model="numpy")
def scalar(op, x, level):
    """``f(x)`` for routine ``op`` on a float32 ``x``, as float32."""
    v = np.float64(x)
    if op == ACOS:
        r = math.acos(v) if abs(v) <= 1.0 else np.nan
    elif op == ACOSH:
        r = math.acosh(v) if v >= 1.0 else np.nan
    elif op == ASIN:
        r = math.asin(v) if abs(v) <= 1.0 else np.nan
    elif op == ASINH:
        r = math.asinh(v)
    elif op == ATAN:
        r = math.atan(v)
    elif op == ATANH:
        r = math.atanh(v) if abs(v) < 1.0 else (math.copysign(np.inf, v) if abs(v) == 1.0 else np.nan)
    elif op == CEIL:
        r = math.ceil(v) if abs(v) < np.inf else v
    elif op == COS:
        r = math.cos(v) if abs(v) < np.inf else np.nan
    elif op == COSH:
        r = math.cosh(v) if abs(v) < 710.0 else np.inf
    elif op == DIGAMMA:
        r = digamma64(v)
    elif op == ERF:
        r = math.erf(v)
    elif op == ERFC:
        r = math.erfc(v)
    elif op == EXP:
        return exp_taylor(x, level)
    elif op == FLOOR:
        r = math.floor(v) if abs(v) < np.inf else v
    elif op == FRAC:
        r = v - math.trunc(v) if abs(v) < np.inf else np.nan
    elif op == LGAMMA:
        r = math.lgamma(v) if not (v <= 0.0 and v == math.floor(v)) else np.inf
    elif op == LOG:
        r = math.log(v) if v > 0.0 else (-np.inf if v == 0.0 else np.nan)
    elif op == ROUND:
        r = np.rint(v)
    elif op == SIGN:
        r = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
    elif op == SIN:
        r = math.sin(v) if abs(v) < np.inf else np.nan
    elif op == SINH:
        r = math.sinh(v) if abs(v) < 710.0 else math.copysign(np.inf, v)
    elif op == TAN:
        r = math.tan(v) if abs(v) < np.inf else np.nan
    elif op == TANH:
        r = math.tanh(v)
    else:
        r = math.trunc(v) if abs(v) < np.inf else v
    return np.float32(r)


@njit(cache=True, inline="always")
def load16(a, i):
    return f16_to_f32(a[i])


@njit(cache=True, inline="always")
def load32(a, i):
    return a[i]


@njit(cache=True, inline="always")
def store16(d, i, y):
    d[i] = f32_to_f16(y)


@njit(cache=True, inline="always")
def store32(d, i, y):
    d[i] = y


def make_unary(half):
    """The instruction for every routine on float16 (``half``) or float32 data; ``op`` picks the routine."""
    esize = 2 if half else 4
    storage = np.uint16 if half else np.float32

    load, store = (load16, store16) if half else (load32, store32)

    @instruction(error_model="numpy")
    def run(st, lm, op, dst, dst_len, src, src_len, tmp, tmp_len, has_tmp, count, reuse, level, need, loc):
        vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
        check_scratch(st, tmp, tmp_len, has_tmp, need, loc)
        nb = count * esize
        check_apart(tmp, tmp_len, has_tmp, dst, nb, DST, loc)
        check_apart(tmp, tmp_len, has_tmp, src, nb, SRC, loc)
        d = lm[dst:dst + nb].view(storage)
        a = lm[src:src + nb].view(storage)
        if has_tmp and need > 0:
            wide = lm[tmp:tmp + min(tmp_len, 4 * count) // 4 * 4].view(np.float32)
            for i in range(wide.size):
                wide[i] = load(a, i)
        for i in range(count):
            store(d, i, scalar(op, load(a, i), level))
        if reuse and not half and dst != src:
            a[:] = d
        vm.count_form_done(st)

    return run


# one instruction per data type: a routine is an argument, so a kernel using many compiles two instructions
unary_f16 = make_unary(True)
unary_f32 = make_unary(False)
