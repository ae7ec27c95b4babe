"""bfloat16 bit patterns and HF32 rounding for the cube tests (no ml_dtypes needed)."""
from __future__ import annotations

import numpy as np


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to bfloat16 (nearest, ties to even) as uint16 bit patterns."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns as float32 (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def hf32_ref(x: np.ndarray, away: bool) -> np.ndarray:
    """float32 ``x`` rounded to HF32 (11 mantissa bits): half away from zero, or to nearest even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.int64)
    if away:
        u = (u + 0x800) & 0xFFFFF000
    else:
        u = (u + 0x7FF + ((u >> 12) & 1)) & 0xFFFFF000
    return u.astype(np.uint32).view(np.float32)
