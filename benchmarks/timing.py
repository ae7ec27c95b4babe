"""Timing helpers shared by the benchmarks: best-of runs and ratios of interleaved rounds.

A ratio of two timings taken one after the other moves with the machine's
load between them (these machines are shared).  :func:`interleaved_ratio`
alternates the two functions round by round and compares their best
rounds, so a load that comes and goes hits both alike.
"""
from __future__ import annotations

import time
from typing import Any, Callable

REPEAT = 5


def once(fn: Callable[[], Any]) -> float:
    """Seconds of one call of ``fn``."""
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def best_of(fn: Callable[[], Any], repeat: int = REPEAT) -> float:
    """The shortest of ``repeat`` calls of ``fn``, in seconds."""
    return min(once(fn) for _ in range(repeat))


def interleaved_best(*fns: Callable[[], Any], rounds: int = REPEAT) -> list[float]:
    """The best time of each of ``fns`` over ``rounds`` rounds, each round timing every function once, in order."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        best = [min(b, once(fn)) for b, fn in zip(best, fns)]
    return best


def interleaved_ratio(a: Callable[[], Any], b: Callable[[], Any], rounds: int = REPEAT) -> float:
    """best(a) / best(b) over ``rounds`` rounds, each timing ``a`` once and then ``b`` once."""
    best_a, best_b = interleaved_best(a, b, rounds=rounds)
    return best_a / best_b
