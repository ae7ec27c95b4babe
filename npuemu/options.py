"""Compile and launch options of a kernel.

Options are given to ``@asc.jit(...)`` or, per launch, as keyword arguments
of the launch call (``kernel[8](x, y, debug=True)``), which is why a kernel
parameter may not share a name with an option (as in pyasc).  Environment
variables set the defaults: ``NPUEMU_DEBUG=1`` runs kernels as plain Python,
``NPUEMU_CHECK=off|default|full`` picks the checking level and
``NPUEMU_PLATFORM`` the SoC profile (read when a launch names no platform, see
:func:`npuemu.platform.default_platform`), ``NPUEMU_TIMEOUT`` a time budget in
seconds per launch, ``NPUEMU_MAX_STEPS`` a loop-iteration budget per core and
``NPUEMU_PROFILE=1`` builds every kernel with the cost model (``profile=True``;
what ``npuemu profile SCRIPT`` sets).
"""
from __future__ import annotations

import dataclasses
import numbers
import os
from dataclasses import dataclass
from typing import Any

from .errors import LaunchError
from .language.enums import KernelType

CHECK_LEVELS = ("off", "default", "full")

# pyasc options npuemu accepts for compatibility and ignores: they steer the bisheng toolchain, not what
# a kernel computes
IGNORED_OPTIONS = frozenset({
    "capture_exceptions", "ir_multithreading", "strip_loc", "print_ir_before_all", "run_passes", "opt_level",
    "auto_sync_log", "bisheng_options", "always_compile", "core_num", "stream",
})
# pyasc options that change what a kernel means; see from_environment for what npuemu makes of them
SYNC_OPTIONS = frozenset({"auto_sync", "insert_sync", "verify_sync"})


@dataclass(frozen=True, kw_only=True)
class Options:
    """Options of one kernel launch.

    kernel_type: which cores run (``KernelType``); default AIV_ONLY (AIC_ONLY with matmul_cube_only).
    debug: run the generated code in CPython instead of Numba, so ``print``/``pdb`` work.
    check: ``off`` | ``default`` | ``full`` (see docs/checks.md); bounds are checked at every level.
    platform: SoC profile name or :class:`~npuemu.platform.Platform`; None: the default platform.
    matmul_cube_only: pyasc's switch for cube-only kernels.
    tiling_key: the launch's tiling key (``asc.tiling_key_is``); None: no key.
    auto_sync: insert the pipe synchronisation the kernel lacks, as pyasc's compiler does
        (``auto_sync``/``insert_sync``; see docs/auto-sync.md).
    verify_sync: check the kernel's own synchronisation: missing syncs are races (check ``full``,
        selected unless ``check`` is given), redundant ones ``RedundantSyncWarning``.
    timeout: seconds a launch may run before it is stopped (``KernelTimeoutError``); None: no limit.
    max_steps: loop iterations each core may run before it is stopped; None: no limit.
    profile: build the kernel with the cost model (docs/cost-model.md): the launch returns an
        :class:`npuemu.cost.Profile` of the estimated device time.  Part of the binary's key.

    ``timeout`` and ``max_steps`` are read by the running cores, not compiled
    in: they are no part of a binary's key.
    """

    kernel_type: KernelType | None = None
    debug: bool = False
    check: str = "default"
    platform: Any = None
    matmul_cube_only: bool = False
    tiling_key: int | None = None
    auto_sync: bool = False
    verify_sync: bool = False
    timeout: float | None = None
    max_steps: int | None = None
    profile: bool = False

    def __post_init__(self) -> None:
        _check_budgets(self)
        if self.tiling_key is not None:
            key = self.tiling_key
            if isinstance(key, bool) or not hasattr(key, "__index__") or not 0 <= int(key) < 1 << 64:
                raise LaunchError(f"tiling_key must be a non-negative 64-bit integer, got {key!r}")
            object.__setattr__(self, "tiling_key", int(key))
        if not isinstance(self.profile, bool):
            raise LaunchError(f"profile must be True or False, got {self.profile!r}")
        if self.check not in CHECK_LEVELS:
            raise LaunchError(f"check must be one of {', '.join(CHECK_LEVELS)}, got {self.check!r}")
        if self.kernel_type is not None:
            try:
                object.__setattr__(self, "kernel_type", KernelType(int(self.kernel_type)))
            except (TypeError, ValueError):
                raise LaunchError(f"unknown kernel_type {self.kernel_type!r}") from None

    @property
    def resolved_kernel_type(self) -> KernelType:
        if self.kernel_type is not None:
            return self.kernel_type
        return KernelType.AIC_ONLY if self.matmul_cube_only else KernelType.AIV_ONLY


_TRUE = ("1", "true", "yes", "on")
OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(Options)) | IGNORED_OPTIONS | SYNC_OPTIONS


def from_environment(**given: Any) -> Options:
    """Options from the decorator, with environment defaults for what was not given."""
    env: dict[str, Any] = {}
    if os.environ.get("NPUEMU_DEBUG", "").lower() in _TRUE:
        env["debug"] = True
    if os.environ.get("NPUEMU_PROFILE", "").lower() in _TRUE:
        env["profile"] = True
    if os.environ.get("NPUEMU_CHECK"):
        env["check"] = os.environ["NPUEMU_CHECK"].lower()
    for name, var, kind in (("timeout", "NPUEMU_TIMEOUT", float), ("max_steps", "NPUEMU_MAX_STEPS", int)):
        text = os.environ.get(var, "").strip()
        if text:
            try:
                env[name] = kind(text)
            except ValueError:
                raise LaunchError(f"{var} must be a positive number, got {text!r}") from None
    known = {f.name for f in dataclasses.fields(Options)}
    unknown = set(given) - OPTION_NAMES
    if unknown:
        raise LaunchError(f"unknown @asc.jit option(s): {', '.join(sorted(unknown))}")
    env.update({k: v for k, v in given.items() if k in known and k not in SYNC_OPTIONS})
    if _sync_option(given, "auto_sync") or _sync_option(given, "insert_sync"):
        env["auto_sync"] = True
    if _sync_option(given, "verify_sync"):
        env["verify_sync"] = True
        if "check" not in given:
            env["check"] = "full"
    return Options(**env)


def _check_budgets(options: Options) -> None:
    """``timeout`` a positive number of seconds, ``max_steps`` a positive integer (or None)."""
    t = options.timeout
    if t is not None:
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not t > 0:
            raise LaunchError(f"timeout must be a positive number of seconds (or None), got {t!r}")
        object.__setattr__(options, "timeout", float(t))
    n = options.max_steps
    if n is not None:
        if isinstance(n, bool) or not hasattr(n, "__index__") or int(n) <= 0:
            raise LaunchError(f"max_steps must be a positive integer (or None), got {n!r}")
        object.__setattr__(options, "max_steps", int(n))


def _sync_option(given: dict[str, Any], name: str) -> bool:
    """pyasc's synchronisation options (``auto_sync``, ``insert_sync``, ``verify_sync``): True or False.

    ``auto_sync=True`` and ``insert_sync=True`` both make the lowering insert
    the pipe synchronisation a kernel lacks (docs/auto-sync.md).  pyasc turns
    ``auto_sync`` on by default; npuemu runs kernels as written unless asked,
    because checking the synchronisation a kernel was written with is the point
    of check level ``full``.  ``verify_sync=True`` selects check level ``full``
    (unless ``check`` is given) and reports redundant synchronisation.
    """
    value = given.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise LaunchError(f"option {name} must be True or False, got {value!r}")
    return value
