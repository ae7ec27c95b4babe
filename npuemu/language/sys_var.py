"""Core identity and system variables (``GetBlockIdx``, ``GetBlockNum``, ...)."""
from __future__ import annotations

from .builtin import builtin

__all__ = ["get_block_idx", "get_block_num", "get_sub_block_idx", "get_sub_block_num", "get_task_ratio",
           "ascend_is_aic", "ascend_is_aiv", "get_data_block_size_in_bytes"]


@builtin
def get_block_idx() -> int:
    """Index of this core among the launch's cores of its type (AIV in MIX 1:2: [0, 2*numBlocks))."""


@builtin
def get_block_num() -> int:
    """The launch's ``numBlocks`` (``core_num``)."""


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
