"""Testing kernels and tiling functions: assertions, tiling invariants, Hypothesis strategies, a pytest plugin.

- :func:`assert_kernel_matches` runs a kernel and a NumPy reference and
  reports the first differing element, the values, their bits and the ulp
  distance (bit-exact unless a tolerance is asked for); outputs are filled
  first, so elements the kernel never writes are named as such.
- :class:`TilingPlan` / :class:`BlockWork` describe what a tiling function
  decided; :func:`check_plan` / :func:`assert_plan` check the invariants of
  superkernel-binaries-tiling.md (coverage, core bound, no empty core,
  alignment, UB capacity, loop/tail consistency, balance);
  :func:`assert_tiling` runs a tiling function and checks its plan, with
  :func:`check_deterministic`, :func:`check_monotonic`,
  :func:`check_cube_tiling` and :func:`check_block_schedule` for the rest.
- :mod:`npuemu.testing.strategies`: Hypothesis strategies for sizes, shapes,
  dtypes, platforms (built-in and random custom ones) and tiling contexts
  (needs Hypothesis, so it is imported on first use).
- :mod:`npuemu.testing.plugin`: fixtures ``npuemu_platform``, ``npuemu_rng``,
  ``npuemu_check_level`` and the ``--npuemu-*`` options (loaded by pytest
  automatically once npuemu is installed).

See docs/testing.md.
"""
from __future__ import annotations

from typing import Any

from .assertions import (EXACT, KernelMismatchError, Tolerance, UnwrittenOutputError, assert_arrays_match,
                         assert_kernel_matches, compare_arrays, ulp_distance)
from .cube_invariants import check_block_schedule, check_cube_tiling
from .invariants import assert_tiling, check_deterministic, check_monotonic, check_tiling
from .plans import (BlockWork, TilingPlan, assert_plan, check_plan, plan_from_block_factor, plan_from_former_tail,
                    tile_loop)
from .violations import TilingInvariantError, Violation, raise_if

__all__ = [
    "assert_kernel_matches", "assert_arrays_match", "compare_arrays", "ulp_distance", "Tolerance", "EXACT",
    "KernelMismatchError", "UnwrittenOutputError",
    "TilingPlan", "BlockWork", "Violation", "TilingInvariantError", "check_plan", "assert_plan", "raise_if",
    "check_tiling", "assert_tiling",
    "check_deterministic", "check_monotonic", "check_cube_tiling", "check_block_schedule", "tile_loop",
    "plan_from_block_factor", "plan_from_former_tail",
    "strategies", "profiles",
]


def __getattr__(name: str) -> Any:
    # strategies needs Hypothesis, a test-only dependency: import it when first asked for
    if name in ("strategies", "profiles"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
