"""Scalar conversions generated code uses for float16/bfloat16 element access."""
from __future__ import annotations

from ..numerics.half import bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16

__all__ = ["f16_to_f32", "f32_to_f16", "bf16_to_f32", "f32_to_bf16"]
