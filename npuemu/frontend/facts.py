"""Facts the lowering rules record about the kernel being lowered.

Rules set these through ``lw.facts`` (see :mod:`npuemu.frontend.context`).
The fields that decide how the kernel is launched are frozen into the
binary's :class:`npuemu.binary.facts.KernelFacts`; the others only steer the
lowering itself.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..binary.facts import DumpSite, KernelFacts, PrintfFormat, ScalarParam
from ..language.enums import KernelType


@dataclass
class LoweringFacts:
    """Mutable facts of one lowering; see :class:`KernelFacts` for the launch-facing ones."""

    kernel_type: KernelType
    blocking: bool = False
    cross_core: bool = False
    dcache: bool = False
    blas: bool = False
    uses_log: bool = False
    printf_formats: list[PrintfFormat] = field(default_factory=list)
    dump_sites: list[DumpSite] = field(default_factory=list)
    tiling_keys: set[int] = field(default_factory=set)
    # lowering only
    tpipe: bool = False                                           # a TPipe was created
    tpipe_destroyed: bool = False                                 # ... and destroyed since: another may follow
    queue_pipes: dict[int, tuple[int, int]] = field(default_factory=dict)   # queue id -> (producer, consumer) pipe
    auto_ub: dict[tuple, int] = field(default_factory=dict)      # LocalTensorAuto call site -> UB byte offset
    auto_ub_end: int = 0                                          # bytes of UB LocalTensorAuto has taken
    redundant_syncs: list[str] = field(default_factory=list)      # verify_sync's reports (autosync.py)
    flag_sites: dict[int, Any] = field(default_factory=dict)     # constant cross-core flag id -> its first call
    mix_matmuls: int = 0                                          # Matmul objects registered in a MIX kernel

    def freeze(self, gm_params: list[str], scalar_params: list[ScalarParam]) -> KernelFacts:
        return KernelFacts(blocking=self.blocking, cross_core=self.cross_core, dcache=self.dcache, blas=self.blas,
                           uses_log=self.uses_log, printf_formats=tuple(self.printf_formats),
                           dump_sites=tuple(self.dump_sites), tiling_keys=tuple(sorted(self.tiling_keys)),
                           gm_params=tuple(gm_params), scalar_params=tuple(scalar_params),
                           redundant_syncs=tuple(self.redundant_syncs))


__all__ = ["LoweringFacts", "KernelFacts", "PrintfFormat", "DumpSite", "ScalarParam"]
