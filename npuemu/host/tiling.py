"""The tiling framework: what a tiling function receives and what it returns.

A tiling function is host code ``f(ctx: TilingContext) -> TilingResult`` that
decides how a kernel splits its work: how many blocks to launch, which kernel
variant (tiling key) runs, the tiling data the kernel reads, and how much GM
workspace it needs.  This mirrors CANN's ``TilingContext`` (``GetInputShape``,
``SetTilingKey``, ``SetBlockDim``, ``GetWorkspaceSizes``, ``SetScheduleMode``,
see superkernel-binaries-tiling.md PART 3) with Python data classes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..runtime.platform import Platform


@dataclass(frozen=True)
class TensorDesc:
    """One input or output as the tiling function sees it."""

    shape: tuple[int, ...]                      # origin shape
    dtype: str                                  # kernel dtype name ("float16", ...)
    format: str = "ND"
    storage_shape: tuple[int, ...] | None = None   # None: same as ``shape``

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True)
class TilingContext:
    """Everything a tiling function may look at."""

    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    platform: Platform
    attrs: tuple[tuple[str, Any], ...] = ()
    deterministic: bool = False

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)


@dataclass
class TilingResult:
    """What a tiling function decides."""

    block_dim: int
    tiling_data: Any                            # an npuemu Struct instance the kernel reads
    tiling_key: int = 0
    workspace_sizes: tuple[int, ...] = (0,)     # user workspace bytes; the system part is added on launch
    schedule_mode: int = 0                      # 1: batch mode (all blocks resident; needed by full-core syncs)
    extra: dict[str, Any] = field(default_factory=dict)


TilingFunction = Callable[[TilingContext], TilingResult]
