"""Shared test setup: a seeded RNG, the launch modes, Hypothesis settings that tolerate a busy machine.

The tests use the kernel cache every npuemu process uses (``NPUEMU_CACHE_DIR``,
else ``~/.cache/npuemu``), so kernels the demo or a user's script compiled are
not compiled again for the tests, and the other way round.  Tests that count
compilations or damage cache files make caches of their own under ``tmp_path``.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# a loaded CI machine can stall any draw or example for a second: no deadlines, no too-slow health check
settings.register_profile("npuemu-suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("npuemu-suite")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261129)


@pytest.fixture(params=["compiled", "debug"])
def mode(request) -> dict:
    """Launch options for both execution modes: ``kernel[n](..., **mode)``."""
    return {"debug": request.param == "debug"}


@pytest.fixture
def op_cache(tmp_path, monkeypatch):
    """A kernel cache of the test's own (``NPUEMU_CACHE_DIR``); the process's op indexes forgotten before and
    after, so built op binaries are looked for there."""
    from npuemu.ops.index import forget_indexes
    monkeypatch.setenv("NPUEMU_CACHE_DIR", str(tmp_path))
    forget_indexes()
    yield tmp_path
    forget_indexes()
