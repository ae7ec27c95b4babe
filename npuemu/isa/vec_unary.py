"""Unary vector instructions: ``dst = f(src)`` element-wise on UB tensors.

``abs``, ``exp``, ``ln``, ``sqrt``, ``rsqrt``, ``reciprocal``, ``relu`` and
``bitwise_not``, each in the count form and the level-0 (mask/repeat) form
with UnaryRepeatParams.  The forms and their specialisation follow
:mod:`npuemu.isa.vec_binary`: one factory per form, the operation entering as
an op code that :func:`apply` maps to one of the scalar functions in
:data:`SCALAR`; the level-0 form runs its lane through
:mod:`npuemu.isa.level0`.

Numerics.  ``abs``, ``relu``, ``sqrt`` and ``reciprocal`` are computed in
float32 (float16 data widened exactly) and rounded once to the destination
type; for these that is the correctly rounded IEEE result (float32 carries
more than twice float16's precision, so rounding twice cannot differ).
``exp``, ``ln`` and ``rsqrt`` are transcendental: the vector unit does not
round them correctly either, and its exact results are not documented.  They
are defined as computed in float64 with the C library and rounded once to
the destination type, which is the correctly rounded result in all but rare
ties: expect hardware results to differ from npuemu's by an ulp or so.
``rsqrt`` is computed that way (``1 / sqrt`` in float64 vectorises); ``exp``
and ``ln`` are vectorised by :mod:`npuemu.isa.vmath`, which gives the same
bits (checked on every float16 and float32 input) without a libm call per
element, except for the elements it flags (near a rounding boundary; NaN;
``ln`` of zero, negatives and infinity), which take the definition itself.
The level-0 form takes that path when no lane is masked off and the strides
are the defaults; otherwise its lanes call the C library one by one.
Special values follow IEEE: ``ln(0) = -inf``, ``ln(x < 0) = sqrt(x < 0) =
NaN``, ``reciprocal(0) = inf``.  ``relu`` propagates NaN (undocumented on
hardware).  ``bitwise_not`` works on the bits of int16/uint16.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.extending import overload

from .linkage import instruction
from ..numerics.half import f16_to_f32, f32_to_f16
from . import level0
from . import vmask as vm
from . import vmath
from .vmath import f64_to_f16
from .common import as_type_of

ABS, EXP, LN, SQRT, RSQRT, RECIPROCAL, RELU, NOT = range(8)
WIDE = (EXP, LN, RSQRT)          # computed in float64
VMATH = {EXP: vmath.EXP, LN: vmath.LN}  # vectorised by npuemu.isa.vmath (same results as the scalar functions)

# the scalar functions, one lane each: float lanes arrive as float32, WIDE ones return float64


@njit(cache=True)
def _abs(x):
    return abs(x)


@njit(cache=True)
def _exp(x):
    return math.exp(np.float64(x))


@njit(cache=True, error_model="numpy")
def _ln(x):
    return math.log(np.float64(x))


@njit(cache=True, error_model="numpy")
def _sqrt(x):
    return np.sqrt(x)


@njit(cache=True, error_model="numpy")
def _rsqrt(x):
    return 1.0 / math.sqrt(np.float64(x))


@njit(cache=True, error_model="numpy")
def _reciprocal(x):
    return as_type_of(1.0, x) / x


@njit(cache=True)
def _relu(x):
    return x if x > 0 or x != x else as_type_of(0, x)


@njit(cache=True)
def _not(x):
    return ~x


SCALAR = {ABS: _abs, EXP: _exp, LN: _ln, SQRT: _sqrt, RSQRT: _rsqrt, RECIPROCAL: _reciprocal, RELU: _relu,
          NOT: _not}


def apply(op, x):
    """``SCALAR[op](x)`` in compiled code, ``op`` being a compile-time constant."""
    raise NotImplementedError("apply is only callable from compiled code")


@overload(apply, prefer_literal=True, inline="always")
def _apply(op, x):
    if isinstance(op, types.IntegerLiteral):
        fn = SCALAR[op.literal_value]
        return lambda op, x: fn(x)
    return None


def make_count_op(op, storage, half):
    """``op(dst, src, count)`` for one storage dtype (float16: ``uint16`` and ``half``)."""
    esize = np.dtype(storage).itemsize
    wide = op in WIDE
    fast = VMATH.get(op, -1)
    h = int(half)

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, src, src_len, count, loc):
        vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
        nb = count * esize
        d = lm[dst:dst + nb].view(storage)
        a = lm[src:src + nb].view(storage)
        if fast >= 0:
            vmath.apply(fast, h, d, a, dst - src)
        elif half and wide:
            for i in range(count):
                d[i] = f64_to_f16(apply(op, f16_to_f32(a[i])))
        elif half:
            for i in range(count):
                d[i] = f32_to_f16(apply(op, f16_to_f32(a[i])))
        else:
            for i in range(count):
                d[i] = apply(op, a[i])
        vm.count_form_done(st)

    return run


def _lane(op, half):
    """``d[t] = op(a[t])`` (:mod:`npuemu.isa.level0`); float16 lanes widened and rounded back once."""
    fn = SCALAR[op]
    if half and op in WIDE:
        def run(d, a, b, t, s):
            d[t] = f64_to_f16(fn(f16_to_f32(a[t])))
    elif half:
        def run(d, a, b, t, s):
            d[t] = f32_to_f16(fn(f16_to_f32(a[t])))
    else:
        def run(d, a, b, t, s):
            d[t] = fn(a[t])
    return njit(error_model="numpy")(run)


def make_level0_op(op, storage, half):
    """``op(dst, src, mask, repeat_times, UnaryRepeatParams, is_set_mask)`` for one storage dtype."""
    esize = np.dtype(storage).itemsize
    epb = (32 // esize,) * 3
    lanes = 256 // esize
    name = level0.lane(f"{__name__}.{op}.{np.dtype(storage).name}.{int(half)}", _lane(op, half))
    fast = VMATH.get(op, -1)
    h = int(half)

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
            dblk, sblk, drep, srep, loc):
        plan = vm.unary_plan(st, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
                             dblk, sblk, drep, srep, esize, esize, loc)
        d = lm[dst:dst + dst_len * esize].view(storage)
        a = lm[src:src + src_len * esize].view(storage)
        counter, lo, hi, repeats, total, top, every = plan
        if fast >= 0 and every and dblk == 1 and sblk == 1 and drep * epb[0] == lanes and srep * epb[0] == lanes:
            # level0.walk's dense case, its runs in order, each one vectorised
            runs, length, stride = vm.dense_runs(counter, repeats, total, top, lanes)
            for r in range(runs):
                e0 = r * stride
                vmath.apply(fast, h, d[e0:e0 + length], a[e0:e0 + length], dst - src)
        else:
            level0.walk(name, plan, d, a, None, 0, (dblk, sblk, sblk), (drep, srep, srep), epb, lanes)

    return run


_NAMES = {ABS: "abs", EXP: "exp", LN: "ln", SQRT: "sqrt", RSQRT: "rsqrt", RECIPROCAL: "reciprocal",
          RELU: "relu", NOT: "bitwise_not"}
_STORAGE = {"f16": (np.uint16, True), "f32": (np.float32, False), "i16": (np.int16, False),
            "i32": (np.int32, False), "u16": (np.uint16, False)}

# supported dtypes per operation on Atlas A2 (Ascend C API reference, "数据类型" of each instruction)
DTYPES = {
    ABS: ("f16", "f32"), EXP: ("f16", "f32"), LN: ("f16", "f32"), SQRT: ("f16", "f32"),
    RSQRT: ("f16", "f32"), RECIPROCAL: ("f16", "f32"), RELU: ("f16", "f32", "i32"), NOT: ("i16", "u16"),
}

# module-level instructions <op>_<suffix> (count form) and <op>_l0_<suffix> (level 0)
for _op, _dtypes in DTYPES.items():
    for _suffix in _dtypes:
        _storage, _half = _STORAGE[_suffix]
        globals()[f"{_NAMES[_op]}_{_suffix}"] = make_count_op(_op, _storage, _half)
        globals()[f"{_NAMES[_op]}_l0_{_suffix}"] = make_level0_op(_op, _storage, _half)
