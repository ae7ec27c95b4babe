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

# Test files whose tests share an expensive module fixture (every cube kernel launched in every mode; child
# processes per mode): with pytest-xdist one worker runs all of a file's tests, so the fixture is made once.
# (xdist's own --dist loadgroup does not group under pytest 9: its node-id suffix no longer takes.)
ONE_WORKER_FILES = ("tests/test_cube_bits.py", "tests/reliability/test_runaway.py")


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``-n`` with the default distribution: as ``load`` (test by test), but each file of
    :data:`ONE_WORKER_FILES` is one unit of work."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class FileGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return path if path in ONE_WORKER_FILES else nodeid

    return FileGroups(config, log)


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
