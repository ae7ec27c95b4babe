"""Helpers shared by the compiled instruction implementations."""
from __future__ import annotations

import numpy as np
from numba import njit, types
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

from .. import errors
from .fault import Fault, Message, register

BLOCK = 32                     # bytes in a DataBlock

# common fault codes
F_ALIGN = 1
F_NEG_COUNT = 2
F_COUNT_OVER = 3
F_LOCAL_OOB = 4
F_NO_MEMORY = 5

register({
    F_ALIGN: (errors.AlignmentError,
              lambda a, b, c, env: Message(f"operand address {a} in {env.hardware(c)} is not {b}-byte aligned",
                                           buffer=env.hardware(c))),
    F_NEG_COUNT: (errors.ParamRangeError,
                  lambda a, b, c, env: f"element count {a} is negative"),
    F_COUNT_OVER: (errors.BoundsError,
                   lambda a, b, c, env: f"the instruction touches {a} elements of an operand that holds only {b}"),
    F_LOCAL_OOB: (errors.BoundsError,
                  lambda a, b, c, env: f"access to bytes [{a}, {a + b}) outside the tensor's {c} bytes"),
    F_NO_MEMORY: (errors.PositionError,
                  lambda a, b, c, env: f"this core type has no {env.hardware(a)}"),
})


