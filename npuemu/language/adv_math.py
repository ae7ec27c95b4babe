"""The element-wise math library of the high-level API (``asc.adv``; Ascend C 高阶 API, 数学计算).

Every routine works on the first ``count`` elements (all of ``src`` when
``count`` is None) of UB tensors of one data type (:data:`DTYPES`):

* ``op(dst, src, count=None, temp_buffer=None, is_reuse_source=False)`` for
  the one-input routines (``acos`` ... ``trunc``); ``exp`` also takes
  ``taylor_expand_level`` and requires ``count``;
* ``power(dst, src0, src1, ...)``, ``xor(dst, src0, src1, ...)`` and
  ``axpy(dst, src, scalar, ...)`` (``dst = src * scalar + dst``).

``temp_buffer`` is the routine's scratch (any dtype, sized in bytes); each
routine's minimum is appended to its docstring (:data:`MIN_TMP`, CANN's
``GetXxxMaxMinTmpSize`` minimum).  Without it the routine takes its scratch
from the UB the TPipe left unallocated, which must then be that large.
``is_reuse_source`` lets a float32 routine use ``src`` as scratch: ``src``
holds unspecified values afterwards.  Numerics and accuracy: docs/adv-api.md.
These names live only in ``asc.adv``: ``asc.adv.exp`` is not ``asc.exp``.
"""
from __future__ import annotations

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32, int16, int32, uint16

__all__ = [    "acos", "acosh", "asin", "asinh", "atan", "atanh", "axpy", "ceil", "cos", "cosh", "digamma", "erf", "erfc",
    "exp", "floor", "frac", "lgamma", "log", "power", "round", "sign", "sin", "sinh", "tan", "tanh", "trunc",
    "xor"]


