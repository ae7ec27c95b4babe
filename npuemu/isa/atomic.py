"""Atomic writes to GM: the store-atomic config register and the read-modify-write it turns stores into.

Hardware (Ascend C ``SetAtomicAdd<T>`` / ``SetAtomicMax<T>`` / ``SetAtomicMin<T>`` /
``SetAtomicType<T>`` / ``SetAtomicNone`` / ``SetStoreAtomicConfig`` /
``GetStoreAtomicConfig`` on Atlas A2/A3):

* Each core has one config register: an ``AtomicDtype`` (0 = none: plain
  stores; 1 float32, 2 float16, 3 int16, 4 int32, 5 int8, 6 bfloat16) and an
  operation.  While the type is not none, every data movement whose
  destination is GM (MTE3: ``data_copy`` / ``data_copy_pad`` UB -> GM; FIX:
  ``fixpipe`` L0C -> GM) combines each element it writes with the element
  already in GM instead of overwriting it.
* ``set_atomic_add<T>`` / ``max`` / ``min`` set operation and type,
  ``set_atomic_type<T>`` only the type, ``set_atomic_none`` clears both.
  ``get_store_atomic_config`` reads (type, operation); the documented
  operation codes are 0 = sum only, so max = 1 and min = 2 are **assumed**.

npuemu's rules (assumptions where the documents are silent):

* the data moved must be of the register's type: any other type (including
  an integer of the same width) faults naming the line, as the hardware would
  reinterpret the bits;
* float sums are rounded once to the element type, to nearest even (the sum
  is formed in float32, which for float16 and bfloat16 equals one rounding of
  the exact sum, since 24 >= 2p + 2 bits); overflow gives infinity;
* integer sums wrap around (two's complement) -- **assumed**;
* max/min: a NaN on either side gives NaN (the one in GM if both); equal
  values (+0 and -0 included) keep the value in GM -- **assumed**;
* bytes a movement does not write (DataCopyPad dummy bytes, strides) are not
  touched.

Cores of a launch run on a thread pool and truly in parallel (compiled code
releases the GIL, ``npuemu/runtime/scheduler.py``), so two cores' read-modify-
writes of one element could interleave and lose an update.  Every atomic
movement therefore runs under one spin lock per launch: a word of npuemu's
system GM region, shared by all cores of the launch, taken with an atomic
compare-and-swap (acquire) and released with an atomic store (release), so
the GM reads and writes inside cannot move out of it.  The lock is taken only
after every check of the movement has passed, and nothing inside can fault,
so a lock is never left held.  Cooperative launches (cores resumed one at a
time) never find it taken: a core yields only between instructions.  This
mirrors the CPU-debug library, which takes a process lock around atomic
DataCopy because its cores are processes.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .. import errors
from ..numerics.half import bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16
from . import cross_core as X
from . import state as S
from .fault import Fault, register
from .linkage import instruction

# AtomicDtype values (the register's type field)
NONE = 0
F32 = 1
F16 = 2
S16 = 3
S32 = 4
S8 = 5
BF16 = 6
TYPE_NAMES = ("none", "float32", "float16", "int16", "int32", "int8", "bfloat16")
TYPE_SIZE = (0, 4, 2, 2, 4, 1, 2)

# operations (the register's op field; only OP_SUM = 0 is documented)
OP_SUM = 0
OP_MAX = 1
OP_MIN = 2
OP_NAMES = ("add", "max", "min")

# the lock: one int64 word of the system region, between the cross-core layout's header words and its tables
LOCK_WORD = 7
assert X.RATIO < LOCK_WORD < X.ARRIVED0

F_MISMATCH = 1600


def _name(names: tuple[str, ...], i: int) -> str:
    return names[i] if 0 <= i < len(names) else f"code {i}"


register({
    F_MISMATCH: (errors.AtomicError,
                 lambda a, b, c, env: (
                     f"atomic {_name(OP_NAMES, c)} is set for {_name(TYPE_NAMES, a)} (set_atomic_*, "
                     f"set_atomic_type or set_store_atomic_config) but this movement writes "
                     f"{_name(TYPE_NAMES, b) if b > 0 else 'a type atomics do not support'} to GM: the atomic "
                     f"type must be the type of the data moved (set_atomic_type), or call set_atomic_none "
                     f"for plain stores")),
})


# ---------------------------------------------------------------------------- the lock


@intrinsic
def _cas(typingctx, addr, expected, new):
    """Compare-and-swap on the int64 at address ``addr`` (acquire); returns the old value."""
    if not all(isinstance(t, types.Integer) for t in (addr, expected, new)):
        return None
    sig = types.int64(types.int64, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        a, e, n = (context.cast(builder, v, t, types.int64) for v, t in zip(args, signature.args))
        ptr = builder.inttoptr(a, i64.as_pointer())
        res = builder.cmpxchg(ptr, e, n, "acquire", "monotonic")
        return builder.extract_value(res, 0)

    return sig, codegen


@intrinsic
def _store_release(typingctx, addr, value):
    """Store ``value`` into the int64 at address ``addr`` (release)."""
    if not (isinstance(addr, types.Integer) and isinstance(value, types.Integer)):
        return None
    sig = types.void(types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        a, v = (context.cast(builder, x, t, types.int64) for x, t in zip(args, signature.args))
        builder.store_atomic(v, builder.inttoptr(a, i64.as_pointer()), "release", 8)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def _lock(addr):
    while _cas(addr, 0, 1) != 0:
        pass


@njit(cache=True)
def _unlock(addr):
    _store_release(addr, 0)


# ---------------------------------------------------------------------------- the register


@instruction
def set_config(st, sysmem, atype, op, loc):
    """Write the register (``set_atomic_add/max/min<T>``, ``set_store_atomic_config``, ``set_atomic_none``)."""
    st[S.ATOMIC_TYPE] = atype
    st[S.ATOMIC_OP] = op
    st[S.ATOMIC_LOCK] = sysmem.ctypes.data + LOCK_WORD * 8


@instruction
def set_type(st, sysmem, atype, loc):
    """Write the register's type field only (``set_atomic_type<T>``)."""
    st[S.ATOMIC_TYPE] = atype
    st[S.ATOMIC_LOCK] = sysmem.ctypes.data + LOCK_WORD * 8


