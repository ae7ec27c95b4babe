"""The broken-kernel corpus (tests/corpus): each broken kernel is caught, each twin runs clean."""
from __future__ import annotations

import importlib
import pkgutil

import pytest

import corpus

CASES = sorted(m.name for m in pkgutil.iter_modules(corpus.__path__) if m.name.startswith("case_"))


def _case(name: str):
    return importlib.import_module(f"corpus.{name}")


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("debug", [False, True], ids=["compiled", "debug"])
def test_broken_kernel_is_caught(name, debug):
    case = _case(name)
    cls, text = case.EXPECT
    for level in case.LEVELS:
        with pytest.raises(cls) as info:
            case.run(False, check=level, debug=debug)
        assert text in str(info.value), f"{name} at check={level}: {info.value}"


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("debug", [False, True], ids=["compiled", "debug"])
def test_corrected_twin_runs_clean(name, debug):
    case = _case(name)
    for level in ("off", "default", "full"):
        case.run(True, check=level, debug=debug)
