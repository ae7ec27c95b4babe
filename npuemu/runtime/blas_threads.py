"""One BLAS thread per core thread while emulated cores run in parallel.

``mmad`` hands each cube multiply to NumPy's BLAS.  OpenBLAS (like MKL)
starts as many threads as the machine has CPUs for every call, and its
threads spin while they wait for work; with one host thread per emulated core
already using every CPU, each multiply then fights the other cores' threads
and its own spinning helpers.  Measured on a 2-CPU machine: a 1024^3 float32
matmul kernel ran 10x slower with the default BLAS threads than with one.
So a launch whose cores run in parallel and call ``mmad`` holds BLAS at one
thread for its duration (``threadpoolctl``, which knows OpenBLAS, MKL and
BLIS); a launch that runs its cores one at a time keeps BLAS's own threads.

Only launches from the main thread change the setting: OpenBLAS ignores a
thread-count change made from another thread once the main thread has set
one, so a launch from another thread could neither set nor restore it
reliably.  Such launches run with whatever BLAS is set to (set
``OPENBLAS_NUM_THREADS=1`` for them).
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