@instruction
def set_op(st, sysmem, op, loc):
    """Write the register's operation field only (``set_atomic_add()`` and friends without a type)."""
    st[S.ATOMIC_OP] = op
    st[S.ATOMIC_LOCK] = sysmem.ctypes.data + LOCK_WORD * 8


@instruction
def config(st, field):
    """``get_store_atomic_config``: the type (field 0) or the operation (field 1)."""
    return st[S.ATOMIC_TYPE] if field == 0 else st[S.ATOMIC_OP]


# ---------------------------------------------------------------------------- atomic movements


@njit(cache=True)
def active(st, akind, loc):
    """Whether a movement to GM of elements of AtomicDtype ``akind`` (-1: a type atomics do not take) is
    atomic: False for plain stores; True after checking the type (a fault if it is not the atomic type)."""
    t = st[S.ATOMIC_TYPE]
    if t == NONE:
        return False
    if t != akind:
        raise Fault(F_MISMATCH, loc, t, akind, st[S.ATOMIC_OP])
    return True


@njit(cache=True)
def lock(st):
    """Take the launch's atomic lock.  Nothing between this and :func:`end` may fault."""
    _lock(st[S.ATOMIC_LOCK])


@njit(cache=True)
def begin(st, akind, loc):
    """:func:`active`, taking the lock when it is (then call :func:`end` once the elements are combined)."""
    if not active(st, akind, loc):
        return False
    lock(st)
    return True


@njit(cache=True)
def end(st):
    _unlock(st[S.ATOMIC_LOCK])


@njit(cache=True)
def _load(a, at, size):
    bits = np.int64(0)
    for k in range(size):
        bits |= np.int64(a[at + k]) << (8 * k)
    return bits


@njit(cache=True)
def _put(a, at, bits, size):
    for k in range(size):
        a[at + k] = np.uint8((bits >> (8 * k)) & 0xFF)


@njit(cache=True)
def _pick(old, new, op):
    """max/min of two floats (op), keeping ``old`` on NaN in it, ties and +-0; True: take ``new``."""
    if old != old:
        return False
    if new != new:
        return True
    return new > old if op == OP_MAX else new < old


@njit(cache=True)
def _float(bits, t):
    if t == F32:
        return np.uint32(bits).view(np.float32)
    if t == F16:
        return f16_to_f32(np.uint16(bits))
    return bf16_to_f32(np.uint16(bits))


@njit(cache=True)
def _float_bits(x, t):
    if t == F32:
        return np.int64(np.float32(x).view(np.uint32))
    if t == F16:
        return np.int64(f32_to_f16(x))
    return np.int64(f32_to_bf16(x))


@njit(cache=True)
def _signed(bits, size):
    shift = 64 - 8 * size
    return (bits << shift) >> shift


@njit(cache=True)
def _one(old, new, t, op):
    """The element GM holds after combining ``new`` into ``old`` (both raw bits of type ``t``)."""
    if t == F32 or t == F16 or t == BF16:
        a, b = _float(old, t), _float(new, t)
        if op == OP_SUM:
            return _float_bits(np.float32(a + b), t)
        return new if _pick(a, b, op) else old
    size = TYPE_SIZE[t]
    a, b = _signed(old, size), _signed(new, size)
    if op == OP_SUM:
        return (a + b) & ((np.int64(1) << (8 * size)) - 1)
    if op == OP_MAX:
        return new if b > a else old
    return new if b < a else old


@njit(cache=True)
def combine(st, g, goff, src, soff, nbytes):
    """``nbytes`` of elements from ``src[soff:]`` combined into ``g[goff:]`` by the register's operation
    (between :func:`begin` and :func:`end`)."""
    t = st[S.ATOMIC_TYPE]
    op = st[S.ATOMIC_OP]
    size = TYPE_SIZE[t]
    for i in range(nbytes // size):
        at = goff + i * size
        _put(g, at, _one(_load(g, at, size), _load(src, soff + i * size, size), t, op), size)
