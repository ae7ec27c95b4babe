"""Shared test setup: a seeded RNG and the launch modes.

The tests use the kernel cache every npuemu process uses (``NPUEMU_CACHE_DIR``,
else ``~/.cache/npuemu``), so kernels the demo or a user's script compiled are
not compiled again for the tests, and the other way round.  Tests that count
compilations or damage cache files make caches of their own under ``tmp_path``.
"""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261129)


@pytest.fixture(params=["compiled", "debug"])
def mode(request) -> dict:
    """Launch options for both execution modes: ``kernel[n](..., **mode)``."""
    return {"debug": request.param == "debug"}
