"""Comparing what a kernel computed with a NumPy reference, and saying where it differs.

:func:`assert_kernel_matches` runs a kernel (a host function such as
``npuemu.kernels.add.add``, or an ``@asc.jit`` kernel) and its reference on
the same inputs and compares the results.  The default is **bit-exact**: the
vector unit rounds every ``+ - * /``, cast and compare correctly, so a kernel
built from them matches a NumPy reference that rounds the same way exactly.
Ask for slack only where the hardware is not exact (``exp``, ``rsqrt``,
reductions in a different order), as units in the last place (``ulps=``) or
as ``rtol``/``atol``.

A failure raises :class:`KernelMismatchError` with a report like::

    scale_kernel[1] output 0 (float16, shape (3, 1000)) does not match the reference (bit-exact): 11 of 3000 ...
      first at index (1, 500): got 6.004 (0x4601), expected 6.0 (0x4600), 1 ulp apart (abs error 0.00390625)
      worst at index (2, 999): got 99.0 (0x5630), expected 11.0 (0x4980), 3248 ulp apart (abs error 88)
      also at (1, 501), (1, 502), (1, 503), (2, 993), (2, 994), (2, 995), (2, 996), (2, 997), ...

Outputs are filled before the launch (:mod:`npuemu.testing.fill`), so
elements the kernel never writes are found every time and reported as such,
by :class:`UnwrittenOutputError`.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..errors import UsageError
from .fill import Filled, OutputFiller, describe_unwritten, fill_output, never_written, raw_array

__all__ = ["Tolerance", "EXACT", "KernelMismatchError", "UnwrittenOutputError", "assert_kernel_matches",
           "assert_arrays_match", "compare_arrays", "ulp_distance", "is_float_dtype"]


@dataclass(frozen=True)
class Tolerance:
    """How close a result must be to its reference.

    ``exact``: equal bit for bit (any NaN matches any NaN; the sign of zero
    counts).  Otherwise an element passes if it is within ``ulps`` units in
    the last place of the output dtype, or within ``atol + rtol * |expected|``
    (either test suffices when both are given).  NaN must meet NaN and an
    infinity the same infinity.  Integer outputs are compared exactly unless
    ``atol`` is given.
    """

    exact: bool = False
    rtol: float = 0.0
    atol: float = 0.0
    ulps: int | None = None

    def describe(self) -> str:
        if self.exact:
            return "bit-exact"
        parts = []
        if self.ulps is not None:
            parts.append(f"{self.ulps} ulp")
        if self.rtol or self.atol or not parts:
            parts.append(f"rtol {self.rtol:g}, atol {self.atol:g}")
        return " or ".join(parts)


EXACT = Tolerance(exact=True)

ToleranceSpec = Any        # Tolerance-like object, or a mapping of dtype name -> Tolerance-like


class KernelMismatchError(AssertionError):
    """A kernel's result differs from its reference; the message says where and by how much."""


class UnwrittenOutputError(KernelMismatchError):
    """Elements of an output the kernel never wrote: they still hold the fill put there before the launch."""


# ------------------------------------------------------------------------------ element-wise maths


def is_float_dtype(dtype: np.dtype) -> bool:
    """True for NumPy floats and the ml_dtypes ones (bfloat16, float8_*), which NumPy calls void."""
    dtype = np.dtype(dtype)
    return dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name)


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _ordered(a: np.ndarray) -> np.ndarray:
    """Float bits mapped to int64 so that adjacent floats differ by one (the sign-magnitude trick)."""
    size = a.dtype.itemsize
    bits = np.ascontiguousarray(a).view(_UINT[size]).astype(np.uint64)
    sign = np.uint64(1) << np.uint64(8 * size - 1)
    magnitude = (bits & (sign - np.uint64(1))).astype(np.int64)
    return np.where((bits & sign) != 0, -magnitude, magnitude)


