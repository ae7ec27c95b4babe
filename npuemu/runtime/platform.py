"""SoC platform profiles: core counts and on-chip memory sizes.

Values come from ``ascend-c.md`` §3 (CANN platform ini files as quoted by
public sources); entries the sources could not confirm are marked in
``unconfirmed``.  A user can define a custom profile with
:func:`Platform.custom` and launch on it.

A launch that names no platform runs on :func:`default_platform`: the profile
chosen with :func:`set_default_platform` (pyasc's ``config.set_platform`` under
``npuemu.compat.pyasc``), else ``$NPUEMU_PLATFORM``, else Ascend910B1.
"""
from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass, field

from ..errors import PlatformError
from ..language.enums import Hardware

KIB = 1024


@dataclass(frozen=True)
class Platform:
    """What npuemu needs to know about one SoC."""

    name: str
    aic_count: int
    aiv_count: int
    ub_size: int = 192 * KIB
    l1_size: int = 512 * KIB
    l0a_size: int = 64 * KIB
    l0b_size: int = 64 * KIB
    l0c_size: int = 128 * KIB
    bt_size: int = 1 * KIB
    fixbuf_size: int = 7 * KIB
    cube_freq_mhz: float = 1850.0
    max_buffers_per_position: int = 8   # simultaneous alloc_tensor per TPosition (A2/A3)
    max_pipe_buffers: int = 64          # buffers one TPipe may hand out
    unconfirmed: tuple[str, ...] = field(default=())

    def memory_size(self, hw: Hardware) -> int:
        return {
            Hardware.UB: self.ub_size, Hardware.L1: self.l1_size, Hardware.L0A: self.l0a_size,
            Hardware.L0B: self.l0b_size, Hardware.L0C: self.l0c_size, Hardware.BIAS: self.bt_size,
            Hardware.FIXBUF: self.fixbuf_size,
        }.get(hw, 0)

    @functools.cached_property
    def key(self) -> str:
        """Stable text identifying every field, for kernel cache keys."""
        return repr(dataclasses.astuple(self))

    @classmethod
    def custom(cls, name: str, *, base: "Platform | str" = "Ascend910B1", **overrides: object) -> "Platform":
        """A new profile: ``base`` with some fields replaced (e.g. ``aiv_count=7, ub_size=64*1024``)."""
        parent = get_platform(base) if isinstance(base, str) else base
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise PlatformError(f"unknown platform fields: {', '.join(sorted(unknown))}")
        p = dataclasses.replace(parent, name=name, **overrides)  # type: ignore[arg-type]
        if p.aiv_count < 1 or p.ub_size < 1024 or p.ub_size % 32:
            raise PlatformError(f"platform {name}: need at least one AIV and a UB of >= 1 KiB in 32-byte units")
        register(p)
        return p


_PLATFORMS: dict[str, Platform] = {}


def register(p: Platform) -> None:
    _PLATFORMS[p.name] = p


def get_platform(name: "str | Platform | None" = None) -> Platform:
    if isinstance(name, Platform):
        return name
    if not name:
        return default_platform()
    name = getattr(name, "value", name)      # accept asc.runtime.config.Platform members
    try:
        return _PLATFORMS[str(name)]
    except KeyError:
        raise PlatformError(f"unknown platform '{name}'; known: {', '.join(sorted(_PLATFORMS))}") from None


def platforms() -> list[Platform]:
    return list(_PLATFORMS.values())


DEFAULT_PLATFORM = "Ascend910B1"
_selected: "str | Platform | None" = None     # set_default_platform's choice


def default_platform() -> Platform:
    """The profile of launches that name none: the selected one, else $NPUEMU_PLATFORM, else Ascend910B1."""
    return get_platform(_selected or os.environ.get("NPUEMU_PLATFORM") or DEFAULT_PLATFORM)


def set_default_platform(name: "str | Platform | None") -> "str | Platform | None":
    """Select the profile of launches that name none; ``None`` clears the selection.

    Returns the previous selection, so a caller can restore it.
    """
    global _selected
    if name is not None and not isinstance(name, Platform):
        name = str(getattr(name, "value", name))
        get_platform(name)          # an unknown name fails here, not at the next launch
    previous, _selected = _selected, name
    return previous


for _p in (
    Platform("Ascend910B1", 24, 48, cube_freq_mhz=1850.0),
    Platform("Ascend910B2", 24, 48, cube_freq_mhz=1800.0),
    Platform("Ascend910B2C", 24, 48, cube_freq_mhz=1800.0, unconfirmed=("aic_count", "aiv_count")),
    Platform("Ascend910B3", 20, 40, unconfirmed=("cube_freq_mhz",)),
    Platform("Ascend910B4", 20, 40, unconfirmed=("aiv_count", "cube_freq_mhz")),
    Platform("Ascend910B4-1", 20, 40, unconfirmed=("aiv_count", "cube_freq_mhz")),
    Platform("Ascend910_9392", 24, 48, unconfirmed=("cube_freq_mhz",)),
    Platform("Ascend910_9391", 24, 48, unconfirmed=("aic_count", "aiv_count", "cube_freq_mhz")),
    Platform("Ascend910_9382", 24, 48, unconfirmed=("aic_count", "aiv_count", "cube_freq_mhz")),
    Platform("Ascend910_9381", 24, 48, unconfirmed=("aic_count", "aiv_count", "cube_freq_mhz")),
    Platform("Ascend910_9372", 24, 48, unconfirmed=("aic_count", "aiv_count", "cube_freq_mhz")),
    Platform("Ascend910_9362", 24, 48, unconfirmed=("aic_count", "aiv_count", "cube_freq_mhz")),
):
    register(_p)
