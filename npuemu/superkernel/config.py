"""A SuperKernel's kernel type and block dim from its sub-kernels' (spec §1.3).

Each sub-kernel needs ``aic`` and ``aiv`` cores by its kernel type and
block dim; the SuperKernel's type follows the mask of the sub-kernels'
types, and its block dim is the largest demand in the chosen type's units.
``debug-aic-num`` / ``debug-aiv-num`` override the result when either is set.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import SuperKernelError
from ..language.enums import KernelType
from ..runtime.cores import AIC, CoreSpec

K = KernelType
# the bit of each sub-kernel type in the mask (CANN's get_summary_type_and_options); the hard-sync mix
# types run like their 1:0 forms
MASK_BIT = {K.AIV_ONLY: 1, K.AIC_ONLY: 2, K.MIX_AIV_1_0: 4, K.MIX_AIV_HARD_SYNC: 4, K.MIX_AIC_1_0: 8,
            K.MIX_AIC_HARD_SYNC: 8, K.MIX_AIC_1_1: 16, K.MIX_AIC_1_2: 32}
AIV_TYPES = (K.AIV_ONLY, K.MIX_AIV_1_0, K.MIX_AIV_HARD_SYNC)
AIC_TYPES = (K.AIC_ONLY, K.MIX_AIC_1_0, K.MIX_AIC_HARD_SYNC)
MIX_TYPES = (K.MIX_AIC_1_1, K.MIX_AIC_1_2)


def demand(kernel_type: KernelType, block_dim: int) -> tuple[int, int]:
    """``(aic, aiv)`` cores a sub-kernel of ``kernel_type`` and ``block_dim`` blocks needs."""
    if kernel_type in AIV_TYPES:
        return 0, block_dim
    if kernel_type in AIC_TYPES:
        return block_dim, 0
    if kernel_type == K.MIX_AIC_1_1:
        return block_dim, block_dim
    return block_dim, 2 * block_dim


def launch_config(subs: Sequence[tuple[KernelType, int]], debug_aic_num: int = 0,
                  debug_aiv_num: int = 0) -> tuple[KernelType, int]:
    """The SuperKernel's ``(kernel type, block dim)`` for sub-kernels given as ``(kernel type, block dim)``."""
    if debug_aic_num > 0 or debug_aiv_num > 0:
        return debug_config(debug_aic_num, debug_aiv_num)
    mask = 0
    max_aic = max_aiv = 0
    for kt, bd in subs:
        mask |= MASK_BIT[K(kt)]
        aic, aiv = demand(K(kt), bd)
        max_aic, max_aiv = max(max_aic, aic), max(max_aiv, aiv)
    if mask in (0b1, 0b100, 0b101):
        return K.MIX_AIV_1_0, max_aiv
    if mask in (0b10, 0b1000, 0b1010):
        return K.MIX_AIC_1_0, max_aic
    if mask == 0b10000:
        return K.MIX_AIC_1_1, max_aic
    if max_aiv <= max_aic:
        return K.MIX_AIC_1_1, max_aic
    return K.MIX_AIC_1_2, max(max_aic, -(-max_aiv // 2))


def debug_config(aic: int, aiv: int) -> tuple[KernelType, int]:
    """``debug-aic-num`` / ``debug-aiv-num``: the forced type and block dim, or the invalid-ratio error."""
    if aiv == 0:
        return K.MIX_AIC_1_0, aic
    if aic == 0:
        return K.MIX_AIV_1_0, aiv
    if aic == aiv:
        return K.MIX_AIC_1_1, aic
    if aiv == 2 * aic:
        return K.MIX_AIC_1_2, aic
    raise SuperKernelError(f"debug-aic-num={aic} and debug-aiv-num={aiv}: the ratio {aic}:{aiv} is invalid; "
                           f"give n:0, 0:n, n:n or n:2n")


def ratio(sk_type: KernelType) -> int:
    """AIVs per AIC of a SuperKernel type (2 for 1:2, else 1)."""
    return 2 if sk_type == K.MIX_AIC_1_2 else 1


def runs_on_aiv(kernel_type: KernelType) -> bool:
    """Whether a sub-kernel type has a vector body."""
    return kernel_type in AIV_TYPES or kernel_type in MIX_TYPES


def runs_on_aic(kernel_type: KernelType) -> bool:
    """Whether a sub-kernel type has a cube body."""
    return kernel_type in AIC_TYPES or kernel_type in MIX_TYPES


def type_class(kernel_type: KernelType) -> int:
    """Early start's class code: AIC-type 0, AIV-type 1, MIX 2 (spec §1.5 B)."""
    if kernel_type in AIC_TYPES:
        return 0
    if kernel_type in AIV_TYPES:
        return 1
    return 2


def active(spec: CoreSpec, kernel_type: KernelType, block_dim: int, sk_ratio: int) -> bool:
    """Whether the SuperKernel core ``spec`` runs a sub-kernel of ``kernel_type`` and ``block_dim`` blocks.

    AIV-type sub-kernels are gated by ``GetBlockIdx() < bd``; AIC-type and MIX ones by ``get_block_idx()
    < bd``, the AI Core index, so in a 1:2 SuperKernel both AIVs of an active AI Core run a MIX body (§1.4).
    """
    if spec.core_type == AIC:
        return runs_on_aic(kernel_type) and spec.block_idx < block_dim
    if kernel_type in MIX_TYPES:
        return spec.block_idx // sk_ratio < block_dim
    return runs_on_aiv(kernel_type) and spec.block_idx < block_dim


__all__ = ["demand", "launch_config", "debug_config", "ratio", "runs_on_aiv", "runs_on_aic", "type_class", "active"]
