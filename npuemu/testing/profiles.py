"""Hypothesis settings profiles for npuemu test suites: a quick one for CI, a thorough one.

``npuemu-ci`` runs few examples with no deadline (a first launch compiles a
kernel, which takes seconds); ``npuemu-thorough`` runs many.  The profile in
force is chosen with ``pytest --npuemu-hypothesis=thorough`` or
``NPUEMU_HYPOTHESIS_PROFILE=thorough`` (default: ``ci``).

Tests that need a different number of examples per profile use
:func:`settings`, which reads the selection when the test module is imported::

    @npuemu.testing.profiles.settings(ci=10, thorough=200)
    @given(...)
    def test_tiling(...): ...

This module imports Hypothesis only when a profile is registered or a
``settings`` object is built, so the pytest plugin works without it.
"""
from __future__ import annotations

import os
from typing import Any

from ..errors import UsageError

ENV = "NPUEMU_HYPOTHESIS_PROFILE"
CHOICES = ("ci", "thorough")
PREFIX = "npuemu-"

# max_examples of the two profiles when a test does not set its own
DEFAULT_EXAMPLES = {"ci": 20, "thorough": 500}

_selected: str | None = None


def _normalise(name: str) -> str:
    name = name.strip().lower()
    if name.startswith(PREFIX):
        name = name[len(PREFIX):]
    if name not in CHOICES:
        raise UsageError(f"unknown npuemu Hypothesis profile {name!r}; choose one of {', '.join(CHOICES)}")
    return name


def select(name: str | None) -> None:
    """Choose the profile (``"ci"``, ``"thorough"`` or None for the environment's choice)."""
    global _selected
    _selected = None if name is None else _normalise(name)


def selected() -> str:
    """The profile in force: the explicit choice, else ``$NPUEMU_HYPOTHESIS_PROFILE``, else ``"ci"``."""
    if _selected is not None:
        return _selected
    env = os.environ.get(ENV)
    return _normalise(env) if env else "ci"


def explicitly_selected() -> bool:
    return _selected is not None or bool(os.environ.get(ENV))


def register() -> bool:
    """Register ``npuemu-ci`` and ``npuemu-thorough`` with Hypothesis; False if it is not installed."""
    try:
        from hypothesis import HealthCheck
        from hypothesis import settings as hsettings
    except ImportError:
        return False
    common: dict[str, Any] = {
        "deadline": None,                               # the first example of a kernel test compiles it
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
        "print_blob": True,                             # a failure prints how to reproduce it
    }
    hsettings.register_profile(PREFIX + "ci", max_examples=DEFAULT_EXAMPLES["ci"], **common)
    hsettings.register_profile(PREFIX + "thorough", max_examples=DEFAULT_EXAMPLES["thorough"], **common)
    return True


def load() -> None:
    """Register the profiles and make the selected one Hypothesis's default."""
    if register():
        from hypothesis import settings as hsettings
        hsettings.load_profile(PREFIX + selected())


def settings(ci: int | None = None, thorough: int | None = None, **kwargs: Any) -> Any:
    """A ``hypothesis.settings`` with ``max_examples`` for the selected profile.

    Unset counts fall back to :data:`DEFAULT_EXAMPLES`; other keyword
    arguments go to ``hypothesis.settings``.  Deadlines are off and the
    too-slow health check is suppressed, as in both profiles.
    """
    from hypothesis import HealthCheck
    from hypothesis import settings as hsettings
    register()
    counts = {"ci": ci, "thorough": thorough}
    name = selected()
    n = counts[name] if counts[name] is not None else DEFAULT_EXAMPLES[name]
    kwargs.setdefault("deadline", None)
    kwargs.setdefault("suppress_health_check", [HealthCheck.too_slow, HealthCheck.data_too_large])
    return hsettings(max_examples=n, **kwargs)
