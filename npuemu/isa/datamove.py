"""Data movement instructions: ``data_copy`` and ``data_copy_pad`` between GM and on-chip memory.

GM is a tuple of byte arrays (one per region); on-chip memory is the core's
``lm`` byte array.  Every copy is checked against the tensors involved, the
GM region it touches, the hardware's alignment rules and the ranges of its
parameter fields before any byte moves.

Hardware rules (Ascend C ``DataCopy``/``DataCopyPad`` on Atlas A2/A3):

* ``data_copy(dst, src, count)`` moves ``count * sizeof(T)`` bytes rounded
  down to whole 32-byte blocks.
* ``data_copy(dst, src, DataCopyParams(block_count, block_len, src_stride,
  dst_stride))`` moves ``block_count`` blocks of ``block_len`` 32-byte units;
  the strides are *gaps* (end of one block to the start of the next) in
  32-byte units on both sides.  block_count is in [0, 4095], the other fields
  are uint16; a block_count or block_len of 0 is a no-op.
* ``data_copy_pad`` moves ``block_len`` *bytes* per block (a multiple of
  sizeof(T)).  GM -> UB: ``src_stride`` is in bytes (GM), ``dst_stride`` in
  32-byte blocks (UB); UB -> GM the other way round.  Each block occupies
  whole 32-byte blocks in UB: ``left_padding`` elements, the data,
  ``right_padding`` elements, then "dummy" bytes up to the next 32-byte
  boundary.  UB -> GM reads that footprint and writes only the data bytes.
* With the core's atomic mode on (``set_atomic_add`` and friends,
  :mod:`npuemu.isa.atomic`), UB -> GM copies combine each element with GM's.
* UB addresses are 32-byte aligned; GM needs only element (DataCopy) or byte
  (DataCopyPad) alignment, which GlobalTensor offsets always satisfy.

Padding contents (GM -> UB).  The hardware has one pad-value register.
``set_pad_value(v)`` writes it, and so does a copy with ``is_pad=True``
(``DataCopyPadExtParams.padding_value`` / ``DataCopyPadParams.padding_value``).
Then:

* ``left_padding == right_padding == 0``: the dummy bytes repeat the block's
  first element (documented hardware behaviour).
* otherwise the left and right padding and the dummy bytes hold the register's
  value, converted to the copied type (as ``SetPadValue<T>``); if the register
  was never written they are undefined on hardware, and npuemu fills them with
  0xFF bytes (NaN for floats, -1 for signed integers), the pattern of
  uninitialised on-chip memory, so a kernel that reads them shows it.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from ..numerics.half import f32_to_bf16, f32_to_f16
from . import atomic
from . import state as S
from .common import BLOCK, memmove
from .fault import Fault, Message, register

F_GM_OOB = 100
F_GM_SIZE = 101
F_LOCAL_SIZE = 102
F_UB_ALIGN = 103
F_NEG = 104
F_PARAM = 105
F_BLOCK_LEN_ALIGN = 106
F_PAD_WIDTH = 107
F_PAD_B64 = 108

_RID_SLOTS = 1024     # F_GM_SIZE packs the GM region and the tensor's first element into one argument

# names of the parameter fields F_PARAM reports (its third argument indexes this)
FIELD_BLOCK_COUNT = 0
FIELD_BLOCK_LEN = 1
FIELD_SRC_STRIDE = 2
FIELD_DST_STRIDE = 3
FIELD_LEFT_PAD = 4
FIELD_RIGHT_PAD = 5
FIELDS = ("block_count", "block_len", "src_stride", "dst_stride", "left_padding", "right_padding")

# which operand a local-size fault is about
DST = 0
SRC = 1

register({
    F_GM_OOB: (errors.BoundsError,
               lambda a, b, c, env: Message(f"the copy touches GM bytes [{a}, {a + b}) outside {env.region(c)}",
                                            buffer=env.region_name(c))),
    F_GM_SIZE: (errors.BoundsError,
                lambda a, b, c, env: Message(
                    f"the copy touches {a} elements of a GlobalTensor that holds {b}: it starts at element "
                    f"{c // _RID_SLOTS} of {env.region(c % _RID_SLOTS)} and holds its set_global_buffer size "
                    f"less the offset of any slice (g[k:]) taken of it", buffer=env.region_name(c % _RID_SLOTS))),
    F_LOCAL_SIZE: (errors.BoundsError,
                   lambda a, b, c, env: f"the copy needs {a} bytes of the {('destination', 'source')[c]} "
                                        f"local tensor, which holds only {b} bytes"),
    F_UB_ALIGN: (errors.AlignmentError,
                 lambda a, b, c, env: f"the {('destination', 'source')[c]} local tensor address {a} is not "
                                      f"{b}-byte aligned"),
    F_NEG: (errors.ParamRangeError, lambda a, b, c, env: f"negative element count {a}"),
    F_PARAM: (errors.ParamRangeError,
              lambda a, b, c, env: f"{FIELDS[c]} = {a} is outside its range [0, {b}]"),
    F_BLOCK_LEN_ALIGN: (errors.AlignmentError,
                        lambda a, b, c, env: f"data_copy_pad block_len {a} bytes is not a multiple of the "
                                             f"element size {b}"),
    F_PAD_WIDTH: (errors.ParamRangeError,
                  lambda a, b, c, env: f"{FIELDS[c]} = {a} elements of {b} bytes is wider than 32 bytes"),
    F_PAD_B64: (errors.ParamRangeError,
                lambda a, b, c, env: f"padding_value {a}: for 64-bit element types it must be 0"),
})

MAX_BLOCK_COUNT = 4095
U16 = 0xFFFF
U32 = 0xFFFFFFFF
MAX_PAD_BLOCK_LEN = 2097151     # DataCopyExtParams.block_len (bytes)
UNDEFINED_BYTE = 0xFF           # what npuemu writes where the hardware leaves garbage

# element kinds for converting the pad-value register to the copied type
K_INT = 0
K_F32 = 1
K_F64 = 2
K_F16 = 3
K_BF16 = 4


# ---------------------------------------------------------------------------- checks


@njit(cache=True, inline="always")
def check_gm(g, rid, off, nbytes, loc):
    """Bytes [off, off + nbytes) lie inside region ``rid`` (the array ``g``)."""
    if off < 0 or off + nbytes > g.size:
        raise Fault(F_GM_OOB, loc, off, nbytes, rid)


@njit(cache=True, inline="always")
def check_gm_size(size, nelem, rid, off, esize, loc):
    """``nelem`` elements fit in a GlobalTensor of ``size`` elements (-1: unbounded) that starts at byte
    ``off`` of region ``rid``; the fault says where the tensor starts, for sliced tensors (``g[k:]``)."""
    if size >= 0 and nelem > size:
        raise Fault(F_GM_SIZE, loc, nelem, size, (off // esize) * _RID_SLOTS + rid)


@njit(cache=True, inline="always")
def check_local(addr, nbytes_needed, nbytes_have, loc, which=DST):
    if addr % BLOCK != 0:
        raise Fault(F_UB_ALIGN, loc, addr, BLOCK, which)
    if nbytes_needed > nbytes_have:
        raise Fault(F_LOCAL_SIZE, loc, nbytes_needed, nbytes_have, which)


@njit(cache=True, inline="always")
def check_field(value, limit, field, loc):
    if value < 0 or value > limit:
        raise Fault(F_PARAM, loc, value, limit, field)


@njit(cache=True, inline="always")
def _blocks(nbytes):
    """``nbytes`` rounded up to whole 32-byte blocks."""
    return (nbytes + BLOCK - 1) // BLOCK * BLOCK


@njit(cache=True, inline="always")
def _extent(count, step, last):
    """Bytes spanned by ``count`` blocks ``step`` bytes apart, the last one ``last`` bytes long."""
    return (count - 1) * step + last


@njit(cache=True, inline="always")
def _check_strided(count, blen, sgap, dgap, loc):
    check_field(count, MAX_BLOCK_COUNT, FIELD_BLOCK_COUNT, loc)
    check_field(blen, U16, FIELD_BLOCK_LEN, loc)
    check_field(sgap, U16, FIELD_SRC_STRIDE, loc)
    check_field(dgap, U16, FIELD_DST_STRIDE, loc)


# ---------------------------------------------------------------------------- data_copy, count form


@njit(cache=True)
def _note_partial(st, count, esize, loc):
    """Count a copy whose bytes are not whole 32-byte blocks (the launch warns: PartialCopyWarning)."""
    rest = count * esize % BLOCK
    if rest != 0:
        if st[S.PARTIAL_COPIES] == 0:
            st[S.PARTIAL_LOC] = loc + 1
            st[S.PARTIAL_BYTES] = rest
        st[S.PARTIAL_COPIES] += 1


@instruction
def gm_to_local(st, lm, g, dst, dst_len, rid, off, size, count, esize, loc):
    """``data_copy(local, gm, count)``: the byte count rounds down to a whole 32-byte block."""
    if count < 0:
        raise Fault(F_NEG, loc, count, 0, 0)
    _note_partial(st, count, esize, loc)
    nbytes = count * esize // BLOCK * BLOCK
    check_local(dst, nbytes, dst_len * esize, loc)
    check_gm_size(size, nbytes // esize, rid, off, esize, loc)
    check_gm(g, rid, off, nbytes, loc)
    memmove(lm, dst, g, off, nbytes)


@instruction
def local_to_gm(st, g, lm, rid, off, size, src, src_len, count, esize, akind, loc):
    """``data_copy(gm, local, count)``: the byte count rounds down to a whole 32-byte block.

    ``akind``: the AtomicDtype of the elements (-1: none), for the core's atomic mode (isa/atomic.py).
    """
    if count < 0:
        raise Fault(F_NEG, loc, count, 0, 0)
    _note_partial(st, count, esize, loc)
    nbytes = count * esize // BLOCK * BLOCK
    check_local(src, nbytes, src_len * esize, loc, SRC)
    check_gm_size(size, nbytes // esize, rid, off, esize, loc)
    check_gm(g, rid, off, nbytes, loc)
    if atomic.begin(st, akind, loc):
        atomic.combine(st, g, off, lm, src, nbytes)
        atomic.end(st)
    else:
        memmove(g, off, lm, src, nbytes)


@instruction
def local_to_local(st, lm, dst, dst_len, src, src_len, count, esize, loc):
    """``data_copy(local, local, count)`` (UB to UB)."""
    if count < 0:
        raise Fault(F_NEG, loc, count, 0, 0)
    _note_partial(st, count, esize, loc)
    nbytes = count * esize // BLOCK * BLOCK
    check_local(dst, nbytes, dst_len * esize, loc)
    check_local(src, nbytes, src_len * esize, loc, SRC)
    memmove(lm, dst, lm, src, nbytes)


# ---------------------------------------------------------------------------- data_copy, DataCopyParams form


@instruction
def gm_to_local_strided(lm, g, dst, dst_len, rid, off, size, count, blen, sgap, dgap, esize, loc):
    """``data_copy(local, gm, DataCopyParams(count, blen, sgap, dgap))``; all in 32-byte units."""
    _check_strided(count, blen, sgap, dgap, loc)
    if count == 0 or blen == 0:
        return
    nb = blen * BLOCK
    sstep = (blen + sgap) * BLOCK
    dstep = (blen + dgap) * BLOCK
    src_extent = _extent(count, sstep, nb)
    check_local(dst, _extent(count, dstep, nb), dst_len * esize, loc)
    check_gm_size(size, src_extent // esize, rid, off, esize, loc)
    check_gm(g, rid, off, src_extent, loc)
    for i in range(count):
        memmove(lm, dst + i * dstep, g, off + i * sstep, nb)


@instruction
def local_to_gm_strided(st, g, lm, rid, off, size, src, src_len, count, blen, sgap, dgap, esize, akind, loc):
    """``data_copy(gm, local, DataCopyParams(count, blen, sgap, dgap))``; all in 32-byte units."""
    _check_strided(count, blen, sgap, dgap, loc)
    if count == 0 or blen == 0:
        return
    nb = blen * BLOCK
    sstep = (blen + sgap) * BLOCK
    dstep = (blen + dgap) * BLOCK
    dst_extent = _extent(count, dstep, nb)
    check_local(src, _extent(count, sstep, nb), src_len * esize, loc, SRC)
    check_gm_size(size, dst_extent // esize, rid, off, esize, loc)
    check_gm(g, rid, off, dst_extent, loc)
    if atomic.begin(st, akind, loc):
        for i in range(count):
            atomic.combine(st, g, off + i * dstep, lm, src + i * sstep, nb)
        atomic.end(st)
        return
    for i in range(count):
        memmove(g, off + i * dstep, lm, src + i * sstep, nb)


@instruction
def local_to_local_strided(lm, dst, dst_len, src, src_len, count, blen, sgap, dgap, esize, loc):
    """``data_copy(local, local, DataCopyParams(...))`` (UB to UB); all in 32-byte units."""
    _check_strided(count, blen, sgap, dgap, loc)
    if count == 0 or blen == 0:
        return
    nb = blen * BLOCK
    sstep = (blen + sgap) * BLOCK
    dstep = (blen + dgap) * BLOCK
    check_local(dst, _extent(count, dstep, nb), dst_len * esize, loc)
    check_local(src, _extent(count, sstep, nb), src_len * esize, loc, SRC)
    for i in range(count):
        memmove(lm, dst + i * dstep, lm, src + i * sstep, nb)


# ---------------------------------------------------------------------------- the pad-value register


@instruction
def set_pad_int(st, value, esize, loc):
    """Write an integer into the pad-value register (``set_pad_value`` / ``is_pad=True``)."""
    if esize == 8 and value != 0:
        raise Fault(F_PAD_B64, loc, value, 0, 0)
    st[S.PAD_VALUE] = value
    st[S.PAD_VALUE_SET] = S.PAD_INT


@instruction
def set_pad_float(st, value, esize, loc):
    """Write a float into the pad-value register (kept as float32 bits)."""
    if esize == 8 and value != 0:
        raise Fault(F_PAD_B64, loc, np.int64(value), 0, 0)
    st[S.PAD_VALUE] = np.int64(np.float32(value).view(np.int32))
    st[S.PAD_VALUE_SET] = S.PAD_FLOAT


@instruction
def set_pad_raw(st, bits, esize, loc):
    """Write raw element bits into the pad-value register (legacy ``DataCopyPadParams``)."""
    if esize == 8 and bits != 0:
        raise Fault(F_PAD_B64, loc, bits, 0, 0)
    st[S.PAD_VALUE] = bits
    st[S.PAD_VALUE_SET] = S.PAD_RAW


@njit(cache=True, inline="always")
def _float_to_int(x):
    """C-style truncation, saturating instead of undefined for NaN and huge values."""
    if x != x:
        return np.int64(0)
    if x >= 9.2e18:
        return np.int64(0x7FFFFFFFFFFFFFFF)
    if x <= -9.2e18:
        return np.int64(-0x7FFFFFFFFFFFFFFF - 1)
    return np.int64(x)


@njit(cache=True, inline="always")
def _float_bits(x, kind):
    """Bits of the float ``x`` as an element of float ``kind``."""
    if kind == K_F32:
        return np.int64(np.float32(x).view(np.int32))
    if kind == K_F64:
        return np.float64(x).view(np.int64)
    if kind == K_F16:
        return np.int64(f32_to_f16(np.float32(x)))
    return np.int64(f32_to_bf16(np.float32(x)))


@instruction
def pad_bits(mode, raw, kind):
    """The pad register's value as the bits of one element of ``kind`` (low bytes used)."""
    if mode == S.PAD_RAW or (mode == S.PAD_INT and kind == K_INT):
        return raw
    if mode == S.PAD_INT:
        return _float_bits(np.float64(raw), kind)
    value = np.float64(np.int32(raw).view(np.float32))
    if kind == K_INT:
        return _float_to_int(value)
    return _float_bits(value, kind)


