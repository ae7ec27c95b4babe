"""Binary vector instructions: ``dst = src0 (op) src1`` element-wise on UB tensors.

Two forms serve every operation:

* the count form (``op(dst, src0, src1, count)``), a contiguous loop over the
  first ``count`` elements that LLVM vectorises;
* the level-0 form, driven by the mask register: the traversal shared by
  every element-wise family (:mod:`npuemu.isa.level0`) runs this module's
  lane over the repeats and DataBlocks (see :mod:`npuemu.isa.vmask`).

Each form is specialised per operation and storage dtype by a factory; the
operation's lane function is one of the small scalar functions in
:data:`SCALAR`.  The factory closes over the op *code*, and :func:`apply`
(an overload resolved at compile time) calls ``SCALAR[op]``: Numba caches a
closure over plain constants across processes, but not one over another
compiled function (the level-0 lane goes through ``level0.lane`` for the
same reason).

Numerics:

* float16 is stored as its bit pattern; lanes are widened to float32,
  combined, and rounded back to float16 once.  For ``+ - * /`` the float32
  result of two float16 operands rounds to the same float16 as the exact
  result would (float32 carries more than twice float16's precision), so this
  is bit-exact IEEE arithmetic; ``max``/``min`` are exact anyway.
* float32 is computed in float32 (IEEE, round to nearest even).  Overflow gives
  infinities: A2 kernels run with the CTRL register in inf/nan mode.
* integers wrap (two's complement), as fixed-width vector lanes do; the Ascend
  C documentation describes no saturation for these instructions.  For
  ``add_relu``/``sub_relu`` on int16 the sum wraps to 16 bits before the ReLU.
* ``max``/``min``/ReLU propagate a NaN operand (hardware NaN handling here is
  not documented).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .linkage import instruction
from ..numerics.half import f16_to_f32, f32_to_f16
from . import level0
from . import vmask as vm
from .common import as_type_of

ADD, SUB, MUL, DIV, MAX, MIN, ADD_RELU, SUB_RELU, AND, OR = range(10)

# the scalar functions, one lane each (float16 lanes arrive widened to float32)


@njit(cache=True)
def _add(a, b):
    return a + b


@njit(cache=True)
def _sub(a, b):
    return a - b


@njit(cache=True)
def _mul(a, b):
    return as_type_of(a * b, a)


@njit(cache=True, error_model="numpy")
def _div(a, b):
    return a / b


@njit(cache=True)
def _max(a, b):
    return a if a > b or a != a else b


@njit(cache=True)
def _min(a, b):
    return a if a < b or a != a else b


@njit(cache=True)
def _relu(x):
    return x if x > 0 or x != x else as_type_of(0, x)


@njit(cache=True)
def _add_relu(a, b):
    return _relu(as_type_of(a + b, a))


@njit(cache=True)
def _sub_relu(a, b):
    return _relu(as_type_of(a - b, a))


@njit(cache=True)
def _and(a, b):
    return a & b


@njit(cache=True)
def _or(a, b):
    return a | b


SCALAR = {ADD: _add, SUB: _sub, MUL: _mul, DIV: _div, MAX: _max, MIN: _min, ADD_RELU: _add_relu,
          SUB_RELU: _sub_relu, AND: _and, OR: _or}


def apply(op, a, b):
    """``SCALAR[op](a, b)`` in compiled code, ``op`` being a compile-time constant."""
    raise NotImplementedError("apply is only callable from compiled code")


@overload(apply, prefer_literal=True, inline="always")
def _apply(op, a, b):
    if isinstance(op, types.IntegerLiteral):
        fn = SCALAR[op.literal_value]
        return lambda op, a, b: fn(a, b)
    return None


def make_count_op(op, storage, half):
    """``op(dst, src0, src1, count)`` for one storage dtype (float16: ``uint16`` and ``half``)."""
    esize = np.dtype(storage).itemsize

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, count, loc):
        vm.binary_count_checks(st, dst, dst_len, s0, s0_len, s1, s1_len, count, loc)
        nb = count * esize
        d = lm[dst:dst + nb].view(storage)
        a = lm[s0:s0 + nb].view(storage)
        b = lm[s1:s1 + nb].view(storage)
        if half:
            for i in range(count):
                d[i] = f32_to_f16(apply(op, f16_to_f32(a[i]), f16_to_f32(b[i])))
        else:
            for i in range(count):
                d[i] = apply(op, a[i], b[i])
        vm.count_form_done(st)

    return run


def _lane(op, half):
    """``d[t] = op(a[t], b[t])`` (:mod:`npuemu.isa.level0`); float16 lanes widened and rounded back once."""
    fn = SCALAR[op]
    if half:
        def run(d, a, b, t, s):
            d[t] = f32_to_f16(fn(f16_to_f32(a[t]), f16_to_f32(b[t])))
    else:
        def run(d, a, b, t, s):
            d[t] = fn(a[t], b[t])
    return njit(error_model="numpy")(run)


def make_level0_op(op, storage, half):
    """``op(dst, src0, src1, mask, repeat_times, BinaryRepeatParams, is_set_mask)`` for one storage dtype.

    ``mask_is_bits`` tells a bit mask ``[lo, hi]`` from a continuous one
    (``mask_lo`` lanes); the six strides are the BinaryRepeatParams fields.
    """
    esize = np.dtype(storage).itemsize
    epb = (32 // esize,) * 3
    lanes = 256 // esize
    name = level0.lane(f"{__name__}.{op}.{np.dtype(storage).name}.{int(half)}", _lane(op, half))

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, s0, s0_len, s1, s1_len, is_set_mask, mask_is_bits, mask_lo, mask_hi,
            repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep, loc):
        plan = vm.binary_plan(st, dst, dst_len, s0, s0_len, s1, s1_len, is_set_mask, mask_is_bits, mask_lo,
                              mask_hi, repeat, dblk, s0blk, s1blk, drep, s0rep, s1rep, esize, loc)
        d = lm[dst:dst + dst_len * esize].view(storage)
        a = lm[s0:s0 + s0_len * esize].view(storage)
        b = lm[s1:s1 + s1_len * esize].view(storage)
        level0.walk(name, plan, d, a, b, 0, (dblk, s0blk, s1blk), (drep, s0rep, s1rep), epb, lanes)

    return run


_NAMES = {ADD: "add", SUB: "sub", MUL: "mul", DIV: "div", MAX: "max", MIN: "min", ADD_RELU: "add_relu",
          SUB_RELU: "sub_relu", AND: "bitwise_and", OR: "bitwise_or"}
_STORAGE = {"f16": (np.uint16, True), "f32": (np.float32, False), "i16": (np.int16, False),
            "i32": (np.int32, False), "u16": (np.uint16, False)}

# supported dtypes per operation on Atlas A2 (Ascend C API reference, "数据类型" of each instruction)
DTYPES = {
    ADD: ("f16", "f32", "i16", "i32"), SUB: ("f16", "f32", "i16", "i32"), MUL: ("f16", "f32", "i16", "i32"),
    DIV: ("f16", "f32"), MAX: ("f16", "f32", "i16", "i32"), MIN: ("f16", "f32", "i16", "i32"),
    ADD_RELU: ("f16", "f32", "i16"), SUB_RELU: ("f16", "f32", "i16"), AND: ("i16", "u16"), OR: ("i16", "u16"),
}

# module-level instructions <op>_<suffix> (count form) and <op>_l0_<suffix> (level 0)
for _op, _dtypes in DTYPES.items():
    for _suffix in _dtypes:
        _storage, _half = _STORAGE[_suffix]
        globals()[f"{_NAMES[_op]}_{_suffix}"] = make_count_op(_op, _storage, _half)
        globals()[f"{_NAMES[_op]}_l0_{_suffix}"] = make_level0_op(_op, _storage, _half)
