"""Float64 references and error measures for the tests of ``asc.adv``'s math library."""
from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np

import npuemu.asc as asc

EULER = 0.57721566490153286060651209008240243


def digamma_reference(x: float) -> float:
    """psi(x) by recurrence up to 40 and 12 terms of the asymptotic series, in 40-digit decimals."""
    getcontext().prec = 40
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0:
        return digamma_reference(1 - x) - math.pi / math.tan(math.pi * x)
    d, acc = Decimal(x), Decimal(0)
    while d < 40:
        acc -= 1 / d
        d += 1
    bern = [Decimal(1) / 6, Decimal(-1) / 30, Decimal(1) / 42, Decimal(-1) / 30, Decimal(5) / 66,
            Decimal(-691) / 2730, Decimal(7) / 6, Decimal(-3617) / 510, Decimal(43867) / 798,
            Decimal(-174611) / 330, Decimal(854513) / 138, Decimal(-236364091) / 2730]
    s = d.ln() - 1 / (2 * d)
    for k, b in enumerate(bern, start=1):
        s -= b / (2 * k * d ** (2 * k))
    return float(acc + s)


def _vec(fn):
    return np.vectorize(fn, otypes=[np.float64])


def _lgamma(x: float) -> float:
    return math.inf if x <= 0 and x == math.floor(x) else math.lgamma(x)


REFERENCE = {
    asc.adv.acos: np.arccos, asc.adv.acosh: np.arccosh, asc.adv.asin: np.arcsin, asc.adv.asinh: np.arcsinh,
    asc.adv.atan: np.arctan, asc.adv.atanh: np.arctanh, asc.adv.ceil: np.ceil, asc.adv.cos: np.cos,
    asc.adv.cosh: np.cosh, asc.adv.digamma: _vec(digamma_reference), asc.adv.erf: _vec(math.erf),
    asc.adv.erfc: _vec(math.erfc), asc.adv.floor: np.floor, asc.adv.frac: lambda x: x - np.trunc(x),
    asc.adv.lgamma: _vec(_lgamma), asc.adv.log: np.log, asc.adv.round: np.rint,
    asc.adv.sign: lambda x: np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0)), asc.adv.sin: np.sin,
    asc.adv.sinh: np.sinh, asc.adv.tan: np.tan, asc.adv.tanh: np.tanh, asc.adv.trunc: np.trunc,
}
EXACT = (asc.adv.ceil, asc.adv.floor, asc.adv.frac, asc.adv.round, asc.adv.sign, asc.adv.trunc)

# the documented input range of each routine's accuracy figure (docs/adv-api.md)
RANGE = {
    asc.adv.acos: (-1, 1), asc.adv.acosh: (1, 100), asc.adv.asin: (-1, 1), asc.adv.asinh: (-100, 100),
    asc.adv.atan: (-100, 100), asc.adv.atanh: (-0.999, 0.999), asc.adv.ceil: (-1000, 1000), asc.adv.cos: (-10, 10),
    asc.adv.cosh: (-10, 10), asc.adv.digamma: (0.05, 20), asc.adv.erf: (-4, 4), asc.adv.erfc: (-4, 9),
    asc.adv.floor: (-1000, 1000), asc.adv.frac: (-1000, 1000), asc.adv.lgamma: (0.05, 100),
    asc.adv.log: (1e-3, 1000), asc.adv.round: (-1000, 1000), asc.adv.sign: (-2, 2), asc.adv.sin: (-10, 10),
    asc.adv.sinh: (-10, 10), asc.adv.tan: (-1.5, 1.5), asc.adv.tanh: (-10, 10), asc.adv.trunc: (-1000, 1000),
}


def ulp_error(got: np.ndarray, exact: np.ndarray) -> float:
    """Largest ``|got - exact|`` in units of the last place of ``got``'s type at ``exact`` (finite entries)."""
    dt = got.dtype
    ok = np.isfinite(exact) & np.isfinite(got.astype(np.float64))
    e = exact[ok]
    g = got[ok].astype(np.float64)
    tiny = float(np.finfo(dt).smallest_normal)
    mant = np.finfo(dt).nmant
    ulp = np.exp2(np.floor(np.log2(np.maximum(np.abs(e), tiny))) - mant)
    return float(np.max(np.abs(g - e) / ulp, initial=0.0))
