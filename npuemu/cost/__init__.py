"""The cost model: estimated device time of a launch, per core and per pipe (docs/cost-model.md).

Launch a kernel with ``profile=True`` (``kernel[8](x, y, z, n, profile=True)``)
and the call returns a :class:`Profile`; ``print(profile)`` shows msprof's
per-pipe figures.  The durations come from the platform profile
(``npuemu/profiles.py``); the model runs inside the compiled kernel
(``npuemu/isa/cost.py``) and never changes what a kernel computes.
"""
from __future__ import annotations

from .model import MSPROF_NAMES, PIPES, CoreTimes, CostError, Profile
from .recorder import record_profiles

__all__ = ["MSPROF_NAMES", "PIPES", "CoreTimes", "CostError", "Profile", "record_profiles"]
