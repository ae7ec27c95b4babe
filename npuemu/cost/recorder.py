"""Collect the profile of every profiled launch in the process, whoever made it.

``kernel[n](..., profile=True)`` returns its own :class:`Profile`; launches
made deeper down (the op layer, a pyasc script run through the compat runner,
a test helper) are reached with :func:`record_profiles`, usually together with
``NPUEMU_PROFILE=1`` so that every kernel is built with the cost model.  This
is what ``npuemu profile SCRIPT`` does.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

from ..runtime.launch import TIMES_LISTENERS, LaunchTimes
from .model import Profile


@contextlib.contextmanager
def record_profiles() -> Iterator[list[Profile]]:
    """A context manager: the list it yields receives the :class:`Profile` of each profiled launch, in order."""
    profiles: list[Profile] = []

    def listen(times: LaunchTimes) -> None:
        profiles.append(Profile(times))

    TIMES_LISTENERS.append(listen)
    try:
        yield profiles
    finally:
        TIMES_LISTENERS.remove(listen)