def ulp_distance(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype, as float64 (NaN where either is NaN).

    +0 and -0 are 0 ulp apart; the largest finite value and infinity are 1 apart.
    """
    got, expected = np.asarray(got), np.asarray(expected)
    if got.dtype != expected.dtype or not is_float_dtype(got.dtype):
        raise UsageError(f"ulp_distance needs two float arrays of one dtype, got {got.dtype} and {expected.dtype}")
    a, b = _ordered(got), _ordered(expected)
    with np.errstate(over="ignore"):
        same_side = (a >= 0) == (b >= 0)
        exact = np.abs(a - b).astype(np.float64)          # exact when both are on one side of zero
    dist = np.where(same_side, exact, np.abs(a.astype(np.float64) - b.astype(np.float64)))
    nan = np.isnan(got.astype(np.float64)) | np.isnan(expected.astype(np.float64))
    return np.where(nan, np.nan, dist)


def _bits(v: np.ndarray) -> str:
    size = v.dtype.itemsize
    if size not in _UINT:
        return ""
    return f"0x{int(np.ascontiguousarray(v).reshape(1).view(_UINT[size])[0]):0{2 * size}x}"


def _mismatch_mask(got: np.ndarray, expected: np.ndarray, tol: Any) -> np.ndarray:
    """True where an element fails ``tol`` (shapes and dtypes already agree)."""
    floating = is_float_dtype(got.dtype)
    if not floating:
        if getattr(tol, "exact", False) or not getattr(tol, "atol", 0):
            return got != expected
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        return diff > tol.atol
    g, e = got.astype(np.float64), expected.astype(np.float64)
    g_nan, e_nan = np.isnan(g), np.isnan(e)
    if getattr(tol, "exact", False):
        same_bits = _ordered(got) == _ordered(expected)
        same_bits &= np.signbit(g) == np.signbit(e)            # -0 and +0 differ when exact
        return ~((g_nan & e_nan) | (~g_nan & ~e_nan & same_bits))
    ok = g == e                            # equal values always pass (infinities included)
    ulps = getattr(tol, "ulps", None)
    if ulps is not None:
        with np.errstate(invalid="ignore"):
            ok |= ulp_distance(got, expected) <= ulps
    rtol, atol = getattr(tol, "rtol", 0.0), getattr(tol, "atol", 0.0)
    if ulps is None or rtol or atol:
        with np.errstate(invalid="ignore", over="ignore"):
            ok |= np.abs(g - e) <= atol + rtol * np.abs(e)
    inf = np.isinf(g) | np.isinf(e)
    ok &= ~inf | (g == e)                  # an infinity only matches itself
    ok &= ~(g_nan ^ e_nan)                 # NaN only matches NaN
    ok |= g_nan & e_nan
    return ~ok


def compare_arrays(got: Any, expected: Any, tolerance: Any = EXACT, *, name: str = "output",
                   max_listed: int = 8) -> str | None:
    """None if ``got`` matches ``expected`` within ``tolerance``, else a report of the mismatch."""
    got, expected = _as_numpy(got), _as_numpy(expected)
    if got.shape != expected.shape:
        return f"{name}: got shape {got.shape}, the reference has shape {expected.shape}"
    if got.dtype != expected.dtype:
        return f"{name}: got dtype {got.dtype}, the reference has dtype {expected.dtype}"
    bad = _mismatch_mask(got, expected, tolerance)
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    how = tolerance.describe() if hasattr(tolerance, "describe") else _describe_tol(tolerance)
    lines = [f"{name} ({got.dtype}, shape {got.shape}) does not match the reference ({how}): "
             f"{count} of {got.size} elements differ"]
    flat = np.flatnonzero(bad.reshape(-1))
    first = int(flat[0])
    lines.append(f"  first at index {_index(first, got.shape)}: {_pair(got, expected, first)}")
    worst = _worst(got, expected, flat)
    if worst != first:
        lines.append(f"  worst at index {_index(worst, got.shape)}: {_pair(got, expected, worst)}")
    rest = [int(i) for i in flat[1:max_listed + 1] if int(i) != worst]
    if rest:
        more = ", ..." if count > len(rest) + 1 + (worst != first) else ""
        lines.append("  also at " + ", ".join(str(_index(i, got.shape)) for i in rest) + more)
    return "\n".join(lines)


def _describe_tol(tol: Any) -> str:
    return Tolerance(bool(getattr(tol, "exact", False)), float(getattr(tol, "rtol", 0.0)),
                     float(getattr(tol, "atol", 0.0)), getattr(tol, "ulps", None)).describe()


def _index(flat: int, shape: tuple[int, ...]) -> Any:
    if len(shape) == 1:
        return flat
    return tuple(int(i) for i in np.unravel_index(flat, shape))


def _pair(got: np.ndarray, expected: np.ndarray, flat: int) -> str:
    g, e = got.reshape(-1)[flat:flat + 1], expected.reshape(-1)[flat:flat + 1]
    text = f"got {_show(g)}, expected {_show(e)}"
    if is_float_dtype(got.dtype):
        ulp = float(ulp_distance(g, e)[0])
        if ulp == 0:
            text += ": zeros of opposite sign"
        elif not np.isnan(ulp):
            text += f", {ulp:.0f} ulp apart"
        err = abs(float(g.astype(np.float64)[0]) - float(e.astype(np.float64)[0]))
        if np.isfinite(err) and err:
            text += f" (abs error {err:.6g})"
    elif got.dtype.kind in "iu":
        text += f" (difference {int(g[0]) - int(e[0])})"
    return text


def _show(v: np.ndarray) -> str:
    value = str(v[0])
    bits = _bits(v) if is_float_dtype(v.dtype) else ""
    return f"{value} ({bits})" if bits else value


def _worst(got: np.ndarray, expected: np.ndarray, flat: np.ndarray) -> int:
    g = got.reshape(-1)[flat].astype(np.float64) if got.dtype.kind != "b" else got.reshape(-1)[flat]
    e = expected.reshape(-1)[flat].astype(np.float64) if got.dtype.kind != "b" else expected.reshape(-1)[flat]
    if got.dtype.kind == "b":
        return int(flat[0])
    with np.errstate(invalid="ignore"):
        err = np.abs(g - e)
    err = np.where(np.isnan(err), np.inf, err)       # a NaN against a number is as bad as it gets
    return int(flat[int(np.argmax(err))])


def _as_numpy(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "array") and hasattr(x, "dtype") and isinstance(getattr(x, "array"), np.ndarray):
        return x.array                                  # npuemu.gm_buffer
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return x.detach().cpu().numpy()                 # torch tensors (bfloat16 is not supported by numpy())
    return np.asarray(x)


def _tolerance_for(dtype: np.dtype, *, tolerance: ToleranceSpec | None, exact: bool | None, rtol: float | None,
                   atol: float | None, ulps: int | Mapping[str, int] | None) -> Any:
    """The tolerance one output is held to: explicit arguments first, then ``tolerance``, then exact."""
    name = np.dtype(dtype).name
    if tolerance is not None:
        if isinstance(tolerance, Mapping):
            tolerance = tolerance.get(name)
        if tolerance is not None and not any(v is not None for v in (exact, rtol, atol, ulps)):
            return tolerance
    if exact:
        return EXACT
    if isinstance(ulps, Mapping):
        ulps = ulps.get(name)
    if ulps is None and rtol is None and atol is None:
        return tolerance if tolerance is not None else EXACT
    return Tolerance(rtol=rtol or 0.0, atol=atol or 0.0, ulps=ulps)


# -------------------------------------------------------------------------------------- running


def assert_arrays_match(got: Any, expected: Any, *, tolerance: ToleranceSpec | None = None,
                        exact: bool | None = None, rtol: float | None = None, atol: float | None = None,
                        ulps: int | Mapping[str, int] | None = None, label: str = "result") -> None:
    """Compare one or several arrays with their references; raise :class:`KernelMismatchError` if any differ."""
    tol_args = dict(tolerance=tolerance, exact=exact, rtol=rtol, atol=atol, ulps=ulps)
    _check_outputs(got, expected, label, tol_args, fills=())


def _check_outputs(got: Any, expected: Any, label: str, tol_args: dict[str, Any],
                   fills: Sequence[Filled | None]) -> None:
    """Raise :class:`KernelMismatchError` if an output differs from its reference.

    :class:`UnwrittenOutputError` if one kept some of its fill (``fills[k]``:
    output ``k``'s fill, if it had one), naming those elements first.
    """
    gots, exps = _as_tuple(got), _as_tuple(expected)
    if len(gots) != len(exps):
        raise KernelMismatchError(f"{label}: {len(gots)} outputs, the reference returned {len(exps)}")
    problems, unwritten = [], False
    for k, (g, e) in enumerate(zip(gots, exps)):
        filled = fills[k] if k < len(fills) else None
        mask = never_written(g, filled, e) if filled is not None else None
        g, e = _as_numpy(g), _as_numpy(e)
        what = f"{label} output {k}" if len(gots) > 1 or label != "result" else "output"
        if mask is not None and mask.any():
            unwritten = True
            problems.append(describe_unwritten(what, g, filled.fill, mask))
            g = _with_expected_at(g, e, mask)         # what else differs is reported below
        problem = compare_arrays(g, e, _tolerance_for(g.dtype, **tol_args), name=what)
        if problem:
            problems.append(problem)
    if problems:
        raise (UnwrittenOutputError if unwritten else KernelMismatchError)("\n".join(problems))


def _with_expected_at(got: np.ndarray, expected: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A copy of ``got`` holding ``expected``'s values where ``mask`` is set (when the two are alike)."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return got
    out = got.copy()
    out.reshape(-1)[mask] = expected.reshape(-1)[mask]
    return out


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _is_jit(obj: Any) -> bool:
    from ..jit import JITFunction
    return isinstance(obj, JITFunction)


def _is_launcher(obj: Any) -> bool:
    from ..jit import Launcher
    return isinstance(obj, Launcher)


def _is_array(x: Any) -> bool:
    from ..arrays import as_array
    try:
        return as_array(x) is not None
    except Exception:       # noqa: BLE001 - an array npuemu cannot pass is not a kernel array argument
        return False


def assert_kernel_matches(kernel: Any, reference: Callable[..., Any], inputs: Sequence[Any], *,
                          outputs: int | Sequence[int] | None = None, core_num: int | None = None,
                          tolerance: ToleranceSpec | None = None, exact: bool | None = None,
                          rtol: float | None = None, atol: float | None = None,
                          ulps: int | Mapping[str, int] | None = None, poison: bool = True,
                          **launch: Any) -> Any:
    """Run ``kernel`` on ``inputs`` and check its result against ``reference``; return the result.

    ``kernel`` is one of:

    - a host function that returns its output(s), e.g. ``npuemu.kernels.add.add``:
      called as ``kernel(*inputs, **launch)`` and compared with ``reference(*inputs)``;
    - a launched ``@asc.jit`` kernel (``vadd[8]``), or the kernel itself with
      ``core_num=``: it writes its outputs in place.  ``outputs`` gives their
      positions in ``inputs`` (default: the last array argument); the reference
      is called with the *other array* arguments, in order, and returns the
      expected outputs (close over scalars it needs).

    Outputs are filled before the launch (0xFF bytes, NaN for floats; see
    :mod:`npuemu.testing.fill`): a launched kernel's output arguments, and
    the outputs a host function launches through :func:`npuemu.host.run_op`.
    Elements still holding the fill afterwards raise
    :class:`UnwrittenOutputError`, which names them.  Pass ``poison=False``
    for a kernel that reads its output; outputs that share memory with an
    input are never filled.

    Tolerance, per output dtype: ``exact=True``, ``ulps=`` (an int or a
    mapping of dtype name to int), ``rtol=``/``atol=``, or ``tolerance=`` (a
    :class:`Tolerance` or any object with ``exact``/``rtol``/``atol``
    attributes, or a mapping of dtype name to one, such as a bundled
    kernel's ``tolerance``).  Without any of them the comparison is bit-exact.
    ``launch`` options (``platform=``, ``check=``, ``debug=``...) go to the launch.
    """
    tol_args = dict(tolerance=tolerance, exact=exact, rtol=rtol, atol=atol, ulps=ulps)
    if _is_jit(kernel):
        if core_num is None:
            raise UsageError(f"assert_kernel_matches: pass core_num= to launch the @asc.jit kernel "
                             f"'{kernel.__name__}', or pass {kernel.__name__}[n]")
        kernel = kernel[core_num]
    if _is_launcher(kernel):
        return _check_in_place(kernel, reference, list(inputs), outputs, poison, tol_args, launch)
    return _check_host_function(kernel, reference, inputs, poison, tol_args, launch)


def _check_host_function(fn: Callable[..., Any], reference: Callable[..., Any], inputs: Sequence[Any],
                         poison: bool, tol_args: dict[str, Any], launch: dict[str, Any]) -> Any:
    """Call ``fn(*inputs, **launch)``, filling the outputs of its ``run_op`` launches, and check what it returns."""
    from ..host.run import before_launch
    expected = reference(*inputs)
    filler = OutputFiller(_as_tuple(expected), inputs) if poison else None
    with before_launch(filler) if filler is not None else contextlib.nullcontext():
        got = fn(*inputs, **launch)
    fills = [filler.find(g) for g in _as_tuple(got)] if filler is not None else []
    _check_outputs(got, expected, getattr(fn, "__name__", type(fn).__name__), tol_args, fills)
    return got


def _check_in_place(launcher: Any, reference: Callable[..., Any], args: list[Any],
                    outputs: int | Sequence[int] | None, poison: bool, tol_args: dict[str, Any],
                    launch: dict[str, Any]) -> Any:
    """Launch with the output arguments filled, and check them against the reference."""
    arrays = [i for i, a in enumerate(args) if _is_array(a)]
    out_pos = _output_positions(args, arrays, outputs)
    ins = [i for i in arrays if i not in out_pos]
    expected = reference(*[np.array(_as_numpy(args[i]), copy=True) for i in ins])   # the kernel may write in place
    exps = _as_tuple(expected)
    fills: list[Filled | None] = []
    for k, p in enumerate(out_pos):
        reads = any(np.may_share_memory(raw_array(args[p]), raw_array(args[i])) for i in ins)
        fills.append(None if not poison or reads else
                     fill_output(args[p], exps[k] if k < len(exps) else None, what=f"output argument {p}"))
    launcher(*args, **launch)
    got = tuple(args[p] for p in out_pos)
    result = got if len(got) > 1 else got[0]
    _check_outputs(result, expected, f"{launcher.jit.__name__}[{launcher.core_num}]", tol_args, fills)
    return result


def _output_positions(args: list[Any], arrays: list[int], outputs: int | Sequence[int] | None) -> tuple[int, ...]:
    """The argument positions of a launched kernel's outputs (default: its last array argument)."""
    if outputs is None:
        if not arrays:
            raise UsageError("assert_kernel_matches: the kernel has no array argument to compare")
        return (arrays[-1],)
    positions = (outputs,) if isinstance(outputs, int) else tuple(outputs)
    return tuple(p % len(args) for p in positions)
