"""The tiling framework: what a tiling function receives and what it returns.

A tiling function is host code ``f(ctx: TilingContext) -> TilingResult`` that
decides how a kernel splits its work: how many blocks to launch, which kernel
variant (tiling key) runs, the tiling data the kernel reads, and how much GM
workspace it needs.  This mirrors CANN's ``TilingContext`` (``GetInputShape``,
``SetTilingKey``, ``SetBlockDim``, ``GetWorkspaceSizes``, ``SetScheduleMode``,
see superkernel-binaries-tiling.md PART 3) with Python data classes.

Tiling data is an npuemu :class:`~npuemu.language.struct.Struct`: it has the
C layout of the equivalent POD struct and must fit in the context's
``tiling_data_capacity`` (4096 bytes by default, the capacity CANN's unit
tests give; no universal limit is documented).  :meth:`TilingResult.check`
enforces that and CANN's other limits before a launch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import TilingError
from ..language.struct import Struct
from ..platform import Platform

TILING_DATA_CAPACITY = 4096        # bytes (CANN UTs; UNCONFIRMED as a universal maximum)
MAX_BLOCK_DIM = 65535              # numBlocks of one launch
MAX_TILING_KEY = (1 << 64) - 1     # SetTilingKey takes a uint64


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

    @property
    def origin_shape(self) -> tuple[int, ...]:
        return self.shape

    @property
    def stored_shape(self) -> tuple[int, ...]:
        """The storage shape (``GetStorageShape``): ``storage_shape`` or, if None, the origin shape."""
        return self.shape if self.storage_shape is None else self.storage_shape

    @property
    def itemsize(self) -> int:
        from ..language import dtype as dt
        return dt.by_name(self.dtype).sizeof()


@dataclass(frozen=True)
class TilingContext:
    """Everything a tiling function may look at.

    ``core_num`` caps the cores the tiling may use (None: all of the
    platform's); ``tiling_data_capacity`` is the largest tiling data in bytes.
    """

    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    platform: Platform
    attrs: tuple[tuple[str, Any], ...] = ()
    deterministic: bool = False
    core_num: int | None = None
    tiling_data_capacity: int = TILING_DATA_CAPACITY

    def attr(self, name: str, default: Any = None) -> Any:
        return dict(self.attrs).get(name, default)

    def input(self, i: int) -> TensorDesc:
        """Input ``i`` (``GetInputShape``/``GetInputDesc``); a :class:`TilingError` if the op has no such input."""
        if not 0 <= i < len(self.inputs):
            raise TilingError(f"the tiling asks for input {i} of an op with {len(self.inputs)} inputs")
        return self.inputs[i]

    def output(self, i: int) -> TensorDesc:
        if not 0 <= i < len(self.outputs):
            raise TilingError(f"the tiling asks for output {i} of an op with {len(self.outputs)} outputs")
        return self.outputs[i]

    def platform_ascendc(self) -> "Any":
        """The :class:`~npuemu.host.platform_api.PlatformAscendC` of this context (``core_num`` applied)."""
        from .platform_api import PlatformAscendC
        return PlatformAscendC(self.platform, core_num=self.core_num)


@dataclass
class TilingResult:
    """What a tiling function decides."""

    block_dim: int
    tiling_data: Any                            # an npuemu Struct instance the kernel reads
    tiling_key: int = 0
    workspace_sizes: tuple[int, ...] = (0,)     # user workspace bytes; the system part is added on launch
    schedule_mode: int = 0                      # 1: batch mode (all blocks resident; needed by full-core syncs)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def user_workspace_size(self) -> int:
        """Bytes of user workspace the kernel asked for (the sum of ``workspace_sizes``)."""
        return sum(self.workspace_sizes)

    def workspace_size(self, platform: Platform) -> int:
        """The workspace a launch allocates: the platform's system workspace plus the user part."""
        return platform.system_workspace_size + self.user_workspace_size

    def tiling_bytes(self) -> bytes:
        """The tiling data serialised with its C layout."""
        return self.tiling_data.to_bytes()

    def check(self, ctx: TilingContext | None = None) -> None:
        """Raise :class:`TilingError` unless a launch can use this result.

        Checks the limits CANN enforces: 1 <= block_dim <= 65535, a uint64 key,
        tiling data that is a Struct with every field assigned and no larger
        than the context's capacity, non-negative workspace sizes, schedule
        mode 0 or 1.
        """
        bd = self.block_dim
        if isinstance(bd, bool) or not isinstance(bd, int) or not 1 <= bd <= MAX_BLOCK_DIM:
            raise TilingError(f"block_dim must be an int in [1, {MAX_BLOCK_DIM}], got {bd!r}")
        key = self.tiling_key
        if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= MAX_TILING_KEY:
            raise TilingError(f"tiling_key must be a non-negative 64-bit int, got {key!r}")
        if not isinstance(self.tiling_data, Struct):
            raise TilingError(f"tiling_data must be an npuemu Struct, got {type(self.tiling_data).__name__}")
        missing = self.tiling_data.unassigned()
        if missing:
            raise TilingError(f"tiling data {type(self.tiling_data).__name__}: field(s) {', '.join(missing)} were "
                              f"never assigned")
        self.tiling_data.layout()               # every field has a C layout
        capacity = ctx.tiling_data_capacity if ctx is not None else TILING_DATA_CAPACITY
        size = self.tiling_data.sizeof()
        if size > capacity:
            raise TilingError(f"tiling data {type(self.tiling_data).__name__} is {size} bytes; the capacity "
                              f"is {capacity}")
        ws = tuple(self.workspace_sizes)
        if not ws or any(isinstance(w, bool) or not isinstance(w, int) or w < 0 for w in ws):
            raise TilingError(f"workspace_sizes must be non-negative ints, got {self.workspace_sizes!r}")
        if self.schedule_mode not in (0, 1):
            raise TilingError(f"schedule_mode must be 0 (normal) or 1 (batch), got {self.schedule_mode!r}")


TilingFunction = Callable[[TilingContext], TilingResult]
