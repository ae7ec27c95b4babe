"""Filling outputs before a launch, and finding the elements a kernel never wrote.

``np.empty`` memory often holds the right answer already (the previous
example's result, freed and handed out again), so a kernel that skips part
of its output can pass one run and fail the next.  Filling every output
before the launch makes that deterministic, and the fill itself tells which
elements were never written.

The fill is 0xFF in every byte (NaN for floats), except in elements whose
expected value is NaN or all 0xFF bytes, which get 0x00: a fill never equals
the value the kernel should write, so an element still holding it is never
taken for a right answer.  An element is reported as never written when it
holds its fill and differs, bit for bit, from the expected value.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from ..arrays import as_array
from ..errors import LaunchError

__all__ = ["Filled", "OutputFiller", "fill_output", "never_written", "describe_unwritten", "raw_array"]


@dataclass
class Filled:
    """An output array and the values it was filled with (same dtype and shape)."""

    array: np.ndarray
    fill: np.ndarray


def raw_array(x: Any) -> np.ndarray | None:
    """The NumPy array whose memory a kernel writes for argument ``x`` (None if ``x`` is no array)."""
    try:
        found = as_array(x)
    except LaunchError:
        return None
    return None if found is None else found[0]


def _rows(a: np.ndarray) -> np.ndarray:
    """``a``'s elements as rows of bytes, ``(a.size, itemsize)`` uint8 (copied when not contiguous)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).reshape(a.size, a.dtype.itemsize)


def _fill_for(like: np.ndarray, expected: np.ndarray | None) -> np.ndarray:
    """The fill of an output like ``like``: 0xFF bytes, 0x00 where ``expected`` is NaN or all 0xFF bytes."""
    rows = np.full((like.size, like.dtype.itemsize), 0xFF, np.uint8)
    if expected is not None:
        clash = _rows(expected).min(axis=1) == 0xFF
        if expected.dtype.kind == "f" or (expected.dtype.kind == "V" and "float" in expected.dtype.name):
            clash |= np.isnan(expected.astype(np.float32)).reshape(-1)       # any NaN matches a NaN fill
        rows[clash] = 0
    return rows.reshape(-1).view(like.dtype).reshape(like.shape)


def _matching(out: np.ndarray, expected: Any) -> np.ndarray | None:
    """``expected`` as an array laid out like ``out`` (None when its shape or element size differ)."""
    if expected is None:
        return None
    exp = np.asarray(expected)
    if exp.shape != out.shape or exp.dtype.itemsize != out.dtype.itemsize:
        return None
    return exp if exp.dtype == out.dtype else exp.view(out.dtype)


def fill_output(out: Any, expected: Any = None, *, what: str = "output") -> Filled | None:
    """Fill output ``out`` in place (through its strides, so views work too); None if it is no array.

    A read-only output cannot be filled, and no kernel could write it either:
    that is a :class:`~npuemu.errors.LaunchError`.
    """
    arr = raw_array(out)
    if arr is None:
        return None
    if not arr.flags.writeable:
        raise LaunchError(f"{what} is a read-only array: a kernel writes its outputs, pass a writable one")
    fill = _fill_for(arr, _matching(arr, expected))
    np.copyto(arr, fill, casting="no")
    return Filled(arr, fill)


def never_written(got: Any, filled: Filled, expected: Any) -> np.ndarray | None:
    """Flat mask of ``got``'s elements that still hold their fill and differ from ``expected``.

    None when ``got`` is not the filled memory seen whole (a slice or a copy
    of it): then nothing can be said.
    """
    arr = raw_array(got)
    if arr is None or not _same_memory(arr, filled.array):
        return None
    got_rows = _rows(filled.array)
    held = (got_rows == _rows(filled.fill)).all(axis=1)
    exp = _matching(filled.array, expected)
    if exp is not None:
        held &= (got_rows != _rows(exp)).any(axis=1)
    return held


def _same_memory(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are the same elements in the same order (``a`` may be a reshape of ``b``)."""
    if a is b:
        return True
    same_start = a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    return (same_start and a.nbytes == b.nbytes and a.dtype.itemsize == b.dtype.itemsize
            and a.flags.c_contiguous and b.flags.c_contiguous)


def describe_unwritten(name: str, got: np.ndarray, fill: np.ndarray, mask: np.ndarray, max_listed: int = 8) -> str:
    """``name (dtype, shape): N of M elements were never written ...``: the first ones, with the fill they hold."""
    flat = np.flatnonzero(mask)
    first = int(flat[0])
    shape = got.shape
    value = fill.reshape(-1)[first:first + 1]
    bits = value.view(np.uint8)
    lines = [f"{name} ({got.dtype}, shape {shape}): {flat.size} of {got.size} elements were never written: "
             f"first at index {_index(first, shape)}, still holding the fill 0x{bits.tobytes()[::-1].hex()} "
             f"put there before the launch"]
    if flat.size > 1:
        rest = ", ".join(str(_index(int(i), shape)) for i in flat[1:max_listed + 1])
        lines.append(f"  also at {rest}{', ...' if flat.size > max_listed + 1 else ''}")
    return "\n".join(lines)


def _index(flat: int, shape: tuple[int, ...]) -> Any:
    if len(shape) <= 1:
        return flat
    return tuple(int(i) for i in np.unravel_index(flat, shape))


class OutputFiller:
    """A ``run_op`` launch hook: fills each output once, before the launch that first writes it.

    The expected results are matched to outputs by shape and dtype, in order
    (the host function's result is not known until it returns).  Outputs that
    share memory with an input of the launch are left alone: the kernel reads
    them.
    """

    def __init__(self, expected: Sequence[Any], inputs: Sequence[Any] = ()):
        self.expected = [np.asarray(e) for e in expected]
        self.inputs = [a for a in (raw_array(x) for x in inputs) if a is not None]
        self.filled: list[Filled] = []
        self._unmatched = list(range(len(self.expected)))

    def __call__(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        reads = self.inputs + [a for a in (raw_array(x) for x in inputs) if a is not None]
        for k, out in enumerate(outputs):
            arr = raw_array(out)
            if arr is None or not arr.flags.writeable or self._seen(arr, reads):
                continue                          # a read-only output fails the launch itself
            self.filled.append(fill_output(arr, self._expected_for(arr), what=f"output {k}"))

    def _seen(self, arr: np.ndarray, reads: list[np.ndarray]) -> bool:
        earlier = [f.array for f in self.filled]
        return any(np.may_share_memory(arr, other) for other in reads + earlier)

    def _expected_for(self, arr: np.ndarray) -> np.ndarray | None:
        for i in self._unmatched:
            if _matching(arr, self.expected[i]) is not None:
                self._unmatched.remove(i)
                return self.expected[i]
        return None

    def find(self, got: Any) -> Filled | None:
        """The fill record of the memory ``got`` is, if it was filled."""
        arr = raw_array(got)
        if arr is None:
            return None
        return next((f for f in self.filled if _same_memory(arr, f.array)), None)