@intrinsic
def _memmove(typingctx, dst, doff, src, soff, nbytes):
    """memmove between two byte arrays at byte offsets (no bounds checks: callers check)."""
    sig = types.void(dst, doff, src, soff, nbytes)

    def codegen(context, builder, signature, args):
        darr = context.make_array(signature.args[0])(context, builder, args[0])
        sarr = context.make_array(signature.args[2])(context, builder, args[2])
        i8p = cgutils.voidptr_t
        dptr = builder.gep(builder.bitcast(darr.data, i8p), [args[1]])
        sptr = builder.gep(builder.bitcast(sarr.data, i8p), [args[3]])
        cgutils.raw_memmove(builder, dptr, sptr, args[4], 1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def copy_items(typingctx, dst, doff, src, soff, n):
    """memmove of ``n`` items between two C-contiguous arrays of one dtype at flat item offsets (unchecked).

    A constant ``n`` becomes a few vector moves: the cube's 32-byte fractal
    rows copy this way about 5x faster than through slices.
    """
    if not (isinstance(dst, types.Array) and isinstance(src, types.Array) and dst.dtype == src.dtype
            and dst.layout == "C" and src.layout == "C"):
        return None
    sig = types.void(dst, doff, src, soff, n)

    def codegen(context, builder, signature, args):
        darr = context.make_array(signature.args[0])(context, builder, args[0])
        sarr = context.make_array(signature.args[2])(context, builder, args[2])
        item = context.get_constant(types.intp, context.get_abi_sizeof(context.get_data_type(dst.dtype)))
        doff_, soff_, n_ = (context.cast(builder, args[i], signature.args[i], types.intp) for i in (1, 3, 4))
        i8p = cgutils.voidptr_t
        dptr = builder.gep(builder.bitcast(darr.data, i8p), [builder.mul(doff_, item)])
        sptr = builder.gep(builder.bitcast(sarr.data, i8p), [builder.mul(soff_, item)])
        cgutils.raw_memmove(builder, dptr, sptr, builder.mul(n_, item), 1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def transpose_square(typingctx, dst, doff, dstride, src, soff, sstride, n, item):
    """Element (i, j) of the ``n x n`` block at byte ``soff`` of ``src`` to (j, i) of the block at byte
    ``doff`` of ``dst``, both row-major with rows ``sstride`` / ``dstride`` bytes apart (unchecked).
    ``n`` (a power of two) and ``item``, the element size in bytes, are literals; the arrays are
    C-contiguous, of any dtype.

    The block's rows are loaded as vectors and transposed in registers by
    log2(n) rounds of interleaving (row i of a round pairs rows i and i + n/2
    of the last), then stored: several times faster than element copies,
    and safe when source and destination overlap.
    """
    if not (isinstance(n, types.IntegerLiteral) and isinstance(item, types.IntegerLiteral)
            and isinstance(dst, types.Array) and isinstance(src, types.Array)
            and dst.layout == "C" and src.layout == "C"):
        return None
    size, nbytes = n.literal_value, item.literal_value
    if size < 2 or size & (size - 1) or nbytes not in (1, 2, 4, 8):
        return None
    sig = types.void(dst, doff, dstride, src, soff, sstride, n, item)

    def codegen(context, builder, signature, args):
        darr = context.make_array(signature.args[0])(context, builder, args[0])
        sarr = context.make_array(signature.args[3])(context, builder, args[3])
        doff_, dstride_, soff_, sstride_ = (context.cast(builder, args[i], signature.args[i], types.intp)
                                            for i in (1, 2, 4, 5))
        vec = ir.VectorType(ir.IntType(8 * nbytes), size)
        half = size // 2
        lo = ir.Constant(ir.VectorType(ir.IntType(32), size), [j for t in range(half) for j in (t, size + t)])
        hi = ir.Constant(ir.VectorType(ir.IntType(32), size),
                         [j for t in range(half) for j in (half + t, size + half + t)])
        i8p = cgutils.voidptr_t
        sbase = builder.gep(builder.bitcast(sarr.data, i8p), [soff_])
        dbase = builder.gep(builder.bitcast(darr.data, i8p), [doff_])

        def row(base, stride, i):
            at = builder.mul(stride, context.get_constant(types.intp, i))
            return builder.bitcast(builder.gep(base, [at]), vec.as_pointer())

        rows = [builder.load(row(sbase, sstride_, i), align=nbytes) for i in range(size)]
        for _ in range(size.bit_length() - 1):
            rows = [v for i in range(half) for v in (builder.shuffle_vector(rows[i], rows[i + half], lo),
                                                     builder.shuffle_vector(rows[i], rows[i + half], hi))]
        for i in range(size):
            builder.store(rows[i], row(dbase, dstride_, i), align=nbytes)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def memmove(dst, doff, src, soff, nbytes):
    """Copy ``nbytes`` from ``src[soff:]`` to ``dst[doff:]`` (overlap-safe)."""
    if nbytes > 0:
        _memmove(dst, np.int64(doff), src, np.int64(soff), np.int64(nbytes))


@njit(cache=True, inline="always")
def check_aligned(addr, align, hw, loc):
    if addr % align != 0:
        raise Fault(F_ALIGN, loc, addr, align, hw)


@njit(cache=True, inline="always")
def check_count(count, length, loc):
    """``count`` elements fit in an operand of ``length`` elements."""
    if count < 0:
        raise Fault(F_NEG_COUNT, loc, count, 0, 0)
    if count > length:
        raise Fault(F_COUNT_OVER, loc, count, length, 0)


# --------------------------------------------------------------------------- scalar type helpers (vector families)

from numba.extending import overload  # noqa: E402
from numba.np.numpy_support import as_dtype  # noqa: E402


def as_type_of(value, proto):
    """``value`` converted to the scalar type of ``proto``: integers wrap, floats round.

    Compiled code only (an ``overload``); lets a scalar helper narrow an
    intermediate result to its operands' width, e.g. the int16 sum inside
    ``add_relu`` before the ReLU.
    """
    raise NotImplementedError("as_type_of is only callable from compiled code")


@overload(as_type_of, inline="always")
def _as_type_of(value, proto):
    if not isinstance(proto, types.Number):
        return None
    ctor = as_dtype(proto).type

    def impl(value, proto):
        return ctor(value)

    return impl


# --------------------------------------------------------------------------- raw elements of any width


@njit(cache=True, inline="always")
def load_raw(mem, addr, size, signed):
    """The ``size``-byte element at ``mem[addr]`` (little endian) as int64, sign-extended when ``signed``.

    For instructions that take the element width at run time (one compiled
    function for every dtype); floats come back as their bit patterns.
    """
    if size == 1:
        v = np.uint64(mem[addr])
    elif size == 2:
        v = np.uint64(mem[addr]) | (np.uint64(mem[addr + 1]) << np.uint64(8))
    elif size == 4:
        v = (np.uint64(mem[addr]) | (np.uint64(mem[addr + 1]) << np.uint64(8))
             | (np.uint64(mem[addr + 2]) << np.uint64(16)) | (np.uint64(mem[addr + 3]) << np.uint64(24)))
    else:
        v = np.uint64(0)
        for b in range(8):
            v |= np.uint64(mem[addr + b]) << np.uint64(8 * b)
    if signed and size < 8:
        top = np.uint64(1) << np.uint64(8 * size - 1)
        v = (v ^ top) - top
    return np.int64(v)


@njit(cache=True, inline="always")
def store_raw(mem, addr, size, v):
    """Write the low ``size`` bytes of the int64 ``v`` at ``mem[addr]`` (little endian; integers wrap)."""
    u = np.uint64(v)
    for b in range(size):
        mem[addr + b] = np.uint8((u >> np.uint64(8 * b)) & np.uint64(0xFF))