@njit(cache=True, inline="always")
def _fill(lm, start, nbytes, bits, esize):
    """Fill ``lm[start:start+nbytes]`` with copies of an ``esize``-byte element."""
    for k in range(nbytes):
        lm[start + k] = (bits >> (8 * (k % esize))) & 0xFF


@njit(cache=True, inline="always")
def _fill_pad(lm, start, nbytes, defined, bits, esize):
    if defined:
        _fill(lm, start, nbytes, bits, esize)
    else:
        lm[start:start + nbytes] = UNDEFINED_BYTE


@njit(cache=True, inline="always")
def _element_bits(lm, addr, esize):
    bits = np.int64(0)
    for k in range(esize):
        bits |= np.int64(lm[addr + k]) << (8 * k)
    return bits


# ---------------------------------------------------------------------------- data_copy_pad


@njit(cache=True, inline="always")
def _check_pad_geometry(count, blen, sgap, dgap, legacy, esize, loc):
    check_field(count, MAX_BLOCK_COUNT, FIELD_BLOCK_COUNT, loc)
    if legacy:   # DataCopyParams: every field is uint16
        check_field(blen, U16, FIELD_BLOCK_LEN, loc)
        check_field(sgap, U16, FIELD_SRC_STRIDE, loc)
        check_field(dgap, U16, FIELD_DST_STRIDE, loc)
    else:
        check_field(blen, MAX_PAD_BLOCK_LEN, FIELD_BLOCK_LEN, loc)
        check_field(sgap, U32, FIELD_SRC_STRIDE, loc)
        check_field(dgap, U32, FIELD_DST_STRIDE, loc)
    if blen % esize != 0:
        raise Fault(F_BLOCK_LEN_ALIGN, loc, blen, esize, 0)


