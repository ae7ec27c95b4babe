"""reduce_sum and reduce_max (count form) per element, as ratios to NumPy in one process.

One call over 1 Mi float32 or float16 elements (8192 or 16384 repeats of a
256-byte vector) in a UB as large as needed, against ``np.sum`` / ``np.max``
of the same array.  ``track_ratio`` is the instruction's time over NumPy's;
``track_ns_per_element`` the instruction's time itself.  The row softmax
these reductions serve is ``bench_kernels.Softmax``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from npuemu.isa import vec_reduce as vr

from .timing import best_of, interleaved_ratio

N = 1 << 20
REPEAT = 7
OPS = {"sum": (vr.OP_SUM, np.sum), "max": (vr.OP_MAX, np.max)}


class Reduce:
    """``reduce_<op>(dst, src, tmp, N)`` against ``np.<op>`` of the same N elements."""

    params = [["sum", "max"], ["float32", "float16"]]
    param_names = ["op", "dtype"]
    timeout = 300

    def setup(self, op: str, dtype: str) -> None:
        x = np.random.default_rng(0).standard_normal(N).astype(dtype)
        half = int(dtype == "float16")
        esize = x.itemsize
        lanes = 256 // esize
        code, np_fn = OPS[op]
        tmp = 1024
        tmp_len = vr.tmp_elements(code, False, N // lanes, lanes, 32 // esize)
        src = tmp + (tmp_len * esize + 31) // 32 * 32
        st = np.zeros(1024, np.int64)
        lm = np.zeros(src + x.nbytes, np.uint8)
        lm[src:] = x.view(np.uint8)
        self.emulate: Callable[[], Any] = lambda: vr.reduce_count(lm, st, code, half, 0, 0, 2, src, N, tmp, tmp_len,
                                                                  N, 0)
        self.numpy: Callable[[], Any] = lambda: np_fn(x)
        self.emulate()                     # compile outside the timing
        self.numpy()

    def track_ratio(self, op: str, dtype: str) -> float:
        return interleaved_ratio(self.emulate, self.numpy, REPEAT)

    track_ratio.unit = "emulator/numpy"  # type: ignore[attr-defined]

    def track_ns_per_element(self, op: str, dtype: str) -> float:
        return best_of(self.emulate, REPEAT) / N * 1e9

    track_ns_per_element.unit = "ns/element"  # type: ignore[attr-defined]
