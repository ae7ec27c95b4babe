"""The host cost of the op layer, as ratios against tiny NumPy work measured in the same process.

``Selection`` times choosing an op's binary on a warm index (the key formed,
hashed and looked up; ``npuemu.ops.select.select``, and ``select_args`` on
tensors already described) against ``np.add`` of two 16-element float32
arrays into a preallocated output and against a dict lookup.  ``Prepare``
times phase one of the two-phase API (``npuemu.ops.executor.prepare``:
checks, shape inference, the L0 graph, tiling through the tiling cache, the
workspace plan) per library op against the same ``np.add``.  Nothing is
built or launched: selection and phase one never compile a kernel.

Values are per call: ``track_*_us`` in microseconds (for reading only; the
ratios are what to compare between machines).
"""
from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from npuemu.ops import library
from npuemu.ops.executor import prepare
from npuemu.ops.select import select, select_args
from npuemu.ops.tensor import describe_tensors

PLATFORM = "Ascend910B1"
REPEAT = 5


def per_call(fn: Callable[[], Any], calls: int, repeat: int = REPEAT) -> float:
    """Seconds per call of ``fn``: best of ``repeat`` runs of ``calls`` calls."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, time.perf_counter() - t)
    return best / calls


def _numpy_add16() -> Callable[[], Any]:
    a, b, c = np.ones(16, np.float32), np.ones(16, np.float32), np.empty(16, np.float32)
    return lambda: np.add(a, b, out=c)


class Selection:
    """One selection of Add's binary (float32, alpha) on a warm index."""

    calls = 5000

    def setup(self) -> None:
        op = library.ADD
        x = np.ones((4, 16), np.float32)
        y = np.empty_like(x)
        attrs = op.attr_values({"alpha": 2.0})
        ins = describe_tensors(op, op.inputs, [x, x], "input")
        outs = describe_tensors(op, op.outputs, [y], "output")
        select(op, [x, x], [y], {"alpha": 2.0}, platform=PLATFORM)        # the index is read once, here
        self.select = lambda: select(op, [x, x], [y], {"alpha": 2.0}, platform=PLATFORM)
        self.select_args = lambda: select_args(op, ins, outs, attrs, platform=PLATFORM)
        self.numpy = _numpy_add16()
        table = {i: i for i in range(64)}
        self.lookup = lambda: table.get(17)

    def time_select(self) -> None:
        self.select()

    def track_select_us(self) -> float:
        return per_call(self.select, self.calls) * 1e6

    track_select_us.unit = "us"  # type: ignore[attr-defined]

    def track_select_args_us(self) -> float:
        return per_call(self.select_args, self.calls) * 1e6

    track_select_args_us.unit = "us"  # type: ignore[attr-defined]

    def track_ratio_numpy(self) -> float:
        return per_call(self.select, self.calls) / per_call(self.numpy, self.calls)

    track_ratio_numpy.unit = "select/np.add(16)"  # type: ignore[attr-defined]

    def track_ratio_args_numpy(self) -> float:
        return per_call(self.select_args, self.calls) / per_call(self.numpy, self.calls)

    track_ratio_args_numpy.unit = "select_args/np.add(16)"  # type: ignore[attr-defined]

    def track_ratio_dict(self) -> float:
        return per_call(self.select, self.calls) / per_call(self.lookup, self.calls * 10)

    track_ratio_dict.unit = "select/dict.get"  # type: ignore[attr-defined]


def _inputs(name: str) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)

    def f(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)
    return {
        "Add": (f(64, 64), f(64, 64)), "Relu": (f(64, 64),), "Softmax": (f(64, 64),),
        "LayerNorm": (f(64, 64), f(64), f(64)), "RmsNorm": (f(64, 64), f(64)), "MatMul": (f(64, 32), f(32, 48)),
    }[name]


class Prepare:
    """Phase one (``prepare``) of one library op on small float32 tensors, warm (tiling cache hit)."""

    params = ["Add", "Relu", "Softmax", "LayerNorm", "RmsNorm", "MatMul"]
    param_names = ["op"]
    calls = 300

    def setup(self, name: str) -> None:
        op = getattr(library, {"LayerNorm": "LAYERNORM", "RmsNorm": "RMSNORM"}.get(name, name.upper()))
        args = _inputs(name)
        prepare(op, *args, platform=PLATFORM)
        self.prepare = lambda: prepare(op, *args, platform=PLATFORM)
        self.numpy = _numpy_add16()

    def time_prepare(self, name: str) -> None:
        self.prepare()

    def track_prepare_us(self, name: str) -> float:
        return per_call(self.prepare, self.calls) * 1e6

    track_prepare_us.unit = "us"  # type: ignore[attr-defined]

    def track_ratio_numpy(self, name: str) -> float:
        return per_call(self.prepare, self.calls) / per_call(self.numpy, self.calls * 10)

    track_ratio_numpy.unit = "prepare/np.add(16)"  # type: ignore[attr-defined]
