"""BLAS at one thread while a launch that calls ``mmad`` runs.

``mmad`` hands each cube multiply to NumPy's BLAS, and the cube's float
result is defined as one single-threaded BLAS product per K block
(docs/cube.md, precision model).  So every launch of a kernel that calls
``mmad`` holds BLAS at one thread for its duration (``threadpoolctl``, which
knows OpenBLAS, MKL and BLIS), whether its cores run in parallel, one at a
time (debug mode, the DCache checks) or cooperatively (cores that wait for
each other).  It is also what is fastest: OpenBLAS (like MKL) starts as many
threads as the machine has CPUs for every call, and its threads spin while
they wait for work; with one host thread per emulated core already using
every CPU, each multiply then fights the other cores' threads and its own
spinning helpers (on a 2-CPU machine a 1024^3 float32 matmul kernel ran 10x
slower with the default BLAS threads than with one), and the products of
one mmad are too small to gain from threads when cores run one at a time.

Only launches from the main thread change the setting: OpenBLAS ignores a
thread-count change made from another thread once the main thread has set
one, so a launch from another thread could neither set nor restore it
reliably.  Such launches run with whatever BLAS is set to (set
``OPENBLAS_NUM_THREADS=1`` for them, for speed).  Their results are the
same where measured: a K block is at most 256 rows, which OpenBLAS's
kernels do not split along K, and its threads divide a product by rows and
columns of C, so each element of C is summed the same way at any thread
count (tests/test_cube_bits.py launches from another thread at two BLAS
threads).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

_LOCK = threading.Lock()
_CONTROLLER: Any = None
_ACTIVE = 0            # launches currently inside single_threaded_blas (launches may overlap)
_LIMITER: Any = None


def _controller() -> Any:
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController
        _CONTROLLER = ThreadpoolController()      # finds the BLAS libraries loaded in this process, once
    return _CONTROLLER


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Hold every loaded BLAS library at one thread until the outermost such block ends (main thread only)."""
    global _ACTIVE, _LIMITER
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _LOCK:
        if _ACTIVE == 0:
            _LIMITER = _controller().limit(limits=1, user_api="blas")
        _ACTIVE += 1
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE -= 1
            if _ACTIVE == 0:
                _LIMITER.restore_original_limits()
                _LIMITER = None
