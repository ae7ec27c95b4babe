"""feed-sync-all: idle cores complement a sub-kernel's ``sync_all`` (spec §1.6).

A sub-kernel on fewer blocks than the SuperKernel that calls ``sync_all``
would wait for cores that never reach it.  With ``feed-sync-all=1`` CANN
gives the SuperKernel a GM workspace of one 64-byte config word per
sub-kernel and core type; block 0 of the sub-kernel bumps the word's
``syncIdx`` at every ``sync_all`` and sets ``isEnd`` when it returns, and
every idle core loops on the word, running the same hardware barrier once
per new ``syncIdx``, until ``isEnd``.  Word layout (uint64):
``syncIdx << 32 | syncType << 16 | isEnd << 8 | magic`` (magic 0; anything
else traps).
"""
from __future__ import annotations

import numpy as np

from ..language.enums import KernelType
from ..runtime.cores import AIC, AIV, CoreSpec
from .config import AIV_TYPES, MIX_TYPES

WORD_BYTES = 64


def workspace_bytes(n_subs: int, block_dim: int, kernel_type: KernelType, enabled: bool = True) -> int:
    """CANN's ``calc_workspace_size``: 0 when off; else ``block_dim * base`` with ``base`` doubled from 512
    while ``block_dim * base <= n_subs * 128`` (``block_dim`` doubled for a 1:2 SuperKernel)."""
    if not enabled:
        return 0
    bd = block_dim * (2 if kernel_type == KernelType.MIX_AIC_1_2 else 1)
    base = 512
    while bd * base <= n_subs * 128:
        base *= 2
    return bd * base


def config_word(sync_idx: int, sync_type: int, is_end: bool, magic: int = 0) -> int:
    """The config word ``syncIdx << 32 | syncType << 16 | isEnd << 8 | magic``."""
    return (sync_idx << 32) | (sync_type << 16) | (int(is_end) << 8) | magic


def decode(word: int) -> tuple[int, int, bool, int]:
    """``(syncIdx, syncType, isEnd, magic)`` of a config word."""
    return word >> 32, (word >> 16) & 0xFFFF, bool((word >> 8) & 0xFF), word & 0xFF


def needs_complement(sk_type: KernelType, sk_bd: int, sub_type: KernelType, sub_bd: int) -> bool:
    """§1.6: whether idle cores complement this sub-kernel's sync_all."""
    if sk_type == KernelType.MIX_AIC_1_2:
        if sub_type in AIV_TYPES:
            return sub_bd < 2 * sk_bd
        return sub_bd < sk_bd
    return sub_bd < sk_bd


class Workspace:
    """The config words: AIC words first, then AIV words, one 64-byte line per sub-kernel each."""

    def __init__(self, n_subs: int, block_dim: int, kernel_type: KernelType):
        self.n = n_subs
        size = max(workspace_bytes(n_subs, block_dim, kernel_type), 2 * n_subs * WORD_BYTES)
        self.bytes = np.zeros(size, np.uint8)       # zeroed at SuperKernel start, as CANN's entry does
        self.words = self.bytes.view(np.uint64)

    def index(self, k: int, core_type: int) -> int:
        return ((self.n if core_type == AIV else 0) + k) * WORD_BYTES // 8

    def publish(self, k: int, core_type: int, sync_idx: int, sync_type: int, is_end: bool) -> None:
        """Block 0 of sub-kernel ``k`` on ``core_type`` writes its word (then cleans the line)."""
        self.words[self.index(k, core_type)] = np.uint64(config_word(sync_idx, sync_type, is_end))

    def read(self, k: int, core_type: int) -> tuple[int, int, bool, int]:
        return decode(int(self.words[self.index(k, core_type)]))


def follows(spec: CoreSpec, sub_type: KernelType) -> int:
    """The core type whose word an idle core ``spec`` follows: its own, or, where the sub-kernel has no
    body of that type, the other one's (an AIC idle in an AIV sub-kernel follows the AIV word)."""
    if sub_type in MIX_TYPES:
        return spec.core_type
    return AIV if sub_type in AIV_TYPES else AIC


__all__ = ["workspace_bytes", "config_word", "decode", "needs_complement", "Workspace", "follows"]
