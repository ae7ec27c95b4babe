"""float16 and bfloat16 conversions for compiled instructions.

Both 16-bit types are stored as their bit patterns (``uint16``).  float16 goes
through LLVM's ``half`` type (``fpext``/``fptrunc``), which x86 lowers to F16C
instructions: round-to-nearest-even, denormals kept, NaN/Inf preserved.
bfloat16 is the top half of a float32, so widening is a shift and narrowing is
an integer round-to-nearest-even on the dropped 16 bits.

Every function is also callable from plain Python (debug tools, tests) through
its Numba dispatcher.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


@intrinsic
def _f16_bits_to_f32(typingctx, bits):
    if not isinstance(bits, types.Integer):
        return None
    sig = types.float32(bits)

    def codegen(context, builder, signature, args):
        v = builder.trunc(args[0], ir.IntType(16)) if bits.bitwidth > 16 else args[0]
        return builder.fpext(builder.bitcast(v, ir.HalfType()), ir.FloatType())

    return sig, codegen


@intrinsic
def _f32_to_f16_bits(typingctx, value):
    if not isinstance(value, types.Float):
        return None
    sig = types.uint16(value)

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))

    return sig, codegen


@njit(cache=True, inline="always")
def f16_to_f32(bits):
    """float16 bit pattern -> float32 (exact)."""
    return _f16_bits_to_f32(bits)


@njit(cache=True, inline="always")
def f32_to_f16(value):
    """float32 -> float16 bit pattern, round to nearest even (exact IEEE narrowing)."""
    return _f32_to_f16_bits(np.float32(value))


@njit(cache=True, inline="always")
def bf16_to_f32(bits):
    """bfloat16 bit pattern -> float32 (exact)."""
    return np.uint32(np.uint32(bits) << np.uint32(16)).view(np.float32)


@njit(cache=True, inline="always")
def f32_to_bf16(value):
    """float32 -> bfloat16 bit pattern, round to nearest even; NaN stays a quiet NaN."""
    u = np.float32(value).view(np.uint32)
    if (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000) and (u & np.uint32(0x007FFFFF)) != 0:
        return np.uint16((u >> np.uint32(16)) | np.uint32(0x0040))
    lsb = (u >> np.uint32(16)) & np.uint32(1)
    u = u + np.uint32(0x7FFF) + lsb
    return np.uint16(u >> np.uint32(16))
