"""Batched reduction kernels for npuemu.isa.vec_reduce: the same additions and comparisons, in loops LLVM vectorises.

**Trees level by level.**  The pairwise tree of one repeat adds lanes ``2i``
and ``2i + 1``, then neighbouring results, and so on.  For ``nb`` repeats
stored one after another (``nb * width`` leaves), adding adjacent pairs over
the whole batch computes one level of every repeat's tree at once, because
``width`` is a power of two and a pair never straddles two repeats.  After
``log2(width)`` such passes the ``nb`` tree sums lie in order at the front.
Every addition is the one of the element-by-element tree, with the same left
and right operand, so the results are the same bits; each pass is a loop
without a carried dependency that LLVM turns into SIMD adds.

**float16 steps.**  A float16 partial sum is the float32 sum ``s`` of two
float16 values, rounded to float16, with finite overflow saturating at
+-65504.  Both operands are float16 values, so ``s`` is exact in float32 and
finite exactly when both operands are; rounding is monotone and 65504 is a
float16 value, so saturating after the rounding equals clamping a finite
``s`` to +-65504 before it: ``round(clamp(s))``, with infinities and NaN
passing unclamped.  That is a compare and select plus the F16C conversions
(``fptrunc``/``fpext``), all of which vectorise.

**First extreme.**  The element-by-element scan keeps ``best`` and replaces
it only on a strict improvement, starting from element 0: unless element 0
is NaN (then nothing replaces it), the result is the first element equal
(``==``) to the largest (smallest) non-NaN value ``M``, and its value is
that element (a -0 or +0 as stored).  :func:`first_extreme` finds ``M`` as
an integer max/min reduction over order keys of the bit patterns (NaN
mapped below or above every key), which LLVM vectorises without reordering
any float operation, then scans for the first element ``== M`` 64 elements
at a time.

**NaN results of sums.**  An SSE/AVX adder returns the first NaN operand
(quieted), and the compiler may swap the operands of an addition, so
:func:`fadd` fixes which NaN comes out: the left operand's, else the
right's, else the adder's own (inf - inf).  That is what the
element-by-element tree gave; its in-order accumulation of repeat sums gave
the repeat sum's NaN first, which :func:`sum_count` keeps.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..numerics.half import f16_to_f32, f32_to_f16
from .vmask import lane_on

HALF_MAX = np.float32(65504.0)
INF = np.float32(np.inf)


@njit(cache=True, inline="always")
def _quiet(x):
    """``x`` with the quiet bit set (a NaN as an adder passes it on)."""
    return np.uint32(np.float32(x).view(np.uint32) | np.uint32(0x00400000)).view(np.float32)


@njit(cache=True, inline="always")
def fadd(a, b):
    """``a + b`` with the NaN of an SSE/AVX adder fixed, whichever operand order the compiler picks.

    The result is the first NaN operand, quieted; from two non-NaN operands (inf - inf) the adder's own NaN.
    """
    s = a + b
    return s if not np.isnan(s) else (_quiet(a) if np.isnan(a) else (_quiet(b) if np.isnan(b) else s))


@njit(cache=True, inline="always")
def round_half(s):
    """A float32 sum of two float16 values rounded to float16 (as float32), finite overflow at +-65504."""
    big = abs(s) > HALF_MAX and abs(s) < INF
    c = (HALF_MAX if s > 0 else -HALF_MAX) if big else s
    return f16_to_f32(f32_to_f16(c))


@njit(cache=True)
def _level(x, y, half):
    """``y[i] = x[2i] + x[2i + 1]`` (float32 values; float16 steps when ``half``), ``len(x) == 2 * len(y)``."""
    if half:
        for i in range(len(y)):
            y[i] = round_half(fadd(x[2 * i], x[2 * i + 1]))
    else:
        for i in range(len(y)):
            y[i] = fadd(x[2 * i], x[2 * i + 1])


@njit(cache=True)
def _level_bits(h, y):
    """The first float16 level straight from float16 bit patterns ``h`` (``len(h) == 2 * len(y)``)."""
    for i in range(len(y)):
        y[i] = round_half(fadd(f16_to_f32(h[2 * i]), f16_to_f32(h[2 * i + 1])))


@njit(cache=True)
def tree_sums(h, f, g, off, n, width, a, b, half, from_lm):
    """The sums of the ``n // width`` trees of ``width`` leaves (``width >= 2`` a power of two).

    Leaves: ``n`` consecutive elements from element ``off`` of the UB (``from_lm``: float16 bit patterns
    in ``h`` or float32 in ``f``), else float32 values ``g[off:off + n]``.  ``a`` and ``b`` hold at least
    ``n // 2`` and ``n // 4`` elements.  Returns the array whose first ``n // width`` elements are the sums.
    """
    m = n // 2
    if from_lm and half:
        _level_bits(h[off:off + n], a[:m])
    elif from_lm:
        _level(f[off:off + n], a[:m], False)
    else:
        _level(g[off:off + n], a[:m], half)
    x = a
    y = b
    while width > 2:
        width //= 2
        _level(x[:m], y[:m // 2], half)
        m //= 2
        x, y = y, x
    return x


@njit(cache=True, inline="always")
def half_add(a, b, half):
    """One adder step (``vec_reduce.add``): float32 sum, or float16 sum rounded and saturated."""
    if half:
        return round_half(fadd(a, b))
    return fadd(a, b)


BATCH = 64               # repeats per batch of sum_count


@njit(cache=True)
def sum_count(h, f, first, count, lanes, half):
    """reduce_sum's count form over elements ``first .. first + count - 1`` (``count >= 1``).

    One tree per repeat of ``lanes`` elements (the last zero-padded), the sums added in order; a NaN
    from that addition is the repeat sum's when both are NaN (the element-by-element code's order).
    """
    full = count // lanes
    a = np.empty(BATCH * lanes // 2, np.float32)
    b = np.empty(BATCH * lanes // 4, np.float32)
    acc = np.float32(0.0)
    r = 0
    while r < full:
        nb = min(BATCH, full - r)
        sums = tree_sums(h, f, a, first + r * lanes, nb * lanes, lanes, a, b, half, True)
        for j in range(nb):
            acc = sums[j] if r + j == 0 else half_add(sums[j], acc, half)
        r += nb
    rest = count - full * lanes
    if rest > 0:
        g = np.zeros(lanes, np.float32)
        for e in range(rest):
            g[e] = f16_to_f32(h[first + full * lanes + e]) if half else f[first + full * lanes + e]
        part = tree_sums(h, f, g, 0, lanes, lanes, a, b, half, False)[0]
        acc = part if full == 0 else half_add(part, acc, half)
    return acc


# --------------------------------------------------------------------------- first extreme

@njit(cache=True)
def _key_extreme(k, is_max, half):
    """The largest (``is_max``) or smallest order key of the bit patterns ``k`` (int16 or int32), NaN excluded.

    The key of a float's bits ``u`` is ``u ^ ((u >> 31) & 0x7FFFFFFF)`` (15 and 0x7FFF for float16):
    integers ordered as the floats, -0 just below +0.
    """
    sign = 15 if half else 31
    mag = 0x7FFF if half else 0x7FFFFFFF
    inf = 0x7C00 if half else 0x7F800000
    big = mag
    m = -big - 1 if is_max else big
    if is_max:
        for i in range(len(k)):
            u = np.int64(k[i])
            key = u ^ ((u >> sign) & mag)
            m = max(m, -big - 1 if (u & mag) > inf else key)
    else:
        for i in range(len(k)):
            u = np.int64(k[i])
            key = u ^ ((u >> sign) & mag)
            m = min(m, big if (u & mag) > inf else key)
    return m


@njit(cache=True)
def _first_equal(x, value):
    """The first ``i`` with ``x[i] == value`` (float32 values), or -1; chunks of 64 tested at once first."""
    n = len(x)
    for c0 in range(0, n, 64):
        xs = x[c0:min(c0 + 64, n)]
        hit = 0
        for i in range(len(xs)):
            hit += xs[i] == value
        if hit:
            for i in range(len(xs)):
                if xs[i] == value:
                    return c0 + i
    return -1


@njit(cache=True)
def _first_equal_bits(h, value):
    """:func:`_first_equal` on float16 bit patterns."""
    n = len(h)
    for c0 in range(0, n, 64):
        xs = h[c0:min(c0 + 64, n)]
        hit = 0
        for i in range(len(xs)):
            hit += f16_to_f32(xs[i]) == value
        if hit:
            for i in range(len(xs)):
                if f16_to_f32(xs[i]) == value:
                    return c0 + i
    return -1


@njit(cache=True)
def first_extreme(h, f, first, count, is_max, half):
    """``(value, index)`` of the first maximum (``is_max``) or minimum of ``count >= 1`` elements from ``first``.

    The element-by-element scan's result: see the module description.
    """
    if half:
        x16 = h[first:first + count]
        v0 = f16_to_f32(x16[0])
        if np.isnan(v0):
            return v0, 0
        m = _key_extreme(x16.view(np.int16), is_max, True)
        u = np.int64(m ^ ((m >> 15) & 0x7FFF))
        where = _first_equal_bits(x16, f16_to_f32(np.uint16(u & 0xFFFF)))
        return f16_to_f32(x16[where]), where
    x32 = f[first:first + count]
    v0 = x32[0]
    if np.isnan(v0):
        return v0, 0
    m = _key_extreme(x32.view(np.int32), is_max, False)
    u = np.int64(m ^ ((m >> 31) & 0x7FFFFFFF))
    where = _first_equal(x32, np.uint32(u & 0xFFFFFFFF).view(np.float32))
    return x32[where], where


# --------------------------------------------------------------------------- level-0 forms

@njit(cache=True)
def level0_sums(h, f, src_el, counter, lo, hi, total, repeats, lanes, blk, rep, epb, width, half):
    """Tree sums over groups of ``width`` lanes of every repeat of a level-0 reduction, in order.

    The active lanes' elements (counter mode: the first ``total``; else the lane bits ``lo``/``hi``)
    at block stride ``blk`` and repeat stride ``rep`` (32-byte units) from element ``src_el``, inactive
    lanes as 0; ``repeats * lanes // width`` sums.
    """
    n = repeats * lanes
    g = np.empty(n, np.float32)
    on = np.empty(lanes, np.bool_)
    for e in range(lanes):
        on[e] = lane_on(lo, hi, e)
    for r in range(repeats):
        for k in range(lanes // epb):
            base = src_el + (r * rep + k * blk) * epb
            gs = g[r * lanes + k * epb:r * lanes + k * epb + epb]
            for j in range(epb):
                e = k * epb + j
                active = r * lanes + e < total if counter else on[e]
                gs[j] = (f16_to_f32(h[base + j]) if half else f[base + j]) if active else np.float32(0.0)
    a = np.empty(n // 2, np.float32)
    b = np.empty(max(n // 4, 1), np.float32)
    return tree_sums(h, f, g, 0, n, width, a, b, half, False)[:n // width]
