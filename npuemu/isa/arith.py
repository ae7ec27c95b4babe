"""Scalar arithmetic of kernel code that can fault: division, modulo, loop steps.

``a // b``, ``a % b`` and ``a / b`` in a kernel lower to these calls unless the
divisor is a non-zero constant.  A zero divisor is a ``DivisionByZeroError``
naming the source line, in compiled and debug mode alike (plain Python and
Numba would raise ZeroDivisionError without one, and NumPy float32 scalars
would silently give inf).  Likewise a runtime ``range`` step of zero.
Fault codes 1100-1109 (scalar arithmetic).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from .fault import Fault, register

F_DIV_ZERO = 1100
F_RANGE_STEP = 1101

OP_FLOORDIV = 0
OP_MOD = 1
OP_TRUEDIV = 2

_WHAT = {OP_FLOORDIV: "floor division (//)", OP_MOD: "modulo (%)", OP_TRUEDIV: "division (/)"}

register({
    F_DIV_ZERO: (errors.DivisionByZeroError,
                 lambda a, b, c, env: f"{_WHAT.get(a, 'division')} by zero"),
    F_RANGE_STEP: (errors.ParamRangeError, lambda a, b, c, env: "range() step must not be zero"),
})


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
