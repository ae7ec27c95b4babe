"""Tensors, addresses, queues and compile-time helpers of the kernel language.

These classes describe the API; inside ``@asc.jit`` code the frontend lowers
every use of them to emulated hardware state, binding each call to the
signatures written here (one ``overload`` per form where there are several).
See ``docs/language.md``.
"""
from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

from .builtin import builtin, builtin_class
from .dtype import DataType
from .params import ShapeInfo
from .enums import CacheMode, CacheRwMode, Hardware, HardEvent, TPosition

T = TypeVar("T")


class ConstExpr(Generic[T]):
    """Annotation for a compile-time constant kernel parameter: ``n: asc.ConstExpr[int]``.

    The value becomes part of the kernel's specialisation key.
    """


class GlobalAddress:
    """Annotation for a GM pointer argument (a NumPy array or torch CPU tensor at launch).

    Inside a kernel: ``x.dtype`` is the element type and ``x + n`` is the address
    ``n`` elements further on.
    """


class BaseTensor:
    """What GlobalTensor and LocalTensor share (pyasc's base class; for ``isinstance`` and annotations)."""


@builtin_class
class GlobalTensor(BaseTensor):
    """A typed view of global memory (``AscendC::GlobalTensor``).

    ``set_global_buffer(addr[, size])`` binds it; ``g[i:]`` is the sub-tensor at
    element ``i``; ``get_value``/``set_value``/``g(i)`` are scalar accesses, and ``g[i] = v`` is
    Ascend C's ``g(i) = v``: a scalar write that never cleans its DCache line (``set_value`` does in a
    SuperKernel's sub-kernel).
    """

    def set_global_buffer(self, buffer: GlobalAddress, buffer_size: int | None = None) -> None: ...
    def get_value(self, index: int) -> int | float: ...
    def set_value(self, index: int, value: int | float) -> None: ...
    def get_size(self) -> int: ...
    def get_phy_addr(self, offset: int = 0) -> GlobalAddress: ...
    def set_l2_cache_hint(self, mode: CacheMode = CacheMode.CACHE_MODE_NORMAL,
                          rw_mode: CacheRwMode = CacheRwMode.RW) -> None: ...
    def set_shape_info(self, shape_info: ShapeInfo) -> None: ...
    def get_shape_info(self) -> ShapeInfo: ...


@builtin_class
class LocalTensor(BaseTensor):
    """A tensor in on-chip memory (``AscendC::LocalTensor``).

    ``LocalTensor(dtype, pos, addr, tile_size)`` builds a static tensor at byte
    address ``addr`` of the memory behind ``pos`` holding ``tile_size`` elements.
    Tensors also come from ``TQue.alloc_tensor``/``deque`` and ``TBuf.get``.
    """

    def __init__(self, dtype: DataType, pos: TPosition = TPosition.VECIN, addr: int = 0,
                 tile_size: int = 0) -> None: ...
    def get_value(self, index: int) -> int | float: ...
    def set_value(self, index: int, value: int | float) -> None: ...
    def get_size(self) -> int: ...
    def get_length(self) -> int: ...
    def get_position(self) -> TPosition: ...
    def get_phy_addr(self, offset: int = 0) -> int: ...
    def reinterpret_cast(self, dtype: DataType) -> LocalTensor: ...
    def set_size(self, size: int = 0) -> None: ...
    def set_buffer_len(self, data_len: int) -> None: ...
    def set_addr_with_offset(self, src: LocalTensor, offset: int) -> None: ...
    def set_user_tag(self, tag: int = 0) -> None: ...
    def get_user_tag(self) -> int: ...
    def print(self, data_len: int) -> None: ...
    def set_shape_info(self, shape_info: ShapeInfo) -> None: ...
    def get_shape_info(self) -> ShapeInfo: ...


@builtin_class
class LocalTensorAuto(LocalTensor):
    """A UB tensor allocated automatically (pyasc's ``LocalTensorAuto(dtype, shape)``).

    ``shape`` is a compile-time element count or tuple of counts (their
    product is the length).  Each call site gets its own 32-byte aligned UB
    range from a bump allocator (a call in a loop reuses its range), position
    VECCALC; a kernel that uses one gets automatic synchronisation
    (docs/auto-sync.md).  Do not mix with TPipe buffers or static LocalTensors:
    their UB is not set apart from it.
    """

    def __init__(self, dtype: DataType, shape: int | tuple[int, ...]) -> None: ...


@builtin_class
class TPipe:
    """Memory manager of a kernel: splits on-chip memory among queues and buffers."""

    # a queue needs its buffer count and size: pyasc's defaults of 0 would make a queue without buffers
    @overload
    def init_buffer(self, que: TQue, num: int, len: int) -> None: ...  # noqa: A002
    @overload
    def init_buffer(self, buf: TBuf, num: int) -> None: ...   # num: the buffer's length in bytes
    def init_buffer(self, *args: Any, **kwargs: Any) -> None: ...
    def init(self) -> None: ...
    def reset(self) -> None: ...
    def destroy(self) -> None: ...
    def alloc_event_id(self, event: HardEvent = HardEvent.V_S) -> int: ...
    def fetch_event_id(self, event: HardEvent = HardEvent.V_S) -> int: ...
    def release_event_id(self, id: int, event: HardEvent = HardEvent.V_S) -> None: ...  # noqa: A002
    def get_base_addr(self, logic_pos: TPosition | None = None) -> int: ...
    def init_buf_pool(self, buf_pool: TBufPool, len: int = 0,  # noqa: A002
                      share_buf: TBufPool | None = None) -> None: ...


