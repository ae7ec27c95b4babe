"""Shared test setup: a kernel cache private to the test run, and a seeded RNG."""
from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

_ROOT = pathlib.Path(__file__).resolve().parent.parent
os.environ.setdefault("NPUEMU_CACHE_DIR", str(_ROOT / ".pytest_cache" / "npuemu-kernels"))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261129)


@pytest.fixture(params=["compiled", "debug"])
def mode(request) -> dict:
    """Launch options for both execution modes: ``kernel[n](..., **mode)``."""
    return {"debug": request.param == "debug"}
