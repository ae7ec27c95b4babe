"""Vector-scalar instructions: ``dst = src (op) scalar`` element-wise on UB tensors.

``adds``, ``muls``, ``maxs``, ``mins``, ``leaky_relu``, ``shift_left``,
``shift_right`` and ``axpy`` (``dst = src * scalar + dst``), each in the count
form and the level-0 (mask/repeat) form with UnaryRepeatParams.  The forms and
their specialisation follow :mod:`npuemu.isa.vec_binary`; the level-0 form
runs its lane through :mod:`npuemu.isa.level0`.

The scalar arrives as a float64 (float data) or int64 (integer data) and is
first converted to the element type, as the hardware takes it: integers wrap
to the element width, floats round to nearest even.  (The frontend passes
float constants already rounded to the element type, so a literal is rounded
once.)  For ``axpy`` the scalar has the source's type.

Numerics follow :mod:`npuemu.isa.vec_binary`: float16 lanes are computed in
float32 and rounded once, integers wrap.  ``leaky_relu`` is ``x`` for
``x >= 0`` and ``x * scalar`` otherwise (a NaN stays NaN).  ``shift_left`` is
a logical shift; ``shift_right`` is arithmetic for signed and logical for
unsigned types; the shift count must lie in ``[0, bits]`` of the element type
(16 or 32; a shift by the full width gives 0, or -1 for negative signed
values shifted right).  ``axpy`` multiplies and then adds, each step rounded
to the destination type (whether the hardware fuses them is not documented;
for a float16 source into a float32 destination the product is exact).  That
mixed form takes 64 lanes per repeat, the lane count of the wider type.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .linkage import instruction
from .. import errors
from ..numerics.half import f16_to_f32, f32_to_f16
from . import level0
from . import vmask as vm
from .common import as_type_of
from .fault import Fault, register

ADDS, MULS, MAXS, MINS, LEAKY_RELU, SHIFT_LEFT, SHIFT_RIGHT, AXPY, AXPY_F16 = range(9)

F_SHIFT = 310

register({
    F_SHIFT: (errors.ParamRangeError,
              lambda a, b, c, env: f"shift count {a} is out of range [0, {b}] for {b}-bit elements"),
})


# the scalar functions, one lane each: ``x`` from src (float16 widened to float32), ``s`` the
# scalar in the element type, ``old`` the destination's value (read by axpy only)


@njit(cache=True)
def _adds(x, s, old):
    return x + s


@njit(cache=True)
def _muls(x, s, old):
    return as_type_of(x * s, x)


@njit(cache=True)
def _maxs(x, s, old):
    return x if x > s or x != x else s


@njit(cache=True)
def _mins(x, s, old):
    return x if x < s or x != x else s


@njit(cache=True)
def _leaky_relu(x, s, old):
    return x if x >= 0 or x != x else as_type_of(x * s, x)


@njit(cache=True)
def _shift_left(x, s, old):
    return np.int64(x) << np.int64(s)


@njit(cache=True)
def _shift_right(x, s, old):
    # the int64 copy of x carries its sign (signed types) or zeros (unsigned) in the upper bits
    return np.int64(x) >> np.int64(s)


@njit(cache=True)
def _axpy(x, s, old):
    return as_type_of(x * s, x) + old


@njit(cache=True)
def _axpy_f16(x, s, old):
    # a float16 destination: the product is rounded to float16 before the add, as a multiply
    # instruction followed by an add would
    return f16_to_f32(f32_to_f16(x * s)) + old


SCALAR = {ADDS: _adds, MULS: _muls, MAXS: _maxs, MINS: _mins, LEAKY_RELU: _leaky_relu,
          SHIFT_LEFT: _shift_left, SHIFT_RIGHT: _shift_right, AXPY: _axpy, AXPY_F16: _axpy_f16}


def apply(op, x, s, old):
    """``SCALAR[op](x, s, old)`` in compiled code, ``op`` being a compile-time constant."""
    raise NotImplementedError("apply is only callable from compiled code")


@overload(apply, prefer_literal=True, inline="always")
def _apply(op, x, s, old):
    if isinstance(op, types.IntegerLiteral):
        fn = SCALAR[op.literal_value]
        return lambda op, x, s, old: fn(x, s, old)
    return None


def make_count_op(op, dst_storage, dst_half, src_storage, src_half):
    """``op(dst, src, scalar, count)`` for one storage dtype pair (they differ only for axpy)."""
    dsize = np.dtype(dst_storage).itemsize
    ssize = np.dtype(src_storage).itemsize
    shift = op in (SHIFT_LEFT, SHIFT_RIGHT)
    bits = 8 * ssize

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, src, src_len, scalar, count, loc):
        if src_half:
            s = f16_to_f32(f32_to_f16(np.float32(scalar)))
        else:
            s = src_storage(scalar)
        if shift and (s < 0 or s > bits):
            raise Fault(F_SHIFT, loc, s, bits, 0)
        vm.unary_count_checks(st, dst, dst_len, src, src_len, count, loc)
        d = lm[dst:dst + count * dsize].view(dst_storage)
        a = lm[src:src + count * ssize].view(src_storage)
        for i in range(count):
            x = f16_to_f32(a[i]) if src_half else a[i]
            old = f16_to_f32(d[i]) if dst_half else d[i]
            v = apply(op, x, s, old)
            d[i] = f32_to_f16(v) if dst_half else v
        vm.count_form_done(st)

    return run


def _lane(op, dst_half, src_half):
    """``d[t] = op(a[t], s, d[t])`` (:mod:`npuemu.isa.level0`); float16 lanes widened and rounded back once."""
    fn = SCALAR[op]

    def run(d, a, b, t, s):
        x = f16_to_f32(a[t]) if src_half else a[t]
        old = f16_to_f32(d[t]) if dst_half else d[t]
        v = fn(x, s, old)
        d[t] = f32_to_f16(v) if dst_half else v

    return njit(error_model="numpy")(run)


def make_level0_op(op, dst_storage, dst_half, src_storage, src_half):
    """``op(dst, src, scalar, mask, repeat_times, UnaryRepeatParams, is_set_mask)`` for one dtype pair."""
    dsize = np.dtype(dst_storage).itemsize
    ssize = np.dtype(src_storage).itemsize
    epb = (32 // dsize, 32 // ssize, 32 // ssize)       # elements per DataBlock of dst, src (and src again)
    lanes = 256 // max(dsize, ssize)
    shift = op in (SHIFT_LEFT, SHIFT_RIGHT)
    bits = 8 * ssize
    name = level0.lane(f"{__name__}.{op}.{np.dtype(dst_storage).name}.{int(dst_half)}."
                       f"{np.dtype(src_storage).name}.{int(src_half)}", _lane(op, dst_half, src_half))

    @instruction(error_model="numpy")
    def run(st, lm, dst, dst_len, src, src_len, scalar, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
            dblk, sblk, drep, srep, loc):
        if src_half:
            s = f16_to_f32(f32_to_f16(np.float32(scalar)))
        else:
            s = src_storage(scalar)
        if shift and (s < 0 or s > bits):
            raise Fault(F_SHIFT, loc, s, bits, 0)
        plan = vm.unary_plan(st, dst, dst_len, src, src_len, is_set_mask, mask_is_bits, mask_lo, mask_hi, repeat,
                             dblk, sblk, drep, srep, dsize, ssize, loc)
        d = lm[dst:dst + dst_len * dsize].view(dst_storage)
        a = lm[src:src + src_len * ssize].view(src_storage)
        level0.walk(name, plan, d, a, None, s, (dblk, sblk, sblk), (drep, srep, srep), epb, lanes)

    return run


_NAMES = {ADDS: "adds", MULS: "muls", MAXS: "maxs", MINS: "mins", LEAKY_RELU: "leaky_relu",
          SHIFT_LEFT: "shift_left", SHIFT_RIGHT: "shift_right", AXPY: "axpy"}
_STORAGE = {"f16": (np.uint16, True), "f32": (np.float32, False), "i16": (np.int16, False),
            "i32": (np.int32, False), "u16": (np.uint16, False), "u32": (np.uint32, False)}

# supported dtypes per operation on Atlas A2 (Ascend C API reference, "数据类型" of each instruction);
# axpy lists "<dst>_<src>" pairs: its destination may be wider than its source
DTYPES = {
    ADDS: ("f16", "f32", "i16", "i32"), MULS: ("f16", "f32", "i16", "i32"), MAXS: ("f16", "f32", "i16", "i32"),
    MINS: ("f16", "f32", "i16", "i32"), LEAKY_RELU: ("f16", "f32"),
    SHIFT_LEFT: ("i16", "u16", "i32", "u32"), SHIFT_RIGHT: ("i16", "u16", "i32", "u32"),
    AXPY: ("f16_f16", "f32_f32", "f32_f16"),
}

# module-level instructions <op>_<suffix> (count form) and <op>_l0_<suffix> (level 0)
for _op, _dtypes in DTYPES.items():
    for _suffix in _dtypes:
        _dsuf, _, _ssuf = _suffix.partition("_")
        _dst, _src = _STORAGE[_dsuf], _STORAGE[_ssuf or _dsuf]
        _code = AXPY_F16 if _op == AXPY and _dsuf == "f16" else _op
        globals()[f"{_NAMES[_op]}_{_suffix}"] = make_count_op(_code, *_dst, *_src)
        globals()[f"{_NAMES[_op]}_l0_{_suffix}"] = make_level0_op(_code, *_dst, *_src)
