"""Sweeps: many cases (kernel or tiling function, platform, dtype, shape, seed, check level), in this
process or on a Dask cluster, with the same results either way.

- :mod:`.cases`: the :class:`Case` value and the generators of the usual sweeps
  (:func:`tiling_cases`, :func:`property_cases`, :func:`kernel_cases`);
- :mod:`.execute`: one case in the current process, compared with its
  reference as ``npuemu.testing`` does, to a :class:`CaseResult` (failures are
  data: error class, rule, kernel, core, source line, Hypothesis' example);
- :mod:`.engine`: :func:`sweep`, in-process or through a
  ``dask.distributed`` client (an optional extra: ``pip install 'npuemu[scaleout]'``);
- :mod:`.prebuild`: kernel binaries built once on the client, loaded by
  sha256 from the shared binary store on the workers;
- :mod:`.versions`: workers that run other code than the client are refused;
- :mod:`.report`: progress, the summary table and the JSON result file.

See docs/scale-out.md.
"""
from __future__ import annotations

from .cases import Case, kernel_cases, property_cases, tiling_cases
from .engine import sweep
from .execute import CaseResult, ErrorInfo, run_case
from .report import SweepReport

__all__ = ["Case", "CaseResult", "ErrorInfo", "SweepReport", "sweep", "run_case", "tiling_cases",
           "property_cases", "kernel_cases"]
