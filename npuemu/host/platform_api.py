"""``PlatformAscendC``: the platform queries of CANN's host tiling API, over an npuemu profile.

A tiling function asks the platform how many cores and how much on-chip
memory it may use instead of hard-coding them, so the same tiling runs on
every SoC profile, including user-defined ones::

    pa = PlatformAscendC(ctx.platform)
    cores = pa.get_core_num_aiv()
    ub = pa.get_core_mem_size(CoreMemType.UB)
    block_dim = pa.calc_tsch_num_blocks(cores, pa.get_core_num_aic(), cores)

Method names are the snake_case spellings of ``platform_ascendc::PlatformAscendC``
(superkernel-binaries-tiling.md §3.3).  Results are the profile's values:
npuemu does not subtract the small UB reserve some CANN versions report.
"""
from __future__ import annotations

import enum
import logging
from typing import Any

import numpy as np

from ..errors import NpuemuError, UsageError
from ..platform import Platform, get_platform

log = logging.getLogger("npuemu.host")


def check_core_num(core_num: Any, error: type[NpuemuError] = UsageError) -> None:
    """Raise ``error`` unless ``core_num`` (the cap on the cores an op may use) is None or a positive int."""
    if core_num is None:
        return
    if isinstance(core_num, bool) or not isinstance(core_num, (int, np.integer)) or core_num < 1:
        raise error(f"core_num must be a positive int (the most cores the op may use) or None, got {core_num!r}")


class CoreMemType(enum.IntEnum):
    """Memory kinds of ``get_core_mem_size``, numbered as in the CANN documentation.

    (One published ``platform_ascendc.h`` swaps BT and FB; the documented order is used.)
    """

    L0_A = 0
    L0_B = 1
    L0_C = 2
    L1 = 3
    L2 = 4
    UB = 5
    HBM = 6
    FB = 7
    BT = 8
    RESERVED = 9


class SocVersion(enum.IntEnum):
    """SoC families as ``GetSocVersion`` reports them (A2 and A3 are both ASCEND910B)."""

    ASCEND910 = 0
    ASCEND910B = 1
    ASCEND310P = 2
    ASCEND310B = 3
    RESERVED_VERSION = 99999


class PlatformAscendC:
    """Platform queries for host tiling code.

    ``core_num`` caps the core counts reported (the bundled host functions'
    ``core_num=`` option reaches tiling functions this way).
    """

    def __init__(self, platform: Platform | str | None = None, core_num: int | None = None):
        self.platform = get_platform(platform)
        check_core_num(core_num)
        self.core_num = core_num

    def __repr__(self) -> str:
        cap = f", core_num={self.core_num}" if self.core_num is not None else ""
        return f"PlatformAscendC({self.platform.name!r}{cap})"

    def _cap(self, n: int) -> int:
        return n if self.core_num is None else min(n, self.core_num)

    def get_soc_version(self) -> SocVersion:
        return SocVersion.ASCEND910B

    def get_core_num(self) -> int:
        """Cores of the separated (A2/A3) architecture as CANN counts them: the vector cores."""
        return self.get_core_num_aiv()

    def get_core_num_aiv(self) -> int:
        """Vector cores (A2/A3 separated mode)."""
        return self._cap(self.platform.aiv_count)

    def get_core_num_aic(self) -> int:
        """Cube cores."""
        return self._cap(self.platform.aic_count)

    def get_core_mem_size(self, mem_type: CoreMemType) -> int:
        """Size in bytes of one memory (per core for the on-chip buffers, per die for L2 and HBM)."""
        p = self.platform
        sizes = {
            CoreMemType.L0_A: p.l0a_size, CoreMemType.L0_B: p.l0b_size, CoreMemType.L0_C: p.l0c_size,
            CoreMemType.L1: p.l1_size, CoreMemType.L2: p.l2_size, CoreMemType.UB: p.ub_size,
            CoreMemType.HBM: p.hbm_size, CoreMemType.FB: p.fixbuf_size, CoreMemType.BT: p.bt_size,
        }
        try:
            return sizes[CoreMemType(mem_type)]
        except (KeyError, ValueError):
            raise UsageError(f"get_core_mem_size: no size for memory type {mem_type!r}") from None

    def get_core_mem_bw(self, mem_type: CoreMemType) -> int:
        """Bandwidth in bytes per cycle per core; CANN answers for L2 (read rate) and HBM only."""
        if mem_type == CoreMemType.L2:
            return self.platform.l2_read_rate
        if mem_type == CoreMemType.HBM:
            return self.platform.ddr_rate
        raise UsageError(f"get_core_mem_bw supports CoreMemType.L2 and CoreMemType.HBM, got {mem_type!r}")

    def get_lib_api_workspace_size(self) -> int:
        """The system workspace a launch reserves before the user workspace (16 MiB on A2/A3)."""
        return self.platform.system_workspace_size

    @staticmethod
    def calc_tsch_num_blocks(slice_num: int, aic_num: int, aiv_num: int) -> int:
        """numBlocks for ``slice_num`` pieces of work on ``aic_num`` cube and ``aiv_num`` vector cores.

        Without cube cores, or with more cube than vector cores, every slice is a
        block.  Otherwise a block is one AI Core with ``aiv_num // aic_num``
        vector cores, so the slices are divided by that ratio.  With a 1:2 ratio
        and more blocks than AI Cores CANN logs an error and returns 0 (the
        caller must treat 0 as a failure); so does this function.
        """
        if aic_num == 0 or aiv_num == 0 or aic_num > aiv_num:
            return slice_num
        ratio = aiv_num // aic_num
        blocks = -(-slice_num // ratio)
        if ratio == 2 and blocks > aic_num:
            log.error("calc_tsch_num_blocks: %d slices need %d blocks but there are only %d AI cores",
                      slice_num, blocks, aic_num)
            return 0
        return blocks


class PlatformAscendCManager:
    """CANN's ``platform_ascendc::PlatformAscendCManager``: the platform of a SoC without a tiling context.

    ``get_instance()`` answers for the platform launches run on when they name
    none (``npuemu.platform.default_platform``: pyasc's ``config.set_platform``
    under ``npuemu.compat.pyasc``); ``get_instance("Ascend910B3")`` for a named
    profile, custom ones included.  pyasc's host tiling classes take the result.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        raise UsageError("PlatformAscendCManager is not constructed: call PlatformAscendCManager.get_instance()")

    @staticmethod
    def get_instance(soc_version: str | Platform | None = None) -> PlatformAscendC:
        """A :class:`PlatformAscendC` for ``soc_version`` (a profile name; None: the default platform)."""
        return PlatformAscendC(getattr(soc_version, "value", soc_version))