@njit(cache=True, inline="always")
def _check_padding(left, right, esize, loc):
    check_field(left, 0xFF, FIELD_LEFT_PAD, loc)
    check_field(right, 0xFF, FIELD_RIGHT_PAD, loc)
    if left * esize > BLOCK:
        raise Fault(F_PAD_WIDTH, loc, left, esize, FIELD_LEFT_PAD)
    if right * esize > BLOCK:
        raise Fault(F_PAD_WIDTH, loc, right, esize, FIELD_RIGHT_PAD)


@instruction
def gm_to_ub_pad(lm, st, g, dst, dst_len, rid, off, size, count, blen, sgap, dgap, left, right,
                 legacy, esize, kind, loc):
    """``data_copy_pad(ub, gm, params, pad_params)``: ``blen`` bytes per block, ``sgap`` bytes
    between GM blocks, ``dgap`` 32-byte blocks between UB blocks, paddings in elements."""
    _check_pad_geometry(count, blen, sgap, dgap, legacy, esize, loc)
    _check_padding(left, right, esize, loc)
    if count == 0 or blen == 0:
        return
    lbytes = left * esize
    footprint = _blocks(lbytes + blen + right * esize)
    dstep = footprint + dgap * BLOCK
    sstep = blen + sgap
    src_extent = _extent(count, sstep, blen)
    # dummy bytes may run to the end of the tensor's last 32-byte block
    check_local(dst, _extent(count, dstep, footprint), _blocks(dst_len * esize), loc)
    check_gm_size(size, (src_extent + esize - 1) // esize, rid, off, esize, loc)
    check_gm(g, rid, off, src_extent, loc)
    mode = st[S.PAD_VALUE_SET]
    defined = mode != S.PAD_UNSET
    bits = pad_bits(mode, st[S.PAD_VALUE], kind) if defined else np.int64(0)
    for i in range(count):
        ub = dst + i * dstep
        data = ub + lbytes
        memmove(lm, data, g, off + i * sstep, blen)
        tail = data + blen
        if left == 0 and right == 0:
            _fill(lm, tail, ub + footprint - tail, _element_bits(lm, data, esize), esize)
        else:
            _fill_pad(lm, ub, lbytes, defined, bits, esize)
            _fill_pad(lm, tail, ub + footprint - tail, defined, bits, esize)


@instruction
def ub_to_gm_pad(st, g, lm, rid, off, size, src, src_len, count, blen, sgap, dgap, legacy, esize, akind, loc):
    """``data_copy_pad(gm, ub, params)``: ``blen`` bytes per block, ``sgap`` 32-byte blocks between
    UB blocks, ``dgap`` bytes between GM blocks."""
    _check_pad_geometry(count, blen, sgap, dgap, legacy, esize, loc)
    if count == 0 or blen == 0:
        return
    footprint = _blocks(blen)
    sstep = footprint + sgap * BLOCK
    dstep = blen + dgap
    dst_extent = _extent(count, dstep, blen)
    check_local(src, _extent(count, sstep, footprint), _blocks(src_len * esize), loc, SRC)
    check_gm_size(size, (dst_extent + esize - 1) // esize, rid, off, esize, loc)
    check_gm(g, rid, off, dst_extent, loc)
    if atomic.begin(st, akind, loc):
        for i in range(count):
            atomic.combine(st, g, off + i * dstep, lm, src + i * sstep, blen)
        atomic.end(st)
        return
    for i in range(count):
        memmove(g, off + i * dstep, lm, src + i * sstep, blen)
