"""BLAS is held at one thread while cores that call mmad run in parallel (runtime/blas_threads.py)."""
from __future__ import annotations

import threading

import numpy as np
from threadpoolctl import ThreadpoolController

from npuemu.runtime import blas_threads


def blas_threads_now() -> list[int]:
    return [lib["num_threads"] for lib in ThreadpoolController().info() if lib["user_api"] == "blas"]


def test_limit_holds_until_the_outermost_block_ends():
    np.ones((4, 4)) @ np.ones((4, 4))                  # NumPy's BLAS is loaded
    before = blas_threads_now()
    assert before, "NumPy's BLAS library was not found"
    with blas_threads.single_threaded_blas():
        assert blas_threads_now() == [1] * len(before)
        with blas_threads.single_threaded_blas():       # an overlapping launch
            assert blas_threads_now() == [1] * len(before)
        assert blas_threads_now() == [1] * len(before)   # the outer launch still runs
    assert blas_threads_now() == before


def test_a_launch_from_another_thread_leaves_blas_alone():
    before = blas_threads_now()
    seen: list[list[int]] = []

    def launch() -> None:
        with blas_threads.single_threaded_blas():
            seen.append(blas_threads_now())

    t = threading.Thread(target=launch)
    t.start()
    t.join(timeout=60)
    assert seen == [before] and blas_threads_now() == before
