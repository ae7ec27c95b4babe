"""Cache control: ``DataCacheCleanAndInvalid``, ``ICachePreLoad``, ``GetICachePreloadStatus``.

Signatures follow pyasc (``asc.language.basic.data_cache``).  Scalar GM
accesses go through each core's DCache (see ``npuemu/isa/dcache.py`` and
``docs/dcache.md``); ``data_cache_clean_and_invalid`` is how a kernel makes
its scalar writes visible to DMA and to other cores, and other cores' and
DMA's writes visible to its scalar reads.  The instruction cache is not
modelled, so its two calls only keep pyasc kernels running.
"""
from __future__ import annotations

from typing import Any, overload

from .builtin import builtin
from .core import GlobalTensor
from .enums import CacheLine, DcciDst

__all__ = ["data_cache_clean_and_invalid", "icache_preload", "get_icache_preload_status"]


@overload
def data_cache_clean_and_invalid(entire_type: CacheLine, dst: GlobalTensor, dcci_dst: DcciDst | None = None) -> None: ...
@overload
def data_cache_clean_and_invalid(entire_type: CacheLine, dcci_dst: DcciDst, dst: GlobalTensor) -> None: ...
@builtin
def data_cache_clean_and_invalid(entire_type: CacheLine, *args: Any, **kwargs: Any) -> None:
    """Write back dirty DCache lines and invalidate them (``DataCacheCleanAndInvalid<T, entireType, dcciDst>``).

    ``entire_type`` is ``CacheLine.SINGLE_CACHE_LINE`` (the line holding the
    first element of the GlobalTensor ``dst``; from an address that is not
    64-byte aligned only the rest of that line is covered, so the next
    element of a range needs its own call) or ``CacheLine.ENTIRE_DATA_CACHE``
    (every line; ``dst`` is ignored).  ``dcci_dst`` may be omitted,
    ``DcciDst.CACHELINE_OUT`` (coherence with GM) or ``DcciDst.CACHELINE_ALL``
    (the same); ``CACHELINE_UB`` and ``CACHELINE_ATOMIC`` are reserved on
    A2/A3.  Like pyasc, also accepts ``(entire_type, dcci_dst, dst)``
    positionally.
    """


@builtin
def icache_preload(pre_fetch_len: int) -> None:
    """Prefetch instructions into the ICache (``ICachePreLoad``); no effect in the emulator."""


@builtin
def get_icache_preload_status() -> int:
    """The ICache preload state (``GetICachePreloadStatus``): 0 idle, 1 busy; always 0 here."""
