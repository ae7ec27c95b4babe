"""Facts the lowering rules record about the kernel being lowered.

Rules set these through ``lw.facts`` (see :mod:`npuemu.frontend.context`).
The fields that decide how the kernel is launched are frozen into the
binary's :class:`npuemu.binary.facts.KernelFacts`; the others only steer the
lowering itself.
"""
from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field, fields
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
    queue_pipes: dict[int, tuple[int, int]] = field(default_factory=dict)   # queue id -> (producer, consumer) pipe

    def freeze(self, gm_params: list[str], scalar_params: list[ScalarParam]) -> KernelFacts:
        return KernelFacts(blocking=self.blocking, cross_core=self.cross_core, dcache=self.dcache, blas=self.blas,
                           uses_log=self.uses_log, printf_formats=tuple(self.printf_formats),
                           dump_sites=tuple(self.dump_sites), tiling_keys=tuple(sorted(self.tiling_keys)),
                           gm_params=tuple(gm_params), scalar_params=tuple(scalar_params))


class FlagsView(MutableMapping[str, Any]):
    """The fields of a :class:`LoweringFacts` under their names as string keys.

    For callers that still use the former ``Lowerer.flags`` dict while they
    move to ``Lowerer.facts``; rules use ``lw.facts``.
    """

    def __init__(self, facts: LoweringFacts):
        self._facts = facts

    def __getitem__(self, key: str) -> Any:
        return getattr(self._facts, _field(key))

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self._facts, _field(key), value)

    def __delitem__(self, key: str) -> None:
        raise TypeError("a lowering fact cannot be deleted")

    def __iter__(self) -> Iterator[str]:
        return iter(_FIELDS)

    def __len__(self) -> int:
        return len(_FIELDS)


_FIELDS = tuple(f.name for f in fields(LoweringFacts))


def _field(key: str) -> str:
    if key not in _FIELDS:
        raise KeyError(key)
    return key


__all__ = ["LoweringFacts", "FlagsView", "KernelFacts", "PrintfFormat", "DumpSite", "ScalarParam"]
