"""The Numba internals npuemu patches are guarded by a version and attribute check."""
from __future__ import annotations

import re
from pathlib import Path

import numba
import pytest

import npuemu
from npuemu import numba_compat


@pytest.fixture
def numba_version(monkeypatch):
    def set_version(text: str) -> None:
        monkeypatch.setattr(numba, "__version__", text)
        numba_compat.supported_version.cache_clear()

    yield set_version
    numba_compat.supported_version.cache_clear()


def test_an_unsupported_numba_is_a_clear_error(numba_version):
    numba_version("0.99.0")
    with pytest.raises(npuemu.NpuemuError, match=r"needs Numba 0\.60 to 0\.68, found 0\.99\.0.*pip install "
                                                  r"'numba>=0\.60,<0\.69'"):
        numba_compat.require("cache index lock", numba.core.caching, "IndexDataCacheFile")


def test_a_missing_internal_is_named(numba_version):
    numba_version(numba.__version__)
    with pytest.raises(ImportError, match=r"numba\.core\.caching has no NoSuchThing"):
        numba_compat.require("cache index lock", numba.core.caching, "NoSuchThing")
    numba_compat.require("cache index lock", numba.core.caching, "IndexDataCacheFile")    # present: fine


def test_the_installed_numba_is_supported_and_pyproject_declares_the_same_range():
    assert numba_compat.supported_version()
    text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    low, high = re.search(r'"numba>=(\d+\.\d+),<(\d+\.\d+)"', text).groups()
    (lo_major, lo_minor), (hi_major, hi_minor) = numba_compat.SUPPORTED
    assert low == f"{lo_major}.{lo_minor}" and high == f"{hi_major}.{hi_minor + 1}"
