"""Core identity, system variables and system pointers (``GetBlockIdx``, ``GetSystemCycle``, ...)."""
from __future__ import annotations

from .builtin import builtin
from .core import GlobalAddress, GlobalTensor

__all__ = ["get_block_idx", "get_block_num", "get_raw_block_num", "get_sub_block_idx", "get_sub_block_num", "get_task_ratio",
           "ascend_is_aic", "ascend_is_aiv", "get_data_block_size_in_bytes", "get_system_cycle",
           "get_program_counter", "get_arch_version", "trap", "init_soc_state", "get_sys_workspace",
           "set_sys_workspace", "get_hccl_context", "set_hccl_context", "data_cache_preload"]


@builtin
def get_block_idx() -> int:
    """Index of this core among the launch's cores of its type (AIV in MIX 1:2: [0, 2*numBlocks))."""


@builtin
def get_block_num() -> int:
    """The launch's ``numBlocks`` (``core_num``)."""


@builtin
def get_raw_block_num() -> int:
    """The hardware's block count (Ascend C's raw ``get_block_num()`` / ``block_num``, not ``GetBlockNum``).

    Outside a SuperKernel it equals :func:`get_block_num`.  Inside a
    SuperKernel's sub-kernel it is the SuperKernel's block num, while
    ``get_block_num`` keeps the sub-kernel's own (docs/superkernel.md): a
    sub-kernel must not size its work by it.
    """


@builtin
def get_sub_block_idx() -> int:
    """Index of this AIV inside its AI Core: 0 or 1 in MIX_AIC_1_2, else (and on an AIC) 0."""


@builtin
def get_sub_block_num() -> int:
    """2 on an AIV of a MIX_AIC_1_2 kernel, else 1."""


@builtin
def get_task_ratio() -> int:
    """AIVs (on an AIV) or AICs (on an AIC) per AI Core in this launch: as ``get_sub_block_num``."""


@builtin
def ascend_is_aic() -> bool:
    """True on a cube core (``ASCEND_IS_AIC``)."""


@builtin
def ascend_is_aiv() -> bool:
    """True on a vector core (``ASCEND_IS_AIV``)."""


@builtin
def get_data_block_size_in_bytes() -> int:
    """Size of one DataBlock: 32."""


@builtin
def get_system_cycle() -> int:
    """The system counter (``GetSystemCycle``): 50 MHz on Atlas A2/A3, so microseconds = cycles / 50.

    In a binary built with ``profile=True`` it reads the cost model's clock
    (docs/cost-model.md) at the platform's counter rate
    (``Platform.system_counter_mhz``), so differences are predicted device
    time.  Elsewhere it reads the host's monotonic clock at that rate: the
    difference of two reads is the time the emulation took between them.
    """


@builtin
def get_program_counter() -> int:
    """An int64 naming the point of the call (``GetProgramCounter``).

    There is no instruction address on the CPU: npuemu returns the id of the
    call's source location, distinct per call site and the same on every core.
    """


@builtin
def get_arch_version(core_version: int = 0) -> int:
    """The core's architecture version (``GetArchVersion``): 220 on Atlas A2/A3 (``dav-c220``).

    C++ writes it through the reference ``core_version``; Python cannot, so
    the argument is ignored and the version is returned.
    """


@builtin
def trap() -> None:
    """Stop the core with an exception (``Trap``): a :class:`npuemu.errors.TrapError` naming the line."""


@builtin
def init_soc_state() -> None:
    """Reset the core's vector state registers (``InitSocState``).

    npuemu restores the mask to all lanes in normal mode; the other state a
    kernel can set (pad value, deq scale, ...) is kept, as Ascend C documents
    this call for the mask and mode registers (assumed).
    """


@builtin
def set_sys_workspace(workspace: GlobalAddress) -> None:
    """Set the system workspace pointer (``SetSysWorkspace``) that library code reads back."""


@builtin
def get_sys_workspace() -> GlobalAddress:
    """The system workspace pointer (``GetSysWorkSpacePtr``) as a ``uint8`` GlobalAddress.

    Reading it before ``set_sys_workspace`` is a :class:`npuemu.errors.NullPointerError`.
    """


@builtin
def set_hccl_context(index: int, context: GlobalAddress) -> None:
    """Store HCCL communication context ``index`` (0 or 1) (``SetHcclContext``); npuemu only keeps the pointer."""


@builtin
def get_hccl_context(index: int) -> GlobalAddress:
    """HCCL communication context ``index`` as a ``uint8`` GlobalAddress (``GetHcclContext``)."""


@builtin
def data_cache_preload(src: GlobalTensor, cache_offset: int) -> None:
    """Prefetch GM data into the DCache (``DataCachePreload``): a hint; npuemu checks nothing and loads nothing."""
