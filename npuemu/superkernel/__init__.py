"""SuperKernel: several kernel launches fused into one (docs/superkernel.md).

``combine(launches, options)`` or ``with scope(name, options): ...`` build a
:class:`SuperKernel`; its kernel type and block dim follow CANN's rules,
its sub-kernels run in order on its cores, each below its own block dim,
with CANN's inter-kernel barriers between them, and broken rules are
reported naming the sub-kernel, the core, the line and the rule.  With
profiled sub-kernels a run's ``profile`` is the cost model's estimate of
the one launch; :mod:`.cost` holds it against separate launches.
"""
from __future__ import annotations

from .combine import Launch, Scope, combine, scope
from .config import debug_config, demand, launch_config
from .model import SubKernel, SuperKernel
from .options import SuperKernelOptions, as_options, options_from_dict, parse_options

__all__ = ["Launch", "Scope", "combine", "scope", "debug_config", "demand", "launch_config", "SubKernel",
           "SuperKernel", "SuperKernelOptions", "as_options", "options_from_dict", "parse_options"]
