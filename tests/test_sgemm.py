"""mmad's products: cblas_sgemm called from compiled code through its address, or NumPy through objmode.

Both paths must give C = A @ B from the K-major panels (A^T and B, K rows
used of a larger panel); the lookup must fall back (address 0) when the BLAS
is not OpenBLAS.
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


@pytest.mark.parametrize("direct", [True, False], ids=["cblas", "objmode"])
def test_product_of_k_rows_of_the_panels(direct, rng):
    if direct and sgemm.sgemm_address()[0] == 0:
        pytest.skip("no OpenBLAS cblas_sgemm in this process")
    st = _state(direct)
    kcap, m16, n16, k = 40, 48, 32, 27
    at = rng.standard_normal((kcap, m16)).astype(np.float32)
    b = rng.standard_normal((kcap, n16)).astype(np.float32)
    p = np.full((m16, n16), np.nan, np.float32)
    mm_isa._product_f32(st, at[:k], b[:k], p)
    want = at[:k].astype(np.float64).T @ b[:k].astype(np.float64)
    np.testing.assert_allclose(p, want, rtol=0, atol=1e-5 * np.sqrt(k) * np.abs(want).max())


def test_other_blas_falls_back_to_objmode(monkeypatch):
    class NoOpenBlas:
        lib_controllers = []
    monkeypatch.setattr("threadpoolctl.ThreadpoolController", NoOpenBlas)
    sgemm.sgemm_address.cache_clear()
    try:
        assert sgemm.sgemm_address() == (0, False)
    finally:
        sgemm.sgemm_address.cache_clear()
