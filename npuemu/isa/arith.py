"""Scalar arithmetic of kernel code: the same results in compiled and debug mode.

``a // b``, ``a % b`` and ``a / b`` in a kernel lower to these calls unless the
divisor is a non-zero constant.  A zero divisor is a ``DivisionByZeroError``
naming the source line, in compiled and debug mode alike (plain Python and
Numba would raise ZeroDivisionError without one, and NumPy float32 scalars
would silently give inf).  Likewise a runtime ``range`` step of zero.

Kernel integers are int64.  Compiled code wraps on overflow (two's
complement); CPython's integers do not, so ``+``, ``-``, ``*`` and unary ``-``
on run-time integers lower to :func:`add`, :func:`sub`, :func:`mul` and
:func:`neg`, which are the machine operation in compiled code and the same
wrapped result in CPython.  A shift (``<<``, ``>>``, arithmetic) by a count
outside 0..63 has no defined result in C and faults here
(``ParamRangeError``) in both modes.  Fault codes 1100-1109.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from .. import errors
from .fault import Fault, register

F_DIV_ZERO = 1100
F_RANGE_STEP = 1101
F_SHIFT = 1102

OP_FLOORDIV = 0
OP_MOD = 1
OP_TRUEDIV = 2

_WHAT = {OP_FLOORDIV: "floor division (//)", OP_MOD: "modulo (%)", OP_TRUEDIV: "division (/)"}

register({
    F_DIV_ZERO: (errors.DivisionByZeroError,
                 lambda a, b, c, env: f"{_WHAT.get(a, 'division')} by zero"),
    F_RANGE_STEP: (errors.ParamRangeError, lambda a, b, c, env: "range() step must not be zero"),
    F_SHIFT: (errors.ParamRangeError,
              lambda a, b, c, env: f"shift {'<<' if c == 0 else '>>'} by {a}: an int64 shift count must be "
                                   f"in 0..63"),
})

_MASK = (1 << 64) - 1


def _wrap(x: int) -> int:
    """``x`` as int64 two's complement."""
    x = int(x) & _MASK
    return x - (1 << 64) if x >> 63 else x


def add(a, b):
    """``a + b`` on int64, wrapping."""
    return _wrap(int(a) + int(b))


def sub(a, b):
    """``a - b`` on int64, wrapping."""
    return _wrap(int(a) - int(b))


def mul(a, b):
    """``a * b`` on int64, wrapping."""
    return _wrap(int(a) * int(b))


def neg(a):
    """``-a`` on int64, wrapping."""
    return _wrap(-int(a))


# compiled code: the machine operations (LLVM inlines these calls)
@overload(add)
def _add(a, b):
    return lambda a, b: a + b


@overload(sub)
def _sub(a, b):
    return lambda a, b: a - b


@overload(mul)
def _mul(a, b):
    return lambda a, b: a * b


@overload(neg)
def _neg(a):
    return lambda a: -a


@njit(cache=True)
def shl(a, b, loc):
    """``a << b`` on int64 (wrapping); a count outside 0..63 faults."""
    if b < 0 or b > 63:
        raise Fault(F_SHIFT, loc, b, 0, 0)
    return np.int64(np.uint64(a) << np.uint64(b))


@njit(cache=True)
def shr(a, b, loc):
    """``a >> b`` on int64 (arithmetic); a count outside 0..63 faults."""
    if b < 0 or b > 63:
        raise Fault(F_SHIFT, loc, b, 0, 1)
    return np.int64(a) >> np.int64(b)


@njit(cache=True)
def range_step(step, loc):
    """The step of a runtime ``range``, checked."""
    if step == 0:
        raise Fault(F_RANGE_STEP, loc, 0, 0, 0)
    return step


@njit(cache=True)
def floordiv_int(a, b, loc):
    if b == 0:
        raise Fault(F_DIV_ZERO, loc, OP_FLOORDIV, 0, 0)
    return a // b


@njit(cache=True)
def mod_int(a, b, loc):
    if b == 0:
        raise Fault(F_DIV_ZERO, loc, OP_MOD, 0, 0)
    return a % b


@njit(cache=True)
def div_f32(a, b, loc):
    """``a / b`` on float32 (int operands are converted first)."""
    x, y = np.float32(a), np.float32(b)
    if y == 0:
        raise Fault(F_DIV_ZERO, loc, OP_TRUEDIV, 1, 0)
    return x / y


@njit(cache=True)
def floordiv_f32(a, b, loc):
    x, y = np.float32(a), np.float32(b)
    if y == 0:
        raise Fault(F_DIV_ZERO, loc, OP_FLOORDIV, 1, 0)
    return np.float32(x // y)


@njit(cache=True)
def mod_f32(a, b, loc):
    x, y = np.float32(a), np.float32(b)
    if y == 0:
        raise Fault(F_DIV_ZERO, loc, OP_MOD, 1, 0)
    return np.float32(x % y)
