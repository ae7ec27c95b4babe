"""The address of BLAS's ``cblas_sgemm``, so compiled ``mmad`` can call it without Python.

``mmad`` multiplies through NumPy's BLAS.  Going through ``numba.objmode``
and ``np.matmul`` costs every call the GIL, boxing of three arrays and
NumPy's dispatch (tens of microseconds; a tall-skinny 8192 x 64 x 1024 matmul
makes some 300 such calls per launch, and the two core threads queue for the
GIL).  So when the BLAS that NumPy loaded is OpenBLAS, whose CBLAS symbol
names say their integer width (``scipy_cblas_sgemm64_`` in NumPy's wheels:
64-bit; ``cblas_sgemm``: 32-bit), its ``cblas_sgemm`` is called directly
from compiled code through its address (``isa/sgemm.py``).  The address is
core state (``st[SGEMM]``), not a compile-time constant, so compiled code
stays cacheable.  Any other BLAS, or a symbol that fails a small self-check,
leaves the address 0 and ``mmad`` keeps the ``objmode`` path.
"""
from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

# (symbol, 64-bit integers), in the order tried
SYMBOLS = (("scipy_cblas_sgemm64_", True), ("cblas_sgemm64_", True), ("scipy_cblas_sgemm", False),
           ("cblas_sgemm", False))


@functools.lru_cache(maxsize=None)
def sgemm_address() -> tuple[int, bool]:
    """``(address, 64-bit integers)`` of OpenBLAS's ``cblas_sgemm`` as NumPy loaded it; ``(0, False)`` if none."""
    try:
        from threadpoolctl import ThreadpoolController
        libs = [c for c in ThreadpoolController().lib_controllers
                if c.user_api == "blas" and c.internal_api == "openblas"]
    except Exception:  # noqa: BLE001 - no usable BLAS information: stay on the objmode path
        return 0, False
    for lib in libs:
        try:
            dll = ctypes.CDLL(lib.filepath)
        except OSError:
            continue
        for name, wide in SYMBOLS:
            fn = getattr(dll, name, None)
            if fn is not None and _works(fn, wide):
                return ctypes.cast(fn, ctypes.c_void_p).value or 0, wide
    return 0, False


def _works(fn: Any, wide: bool) -> bool:
    """Whether the ctypes function ``fn`` computes a small row-major ``A^T @ B`` (the call ``mmad`` makes)
    correctly."""
    i = ctypes.c_int64 if wide else ctypes.c_int32
    f, p = ctypes.c_float, ctypes.POINTER(ctypes.c_float)
    fn.restype = None
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, i, i, i, f, p, i, p, i, f, p, i]
    at = np.arange(6, dtype=np.float32).reshape(3, 2)        # A^T: K = 3, M = 2
    b = np.arange(12, dtype=np.float32).reshape(3, 4) - 5     # B: K x N = 3 x 4
    c = np.zeros((2, 4), np.float32)
    ptr = lambda x: x.ctypes.data_as(p)                       # noqa: E731
    fn(101, 112, 111, 2, 4, 3, 1.0, ptr(at), 2, ptr(b), 4, 0.0, ptr(c), 4)   # RowMajor, Trans, NoTrans
    return bool(np.array_equal(c, at.T @ b))