@builtin
def acos(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = acos(src)``: the arc cosine (``AscendC::Acos``); NaN outside [-1, 1]."""


@builtin
def acosh(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
             is_reuse_source: bool = False) -> None:
    """``dst = acosh(src)``: the inverse hyperbolic cosine (``AscendC::Acosh``); NaN below 1."""


@builtin
def asin(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = asin(src)``: the arc sine (``AscendC::Asin``); NaN outside [-1, 1]."""


@builtin
def asinh(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
             is_reuse_source: bool = False) -> None:
    """``dst = asinh(src)``: the inverse hyperbolic sine (``AscendC::Asinh``)."""


@builtin
def atan(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = atan(src)``: the arc tangent (``AscendC::Atan``)."""


@builtin
def atanh(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
             is_reuse_source: bool = False) -> None:
    """``dst = atanh(src)``: the inverse hyperbolic tangent (``AscendC::Atanh``); +-inf at +-1, NaN beyond."""


@builtin
def ceil(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = ceil(src)``: the smallest integer not below ``src`` (``AscendC::Ceil``; exact)."""


@builtin
def cos(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
           is_reuse_source: bool = False) -> None:
    """``dst = cos(src)``: the cosine (``AscendC::Cos``)."""


@builtin
def cosh(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = cosh(src)``: the hyperbolic cosine (``AscendC::Cosh``)."""


@builtin
def digamma(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
               is_reuse_source: bool = False) -> None:
    """``dst = digamma(src)``: the digamma, the derivative of lgamma (``AscendC::Digamma``); NaN at 0 and the negative integers."""


@builtin
def erf(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
           is_reuse_source: bool = False) -> None:
    """``dst = erf(src)``: the error function (``AscendC::Erf``)."""


@builtin
def erfc(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = erfc(src)``: the complementary error function ``1 - erf`` (``AscendC::Erfc``)."""


@builtin
def floor(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
             is_reuse_source: bool = False) -> None:
    """``dst = floor(src)``: the largest integer not above ``src`` (``AscendC::Floor``; exact)."""


@builtin
def frac(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = frac(src)``: the fractional part ``src - trunc(src)`` (``AscendC::Frac``; exact, sign of ``src``)."""


@builtin
def lgamma(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
              is_reuse_source: bool = False) -> None:
    """``dst = lgamma(src)``: the log of the absolute value of the gamma function (``AscendC::Lgamma``); +inf at the poles."""


@builtin
def log(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
           is_reuse_source: bool = False) -> None:
    """``dst = log(src)``: the natural logarithm (``AscendC::Log``); -inf at 0, NaN below."""


@builtin
def round(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
             is_reuse_source: bool = False) -> None:
    """``dst = round(src)``: the nearest integer, ties to even (``AscendC::Round``; exact)."""


@builtin
def sign(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = sign(src)``: the 1, -1 or 0 by the sign of ``src`` (``AscendC::Sign``; exact; NaN and -0 give 0)."""


@builtin
def sin(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
           is_reuse_source: bool = False) -> None:
    """``dst = sin(src)``: the sine (``AscendC::Sin``)."""


@builtin
def sinh(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = sinh(src)``: the hyperbolic sine (``AscendC::Sinh``)."""


@builtin
def tan(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
           is_reuse_source: bool = False) -> None:
    """``dst = tan(src)``: the tangent (``AscendC::Tan``)."""


@builtin
def tanh(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
            is_reuse_source: bool = False) -> None:
    """``dst = tanh(src)``: the hyperbolic tangent (``AscendC::Tanh``)."""


@builtin
def trunc(dst: LocalTensor, src: LocalTensor, count: int | None = None, temp_buffer: LocalTensor | None = None,
             is_reuse_source: bool = False) -> None:
    """``dst = trunc(src)``: the integer part, rounded toward zero (``AscendC::Trunc``; exact)."""


@builtin
def exp(dst: LocalTensor, src: LocalTensor, count: int, taylor_expand_level: int,
        temp_buffer: LocalTensor | None = None, is_reuse_source: bool = False) -> None:
    """``dst = e ** src`` (``AscendC::Exp``); ``taylor_expand_level > 0`` uses the library's Taylor expansion of the
    fractional part (that many terms past 1), 0 the plain exponential."""


@builtin
def power(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int | None = None,
          temp_buffer: LocalTensor | None = None, is_reuse_source: bool = False) -> None:
    """``dst = src0 ** src1`` element by element (``AscendC::Power``, the tensor-tensor form)."""


@builtin
def xor(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int | None = None,
        temp_buffer: LocalTensor | None = None, is_reuse_source: bool = False) -> None:
    """``dst = src0 ^ src1``, bitwise (``AscendC::Xor``)."""


@builtin
def axpy(dst: LocalTensor, src: LocalTensor, scalar: float | int, count: int | None = None,
         temp_buffer: LocalTensor | None = None, is_reuse_source: bool = False) -> None:
    """``dst = src * scalar + dst`` (``AscendC::Axpy``); a float16 ``src`` may feed a float32 ``dst``."""


_FLOAT = (float16, float32)

# the data types each routine takes on Atlas A2/A3; the rules check them, the docstrings list them
DTYPES = {
    acos: _FLOAT,
    acosh: _FLOAT,
    asin: _FLOAT,
    asinh: _FLOAT,
    atan: _FLOAT,
    atanh: _FLOAT,
    axpy: (float16, float32, (float16, float32)),
    ceil: _FLOAT,
    cos: _FLOAT,
    cosh: _FLOAT,
    digamma: _FLOAT,
    erf: _FLOAT,
    erfc: _FLOAT,
    exp: _FLOAT,
    floor: _FLOAT,
    frac: _FLOAT,
    lgamma: _FLOAT,
    log: _FLOAT,
    power: (float16, float32, int32),
    round: _FLOAT,
    sign: _FLOAT,
    sin: _FLOAT,
    sinh: _FLOAT,
    tan: _FLOAT,
    tanh: _FLOAT,
    trunc: _FLOAT,
    xor: (int16, uint16),
}
document_dtypes(DTYPES)

# the minimum scratch, in 256-byte units (one repeat): (float16, float32, float32 with is_reuse_source)
MIN_TMP = {
    acos: (6, 2, 2),
    acosh: (2, 1, 1),
    asin: (6, 2, 2),
    asinh: (3, 3, 3),
    atan: (12, 5, 5),
    atanh: (4, 1, 1),
    ceil: (2, 1, 1),
    cos: (8, 3, 2),
    cosh: (6, 2, 2),
    digamma: (16, 7, 6),
    erf: (8, 3, 3),
    erfc: (16, 7, 7),
    floor: (2, 0, 0),
    frac: (4, 0, 0),
    lgamma: (26, 8, 7),
    log: (0, 0, 0),
    round: (1, 0, 0),
    sign: (3, 3, 3),
    sin: (8, 3, 2),
    sinh: (4, 1, 1),
    tan: (10, 4, 4),
    tanh: (4, 1, 1),
    trunc: (2, 1, 1),
    exp: (4, 3, 2),
    axpy: (4, 0, 0),
}
# power's minimum in bytes per data type (CANN: half 14 * 256 / 2 + 256, float 4 * 256 + 256, int32 6 * 256)
POWER_MIN_TMP = {float16: 2048, float32: 1280, int32: 1536}
XOR_MIN_TMP = 256


def min_tmp_bytes(stub: object, dtype: object, reuse: bool) -> int:
    """The smallest scratch, in bytes, routine ``stub`` accepts for ``dtype`` (and ``is_reuse_source``)."""
    if stub is power:
        return POWER_MIN_TMP[dtype]
    if stub is xor:
        return XOR_MIN_TMP
    h, f, fr = MIN_TMP[stub]
    return 256 * (h if dtype is float16 else fr if reuse else f)


def _rule_text(stub: object) -> str:
    if stub is power:
        return "at least 2048 bytes for float16, 1280 for float32, 1536 for int32; 32-byte aligned."
    if stub is xor:
        return "at least 256 bytes; 32-byte aligned."
    h, f, fr = MIN_TMP[stub]
    if h == f == fr == 0:
        return "none needed (0 bytes)."
    reuse = f" ({fr * 256} with ``is_reuse_source``)" if fr != f else ""
    return f"at least {h * 256} bytes for float16, {f * 256} for float32{reuse}; 32-byte aligned."


for _stub in DTYPES:
    document_temp_buffer(_stub, "temp_buffer", _rule_text(_stub))
