"""SoC platform profiles: core counts, on-chip memory sizes, clock and rates.

The built-in profiles are data (``npuemu/profiles.py``): one table per SoC,
every value with its source, values the sources could not confirm listed in
``Platform.unconfirmed`` (see docs/platforms.md).  A user can define a custom
profile with :func:`Platform.custom` and launch on it; the tiling functions,
the core model and the host API all read the profile of the launch.

A launch that names no platform runs on :func:`default_platform`: the profile
chosen with :func:`set_default_platform` (pyasc's ``config.set_platform`` under
``npuemu.compat.pyasc``), else ``$NPUEMU_PLATFORM``, else Ascend910B1.
"""
from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass, field

from .errors import PlatformError
from .language.enums import Hardware
from .profiles import (A2A3_CUBE_RATES, A2A3_TRANSFER_GIBPS, A2A3_TRANSFER_LATENCY_NS, A2A3_VECTOR_DEFAULT,
                       A2A3_VECTOR_OP_CYCLES)

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


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
    # scalar data cache of each core (ascend-c.md §3.2: 32 KB, 64-byte lines on A2/A3).  The
    # associativity is not documented; 4-way LRU is npuemu's assumption (see docs/dcache.md).
    dcache_bytes: int = 32 * KIB
    dcache_line: int = 64
    dcache_ways: int = 4
    unconfirmed: tuple[str, ...] = field(default=())
    # beyond sizes: memories, rates and throughputs (sources in npuemu/profiles.py)
    l2_size: int = 192 * MIB
    hbm_size: int = 64 * GIB
    hbm_bandwidth_gbps: float = 1600.0          # GB/s per die
    ddr_rate: int = 32                          # B/cycle per core, GM <-> core ([AICoreMemoryRates])
    l2_read_rate: int = 110                     # B/cycle per core
    l2_write_rate: int = 86
    l1_to_l0a_rate: int = 512
    l1_to_l0b_rate: int = 256
    ub_to_l2_rate: int = 64
    cube_fp16_macs_per_cycle: int = 4096        # per AIC (16 x 16 x 16)
    vector_bytes_per_cycle: int = 256           # per AIV (one 256-byte repeat)
    system_workspace_size: int = 16 * MIB       # GetLibApiWorkSpaceSize
    system_counter_mhz: float = 50.0            # GetSystemCycle's counter
    # the cost model (docs/cost-model.md): per-direction transfer rates per core (GiB/s), the MAC rate of
    # each cube input class relative to fp16, vector ops' (startup, per-repeat) cycles by dtype class,
    # the fixed time of one GM transfer by direction (ns),
    # the scalar unit's cycles per issued instruction and per scalar memory access, a launch's fixed cost
    transfer_gibps: tuple[tuple[str, float], ...] = A2A3_TRANSFER_GIBPS
    transfer_latency_ns: tuple[tuple[str, float], ...] = A2A3_TRANSFER_LATENCY_NS   # fixed time per transfer
    cube_rate_vs_fp16: tuple[tuple[str, float], ...] = A2A3_CUBE_RATES
    vector_op_cycles: tuple[tuple, ...] = A2A3_VECTOR_OP_CYCLES
    vector_default_cycles: tuple[float, float] = A2A3_VECTOR_DEFAULT
    scalar_issue_cycles: float = 1.0
    scalar_access_cycles: float = 1.0
    launch_overhead_us: float = 10.0
    sources: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)  # (field, source key)

    @property
    def clock_mhz(self) -> float:
        """The core clock (the ini's cube_freq; npuemu assumes the AIVs run at the same clock)."""
        return self.cube_freq_mhz

    @property
    def cube_fp16_tflops(self) -> float:
        """Peak fp16 cube throughput of all AICs, in TFLOPS (2 FLOP per MAC)."""
        return self.aic_count * self.cube_fp16_macs_per_cycle * 2 * self.cube_freq_mhz / 1e6

    @property
    def ini_ddr_bandwidth_gbps(self) -> float:
        """GM bandwidth the ini rates imply: ddr_rate x AIC count x clock, in GB/s."""
        return self.ddr_rate * self.aic_count * self.cube_freq_mhz / 1e3

    def source(self, name: str) -> str:
        """Where the value of field ``name`` comes from (text of ``npuemu.profiles.SOURCES``)."""
        from .profiles import SOURCES
        key = dict(self.sources).get(name)
        if key is None:
            return "npuemu default (no source recorded)"
        return SOURCES.get(key, key)

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
        """A new profile: ``base`` with some fields replaced (e.g. ``aiv_count=7, ub_size=64*1024``).

        The overridden fields are recorded as user-set (``source`` gives "custom")
        and drop out of ``unconfirmed``; the profile is registered under ``name``.
        """
        parent = get_platform(base) if isinstance(base, str) else base
        unknown = set(overrides) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise PlatformError(f"unknown platform fields: {', '.join(sorted(unknown))}")
        given = set(overrides) - {"unconfirmed", "sources"}
        overrides.setdefault("unconfirmed", tuple(f for f in parent.unconfirmed if f not in given))
        overrides.setdefault("sources", tuple((f, s) for f, s in parent.sources if f not in given)
                             + tuple((f, "custom") for f in sorted(given)))
        p = dataclasses.replace(parent, name=name, **overrides)  # type: ignore[arg-type]
        negative = [f.name for f in dataclasses.fields(p) if isinstance(getattr(p, f.name), (int, float))
                    and getattr(p, f.name) < 0]
        if negative or p.cube_freq_mhz <= 0:
            raise PlatformError(f"platform {name}: {', '.join(negative) or 'cube_freq_mhz'} must be "
                                f"{'non-negative' if negative else 'positive'}")
        if p.aiv_count + p.aic_count < 1 or p.ub_size < 1024 or p.ub_size % 32:
            raise PlatformError(f"platform {name}: need at least one core and a UB of >= 1 KiB in 32-byte units")
        sets = p.dcache_bytes // (p.dcache_line * p.dcache_ways) if p.dcache_line > 0 and p.dcache_ways > 0 else 0
        if p.dcache_line < 8 or p.dcache_line & (p.dcache_line - 1) or sets < 1 or sets & (sets - 1) \
                or sets * p.dcache_line * p.dcache_ways != p.dcache_bytes:
            raise PlatformError(f"platform {name}: the DCache needs a power-of-two line of at least 8 bytes and "
                                f"dcache_bytes = a power of two sets x dcache_ways x dcache_line")
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


def _builtin_profiles() -> None:
    """Register the profiles of ``npuemu/profiles.py``."""
    from .profiles import PROFILES, profile_fields
    for name in PROFILES:
        values, sources, unconfirmed = profile_fields(name)
        register(Platform(name=name, sources=sources, unconfirmed=unconfirmed, **values))


_builtin_profiles()