class TPipeManager:
    """pyasc's holder of the kernel's TPipe: ``TPipeManager.get()`` is ``get_tpipe_ptr()``."""

    @staticmethod
    @builtin
    def get() -> TPipe:
        """The kernel's TPipe."""

    @staticmethod
    @builtin
    def set(pipe: TPipe) -> None:
        """Accepted for pyasc compatibility: a kernel has one TPipe, which is already the current one."""

    @staticmethod
    @builtin
    def reset() -> None:
        """Accepted for pyasc compatibility; the TPipe stays the kernel's."""


@builtin_class
class TQue:
    """A queue of tensor buffers between pipeline stages (``TQue<pos, depth>``)."""

    def __init__(self, pos: TPosition = TPosition.VECIN, depth: int = 1) -> None: ...
    def alloc_tensor(self, dtype: DataType) -> LocalTensor: ...
    def enque(self, tensor: LocalTensor) -> None: ...
    def deque(self, dtype: DataType) -> LocalTensor: ...
    def free_tensor(self, tensor: LocalTensor) -> None: ...
    def has_idle_buffer(self) -> bool: ...
    def has_tensor_in_que(self) -> bool: ...
    def get_tensor_count_in_que(self) -> int: ...
    def vacant_in_que(self) -> bool: ...
    def free_all_event(self) -> None: ...
    def init_buf_handle(self, buf_pool: TBufPool, index: int, buf_handle: TBufHandle,
                        cur_pool_addr: TBufHandle, len: int) -> None: ...  # noqa: A002
    def init_start_buf_handle(self, start_buf_handle: TBufHandle, num: int, len: int) -> None: ...  # noqa: A002


@builtin_class
class TQueBind:
    """A queue whose producer and consumer positions differ (``TQueBind<src, dst, depth>``)."""

    # npuemu needs the positions and a depth of at least 1 (pyasc defaults them to VECIN and 0)
    def __init__(self, src: TPosition, dst: TPosition, depth: int = 1) -> None: ...


@builtin_class
class TBuf:
    """Scratch buffer without queue semantics (``TBuf<pos>``)."""

    def __init__(self, pos: TPosition = TPosition.VECCALC) -> None: ...
    @overload
    def get(self, dtype: DataType, len: int | None = None) -> LocalTensor: ...  # noqa: A002
    @overload
    def get(self, dtype: DataType, length: int | None = None) -> LocalTensor: ...   # npuemu's earlier name
    def get(self, *args: Any, **kwargs: Any) -> LocalTensor: ...
    def get_with_offset(self, size: int, buf_offset: int, dtype: DataType) -> LocalTensor: ...


@builtin_class
class TBufPool:
    """A region of UB or L1 handed out by hand, for memory reuse between phases (``TBufPool<pos, bufIDSize>``).

    ``pipe.init_buf_pool(pool, len[, share_buf])`` or ``parent.init_buf_pool(...)``
    gives it memory; ``init_buffer`` gives its queues and TBufs memory from it;
    ``reset()`` ends its phase (docs/language.md, "Buffer pools").
    """

    def __init__(self, pos: TPosition = TPosition.VECCALC, buf_id_size: int = 4) -> None: ...
    def init_buf_pool(self, buf_pool: TBufPool, len: int = 0,  # noqa: A002
                      share_buf: TBufPool | None = None) -> None: ...
    @overload
    def init_buffer(self, que: TQue, num: int, len: int) -> None: ...  # noqa: A002
    @overload
    def init_buffer(self, buf: TBuf, num: int) -> None: ...   # num: the buffer's length in bytes
    def init_buffer(self, *args: Any, **kwargs: Any) -> None: ...
    def reset(self) -> None: ...


@builtin_class
class TBufHandle:
    """The library's handle of one queue buffer: only its internal bookkeeping makes these; npuemu refuses it."""

    def __init__(self, handle: Any) -> None: ...


@builtin_class
class LocalMemAllocator:
    """Bump allocator for static tensors of one physical memory."""

    def __init__(self, hardware: Hardware = Hardware.UB) -> None: ...
    def alloc(self, pos: TPosition, dtype: DataType, tile_size: int) -> LocalTensor: ...
    def get_cur_addr(self) -> int: ...


@builtin
def pop_stack_buffer(dtype: DataType, position: TPosition = TPosition.VECCALC) -> LocalTensor:
    """The memory of ``position`` that the TPipe has not handed out, as one tensor (``PopStackBuffer``).

    It starts where the last ``init_buffer`` ended and runs to the end of the
    memory; a later ``init_buffer`` takes the same bytes, as on the device.
    """


@builtin
def get_tpipe_ptr() -> TPipe:
    """The kernel's TPipe (``GetTPipePtr``), for helpers that were not handed it."""


@builtin
def range(*args: int) -> Any:  # noqa: A001 - pyasc's name
    """A runtime loop range (same as Python's ``range`` inside a kernel)."""


@builtin
def static_range(*args: int) -> Any:
    """A loop range unrolled at compile time; its bounds must be constants."""


def ceildiv(a: int, b: int) -> int:
    """``ceil(a / b)`` for non-negative integers; usable on host and in kernels."""
    return -(-a // b)


@builtin
def static_assert(cond: bool, msg: str = "") -> None:
    """Fail compilation with ``msg`` unless the constant ``cond`` holds."""
