"""pytest plugin for kernel test suites, registered as the ``npuemu`` ``pytest11`` entry point.

Fixtures:

- ``npuemu_platform``: the :class:`~npuemu.platform.Platform` to test
  on, also made the default platform of launches during the test.  It is the
  default profile, ``--npuemu-platform=NAME``, or, with
  ``--npuemu-all-platforms``, every built-in profile in turn (the test is
  parametrised over them).
- ``npuemu_rng``: a seeded ``numpy.random.Generator``.  The seed is derived
  from the test id (so every run draws the same data) or set with
  ``--npuemu-seed=N`` (``random`` picks a fresh one); a failing test's report
  shows the seed to rerun it with.
- ``npuemu_check_level``: the checking level to launch with
  (``--npuemu-check``, else ``$NPUEMU_CHECK``, else ``full``, the level tests
  are meant to run at).

Time budget: ``--npuemu-timeout=SECONDS``, or the marker
``@pytest.mark.npuemu_timeout(SECONDS)`` on a test (it wins), gives every
kernel launch of the test that budget (as ``NPUEMU_TIMEOUT`` does, and a
launch's own ``timeout=`` wins over both): a kernel that does not finish
fails the test with a ``KernelTimeoutError`` naming each core's line instead
of hanging the run.

Hypothesis: ``--npuemu-hypothesis=thorough`` or
``NPUEMU_HYPOTHESIS_PROFILE=thorough`` loads the ``npuemu-thorough`` profile
(``ci`` the quick one; see :mod:`npuemu.testing.profiles`).

The plugin imports neither Numba nor Hypothesis unless a fixture or an
option needs them, so installing npuemu does not slow down unrelated test
suites; pytest-xdist workers get the same options and configure themselves
the same way.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
import zlib
from typing import Any, Iterator

import pytest

from . import profiles
from ._platforms import builtin_names

SEED_KEY = pytest.StashKey[int]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("npuemu", "npuemu kernel testing")
    group.addoption("--npuemu-all-platforms", action="store_true", default=False,
                    help="run tests that use the npuemu_platform fixture on every built-in SoC profile")
    group.addoption("--npuemu-platform", metavar="NAME", default=None,
                    help="SoC profile of the npuemu_platform fixture (default: $NPUEMU_PLATFORM or Ascend910B1)")
    group.addoption("--npuemu-seed", metavar="SEED", default=None,
                    help="seed of the npuemu_rng fixture: an integer, or 'random' (default: derived from the "
                         "test id)")
    group.addoption("--npuemu-hypothesis", metavar="PROFILE", default=None, choices=profiles.CHOICES,
                    help="Hypothesis profile: 'ci' (few examples, the default) or 'thorough'; "
                         f"${profiles.ENV} works too")
    group.addoption("--npuemu-check", metavar="LEVEL", default=None, choices=("off", "default", "full"),
                    help="value of the npuemu_check_level fixture (default: $NPUEMU_CHECK or 'full')")
    group.addoption("--npuemu-timeout", metavar="SECONDS", default=None, type=_seconds,
                    help="time budget of every kernel launch in a test: a launch that runs longer raises "
                         "KernelTimeoutError naming each core's line (default: $NPUEMU_TIMEOUT, none)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "npuemu_platforms(*names): run this test on these SoC profiles "
                                       "(with the npuemu_platform fixture)")
    config.addinivalue_line("markers", "npuemu_timeout(seconds): time budget of every kernel launch of this "
                                       "test (wins over --npuemu-timeout)")
    choice = config.getoption("--npuemu-hypothesis")
    if choice:
        profiles.select(choice)
    if profiles.explicitly_selected():
        profiles.load()                 # imports Hypothesis: the run asked for a profile
    elif "hypothesis" in sys.modules:
        profiles.register()             # otherwise strategies and profiles.settings() register them on import


def pytest_report_header(config: pytest.Config) -> str:
    if config.getoption("--npuemu-all-platforms"):
        where = "every built-in profile"
    else:
        where = config.getoption("--npuemu-platform") or os.environ.get("NPUEMU_PLATFORM") or "the default profile"
    return f"npuemu: platform {where}; Hypothesis profile npuemu-{profiles.selected()}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "npuemu_platform" not in metafunc.fixturenames:
        return
    if any("npuemu_platform" in _argnames(m) for m in metafunc.definition.iter_markers("parametrize")):
        return                                   # the test chose its platforms itself
    marker = metafunc.definition.get_closest_marker("npuemu_platforms")
    if marker is not None:
        names = list(marker.args)
    elif metafunc.config.getoption("--npuemu-all-platforms"):
        names = builtin_names()
    else:
        return                                   # one platform: no parametrisation, test ids unchanged
    metafunc.parametrize("npuemu_platform", names, indirect=True, ids=names)


def _argnames(mark: pytest.Mark) -> list[str]:
    names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
    if isinstance(names, str):
        return [n.strip() for n in names.split(",")]
    return list(names)


@pytest.fixture
def npuemu_platform(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The SoC profile of this test; launches that name no platform use it too."""
    from ..platform import default_platform, get_platform, set_default_platform
    name = getattr(request, "param", None) or request.config.getoption("--npuemu-platform")
    platform = get_platform(name) if name else default_platform()
    previous = set_default_platform(platform)
    try:
        yield platform
    finally:
        set_default_platform(previous)


