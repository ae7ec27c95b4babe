"""mmad's products: cblas_sgemm called from compiled code through its address, or NumPy through objmode.

Both paths must give the same C = A @ B (or C + A @ B) from the K-major
panels (A^T and B, K rows used of a larger panel), one float32 product per
K block; the lookup must fall back (address 0) when the BLAS is not OpenBLAS.
"""
from __future__ import annotations

import numpy as np
import pytest

from npuemu.isa import mmad as mm_isa
from npuemu.isa import state as S
from npuemu.runtime import sgemm
from npuemu.runtime.cores import AIC, AIV, CoreSpec, new_core_state
from npuemu.platform import default_platform


def _state(direct: bool) -> np.ndarray:
    st, _ = new_core_state(CoreSpec(AIC, 0, 1), default_platform())
    if not direct:
        st[S.SGEMM] = 0
    return st


def test_numpy_wheels_openblas_is_found():
    address, wide = sgemm.sgemm_address()
    from threadpoolctl import threadpool_info
    if not any(i.get("internal_api") == "openblas" for i in threadpool_info()):
        pytest.skip("NumPy here is not linked to OpenBLAS")
    assert address != 0
    st, _ = new_core_state(CoreSpec(AIC, 0, 1), default_platform())
    assert (st[S.SGEMM], st[S.SGEMM_WIDE]) == (address, wide)
    st, _ = new_core_state(CoreSpec(AIV, 0, 1), default_platform())
    assert st[S.SGEMM] == 0                         # vector cores have no mmad


@pytest.mark.parametrize("first", [True, False], ids=["from-zero", "onto-c"])
@pytest.mark.parametrize("direct", [True, False], ids=["cblas", "objmode"])
def test_product_of_k_rows_of_the_panels(direct, first, rng):
    """C (+)= A @ B over K rows of larger panels, K_BLOCK rows per product, each added to C with one
    rounding: the same bits by cblas_sgemm and by NumPy."""
    if direct and sgemm.sgemm_address()[0] == 0:
        pytest.skip("no OpenBLAS cblas_sgemm in this process")
    st = _state(direct)
    kcap, m16, n16, k = 700, 48, 32, 600
    at = rng.standard_normal((kcap, m16)).astype(np.float32)
    b = rng.standard_normal((kcap, n16)).astype(np.float32)
    c0 = rng.standard_normal((m16, n16)).astype(np.float32)
    p = np.full((m16, n16), np.nan, np.float32) if first else c0.copy()
    mm_isa._accumulate(st, at[:k], b[:k], p, first)
    want = None if first else c0.copy()
    for r in range(0, k, mm_isa.K_BLOCK):
        q = at[r:min(k, r + mm_isa.K_BLOCK)].T @ b[r:min(k, r + mm_isa.K_BLOCK)]
        want = q if want is None else want + q
    np.testing.assert_array_equal(p.view(np.uint32), want.view(np.uint32))


def test_other_blas_falls_back_to_objmode(monkeypatch):
    class NoOpenBlas:
        lib_controllers = []
    monkeypatch.setattr("threadpoolctl.ThreadpoolController", NoOpenBlas)
    sgemm.sgemm_address.cache_clear()
    try:
        assert sgemm.sgemm_address() == (0, False)
    finally:
        sgemm.sgemm_address.cache_clear()
