"""``printf`` and ``dump_tensor``: records in the core's log buffer, printed by the host after the launch.

On hardware each core owns a 1 MiB dump buffer in GM; ``AscendC::printf`` and
``DumpTensor`` append to it and the runtime prints every core's records when
the kernel finishes.  A record that does not fit is dropped (the buffer never
wraps).  npuemu keeps the same buffer as an int64 array per core (``log``,
``LOG_WORDS`` words) with the write cursor in ``st[LOG_CUR]``; every dropped
record increments ``st[LOG_LOST]``.

A record is three header words ``[kind, site, n]`` and ``n`` payload words.
``site`` indexes a per-kernel table the lowering builds (format strings and
argument kinds for printf, dtype/position/shape for dump_tensor), so nothing
but numbers is stored at run time:

* printf: one word per argument (integers as int64, floats as float64 bits);
* dump_tensor: ``desc``, ``dump_size``, the tensor's address, then the
  elements' bytes packed into words.

The host side is ``npuemu.runtime.debuglog``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import state as S
from .common import BLOCK, memmove
from .fault import Fault, Message, register

REC_PRINTF = 1
REC_DUMP = 2
HEADER_WORDS = 3
DUMP_FIELDS = 3          # desc, dump_size, address

F_DUMP_SIZE = 800
F_DUMP_LOCAL = 801
F_DUMP_ALIGN = 802
F_DUMP_GM_SIZE = 803
F_DUMP_GM_OOB = 804

register({
    F_DUMP_SIZE: (errors.ParamRangeError,
                  lambda a, b, c, env: f"dump_tensor dump_size {a} is outside [0, {b}]"),
    F_DUMP_LOCAL: (errors.BoundsError,
                   lambda a, b, c, env: f"dump_tensor of {a} elements from a local tensor of {b} elements"),
    F_DUMP_ALIGN: (errors.AlignmentError,
                   lambda a, b, c, env: f"dump_tensor: local tensor address {a} is not {b}-byte aligned"),
    F_DUMP_GM_SIZE: (errors.BoundsError,
                     lambda a, b, c, env: f"dump_tensor of {a} elements from a GlobalTensor that holds {b} "
                                          f"(its set_global_buffer size less the offset of any slice taken)"),
    F_DUMP_GM_OOB: (errors.BoundsError,
                    lambda a, b, c, env: Message(f"dump_tensor reads GM bytes [{a}, {a + b}) outside "
                                                 f"{env.region(c)}", buffer=env.region_name(c))),
})

U32 = 0xFFFFFFFF
GM_ADDRESS_STRIDE = 1 << 32      # npuemu's virtual GM: argument k starts at (k + 1) * 2**32


@njit(cache=True)
def _reserve(st, log, kind, site, n):
    """Start a record of ``n`` payload words; the index of its first payload word, or -1 if dropped."""
    cur = st[S.LOG_CUR]
    if cur + HEADER_WORDS + n > log.size:
        st[S.LOG_LOST] += 1
        return -1
    log[cur] = kind
    log[cur + 1] = site
    log[cur + 2] = n
    st[S.LOG_CUR] = cur + HEADER_WORDS + n
    return cur + HEADER_WORDS


@instruction
def printf_begin(st, log, site, nargs, loc):
    """Reserve a printf record for ``nargs`` arguments (written with ``put_int``/``put_float``)."""
    return _reserve(st, log, REC_PRINTF, site, nargs)


@instruction
def put_int(log, p, i, value):
    if p >= 0:
        log[p + i] = value


@instruction
def put_float(log, p, i, value):
    if p >= 0:
        log[p + i] = np.float64(value).view(np.int64)


@njit(cache=True)
def _dump_words(n, esize):
    return DUMP_FIELDS + (n * esize + 7) // 8


@njit(cache=True)
def _check_size(n, loc):
    if n < 0 or n > U32:
        raise Fault(F_DUMP_SIZE, loc, n, U32, 0)


@njit(cache=True)
def _write_dump(st, log, site, desc, n, address, esize, src, src_off):
    p = _reserve(st, log, REC_DUMP, site, _dump_words(n, esize))
    if p < 0:
        return
    log[p] = desc & U32
    log[p + 1] = n
    log[p + 2] = address
    memmove(log, (p + DUMP_FIELDS) * 8, src, src_off, n * esize)


@instruction
def dump_local(st, log, lm, addr, length, hw, desc, n, site, esize, loc):
    """``dump_tensor(local, desc, n)``: the address printed is the offset inside the tensor's memory."""
    _check_size(n, loc)
    if addr % BLOCK != 0:
        raise Fault(F_DUMP_ALIGN, loc, addr - st[S.SEG_BASE + hw], BLOCK, 0)
    if n > length:
        raise Fault(F_DUMP_LOCAL, loc, n, length, 0)
    _write_dump(st, log, site, desc, n, addr - st[S.SEG_BASE + hw], esize, lm, addr)


@instruction
def dump_gm(st, log, g, rid, off, size, desc, n, site, esize, loc):
    """``dump_tensor(global, desc, n)``: the address printed is npuemu's virtual GM address."""
    _check_size(n, loc)
    if size >= 0 and n > size:
        raise Fault(F_DUMP_GM_SIZE, loc, n, size, 0)
    nbytes = n * esize
    if off < 0 or off + nbytes > g.size:
        raise Fault(F_DUMP_GM_OOB, loc, off, nbytes, rid)
    _write_dump(st, log, site, desc, n, (rid + 1) * GM_ADDRESS_STRIDE + off, esize, g, off)
