"""BLAS is held at one thread while a launch that calls mmad runs (runtime/blas_threads.py)."""
from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

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


@pytest.mark.parametrize("how", ["debug", "cooperative"])
def test_every_launch_that_multiplies_holds_blas_at_one_thread(how, monkeypatch):
    """Not only launches whose cores run in parallel: debug mode runs cores one at a time, and linear's
    cores wait for each other (cooperative); their products are one-thread BLAS products too."""
    from npuemu.kernels.linear import linear
    from npuemu.kernels.matmul import matmul
    from npuemu.runtime import launch as launch_mod
    np.ones((4, 4)) @ np.ones((4, 4))
    seen: list[list[int]] = []
    real = launch_mod.single_threaded_blas

    @contextlib.contextmanager
    def watched() -> Iterator[None]:
        with real():
            seen.append(blas_threads_now())
            yield

    monkeypatch.setattr(launch_mod, "single_threaded_blas", watched)
    x = np.ones((64, 128), np.float32)
    w = np.ones((128, 32), np.float32)
    with threadpool_limits(2, user_api="blas"):
        if how == "debug":
            out = matmul(x, w, debug=True)
        else:
            out = linear(x, w, np.zeros(32, np.float32), "leaky_relu")
    np.testing.assert_array_equal(out, np.full((64, 32), 128, np.float32))
    assert seen == [[1] * len(blas_threads_now())]