def _seed_for(config: pytest.Config, nodeid: str) -> int:
    given = config.getoption("--npuemu-seed")
    if given is None:
        return zlib.crc32(nodeid.encode())
    if str(given).lower() == "random":
        return secrets.randbits(32)
    try:
        return int(given)
    except ValueError:
        raise pytest.UsageError(f"--npuemu-seed must be an integer or 'random', got {given!r}") from None


@pytest.fixture
def npuemu_rng(request: pytest.FixtureRequest) -> Any:
    """A ``numpy.random.Generator`` with a reproducible seed (shown in the report when the test fails)."""
    import numpy as np
    seed = _seed_for(request.config, request.node.nodeid)
    request.node.stash[SEED_KEY] = seed
    return np.random.default_rng(seed)


@pytest.fixture
def npuemu_check_level(request: pytest.FixtureRequest) -> str:
    """The ``check=`` level to launch kernels with in this run."""
    return request.config.getoption("--npuemu-check") or os.environ.get("NPUEMU_CHECK", "").lower() or "full"


def _seconds(text: Any) -> float:
    """A positive number of seconds (the option's and the marker's value)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0:
        raise ValueError(f"a time budget must be a positive number of seconds, got {text!r}")
    return value


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Give the test's kernel launches (setup and teardown included) its time budget, through
    ``NPUEMU_TIMEOUT``, which every launch reads."""
    marker = item.get_closest_marker("npuemu_timeout")
    if marker is not None:
        try:
            seconds = _seconds(marker.args[0] if marker.args else marker.kwargs.get("seconds"))
        except ValueError as exc:
            raise pytest.UsageError(f"{item.nodeid}: npuemu_timeout: {exc}") from None
    else:
        seconds = item.config.getoption("--npuemu-timeout")
    if seconds is None:
        with _cpu_record(item):
            yield
        return
    previous = os.environ.get("NPUEMU_TIMEOUT")
    os.environ["NPUEMU_TIMEOUT"] = repr(seconds)
    try:
        with _cpu_record(item):
            yield
    finally:
        if previous is None:
            os.environ.pop("NPUEMU_TIMEOUT", None)
        else:
            os.environ["NPUEMU_TIMEOUT"] = previous


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    seed = item.stash.get(SEED_KEY, None)
    if seed is not None and report.failed:
        report.sections.append(("npuemu", f"npuemu_rng seed: {seed} (rerun this test with --npuemu-seed={seed})"))



@contextlib.contextmanager
def _cpu_record(item: pytest.Item) -> Iterator[None]:
    """With ``NPUEMU_COMPILE_REPORT=<path>``: one line per test with its CPU seconds (setup and teardown
    included, child processes it waited for too) beside the compilations (``npuemu.codegen.compile_report``)."""
    path = os.environ.get("NPUEMU_COMPILE_REPORT")
    if not path:
        yield
        return
    before = os.times()
    try:
        yield
    finally:
        after = os.times()
        cpu = sum(getattr(after, f) - getattr(before, f)
                  for f in ("user", "system", "children_user", "children_system"))
        with open(path, "a") as f:
            f.write(json.dumps({"kind": "test", "test": item.nodeid, "cpu": round(cpu, 4), "pid": os.getpid()})
                    + "\n")
