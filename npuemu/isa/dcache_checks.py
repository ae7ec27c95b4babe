"""The DCache hazards of check level ``full``: stale reads, unflushed writes, lost writes, DMA against dirty lines.

Nothing keeps the cores' DCaches coherent with each other or with DMA
(:mod:`npuemu.isa.dcache`).  At ``full`` each cached line also keeps the
bytes it was filled with and which of its bytes this core has written
(:mod:`npuemu.isa.dcache_lines`), so the hazards become
:class:`npuemu.errors.DCacheError` naming the scalar access that caused them:
a read hit on bytes that changed in GM since the fill (stale read), a read of
bytes another core holds dirty (unflushed write), a write-back over GM bytes
that changed since the fill (lost write) and, through :func:`check_dma`, a DMA
that reads bytes dirty in some DCache or writes into a dirty line.  The
model calls the hooks below; the generated code calls :func:`check_dma`
before every DMA (``isa/checks.py``).
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import gm_shadow, hb
from . import state as S
from .dcache_lines import (G_LINE, G_SETS, G_WAYS, GLOBAL_WORDS, H_DIRTY, H_WHO, L_DIRTY, L_FLOC, L_LINE, L_RID,
                           L_WLOC, core_words, find, layout, line_word, span, store_line)
from .common import memmove
from .fault import Fault, Message, register

# where a write-back happens (the ``c`` of F_LOST_WRITE): a loc id >= 0 is a
# data_cache_clean_and_invalid; these are the others
SITE_KERNEL_END = -1
EVICT = -2             # SITE = EVICT - loc of the access that evicted the line

# fault codes, in the scalar-access range of isa/fault.py (tensor.py has 1000-1049)
F_STALE_READ = 1050
F_UNFLUSHED_READ = 1051
F_LOST_WRITE = 1052
F_DMA_READ_DIRTY = 1053
F_DMA_WRITE_DIRTY = 1054

_RID_BITS = 24


def _holder(a: int) -> str:
    """Name the core packed into a fault argument by :func:`_pack_holder`."""
    h = a >> _RID_BITS
    mine, who = (h >> 32) & 1, (h & 0xFFFFFFFF) - 1
    if who < 0:
        return "a core"
    label = f"{'AIC' if who >> 16 else 'AIV'} {who & 0xFFFF}"
    return f"this core ({label})" if mine else label


def _region(a: int, env: Any) -> str:
    return env.region(a & ((1 << _RID_BITS) - 1))


def _buffer(a: int, env: Any) -> str:
    """The name of the GM argument in a fault argument packed by :func:`_pack_holder` (the fault's buffer)."""
    return env.region_name(a & ((1 << _RID_BITS) - 1))


def _site(c: int, env: Any) -> str:
    if c == SITE_KERNEL_END:
        return "by the whole-DCache flush at the end of the kernel"
    if c <= EVICT:
        return f"on eviction by {env.source(EVICT - c)}"
    return f"by {env.source(c)}"


register({
    F_STALE_READ: (errors.DCacheError, lambda a, b, c, env: Message(
        f"stale read: scalar read of byte {b} of {_region(a, env)} hits a DCache line cached by "
        f"{env.source(c)}, and GM has changed there since (a DMA or another core wrote it), so the read "
        f"returns the old cached value; call data_cache_clean_and_invalid on the line before reading data "
        f"that DMA or other cores write", "S", _buffer(a, env))),
    F_UNFLUSHED_READ: (errors.DCacheError, lambda a, b, c, env: Message(
        f"stale read: scalar read of byte {b} of {_region(a, env)}, which {_holder(a)} holds dirty in its "
        f"DCache (written by {env.source(c)}); that write has not reached GM, so the read returns the old "
        f"value; the writer must call data_cache_clean_and_invalid after its set_value", "S",
        _buffer(a, env))),
    F_LOST_WRITE: (errors.DCacheError, lambda a, b, c, env: Message(
        f"lost write: the DCache line holding byte {b} of {_region(a, env)}, dirtied by this scalar write, "
        f"is written back {_site(c, env)} over GM data that changed after this core cached the line "
        f"(another core's write-back or a DMA); a write-back stores the whole line, so that data is lost. "
        f"Keep data that different cores or DMA write on separate 64-byte lines, or clean the line with "
        f"data_cache_clean_and_invalid before the others write it", "S", _buffer(a, env))),
    F_DMA_READ_DIRTY: (errors.DCacheError, lambda a, b, c, env: Message(
        f"stale DMA read: DMA reads byte {b} of {_region(a, env)}, which {_holder(a)} holds dirty in its "
        f"DCache (written by {env.source(c)}); DMA bypasses the DCache and reads the old value: call "
        f"data_cache_clean_and_invalid after the set_value, before the data_copy", buffer=_buffer(a, env))),
    F_DMA_WRITE_DIRTY: (errors.DCacheError, lambda a, b, c, env: Message(
        f"lost write: DMA writes byte {b} of {_region(a, env)}, inside a DCache line {_holder(a)} holds "
        f"dirty (written by {env.source(c)}); the line's later write-back stores the whole line over the "
        f"DMA's data: call data_cache_clean_and_invalid after the set_value, before the data_copy",
        buffer=_buffer(a, env))),
})


@njit(cache=True)
def _pack_holder(rid, who, mine):
    """Region id, the holding core's ``H_WHO`` and whether it is the faulting core, in one fault argument."""
    return rid + (((np.int64(mine) << 32) | who) << _RID_BITS)


# --------------------------------------------------------------------------- the model's hooks at level full
# The model is built twice (``dcache._make_model``): with these hooks for binaries built for check
# level full, and with no-ops for the others, which then neither run nor link (nor compile) any
# checking code.  ``chk`` is what the checks need besides the cache: the race checker's
# ``(sh, gsh)`` at full, ``()`` below.


@njit(cache=True)
def _check_stale(gm, dc, dcw, base, w, rid, at, nbytes, lsize, fill, loc):
    """A read hit: GM must still hold, at the bytes read, what the line was filled with."""
    f = fill + w * lsize + at % lsize
    region = gm[rid]
    for k in range(nbytes):
        if dc[f + k] != region[at + k]:
            raise Fault(F_STALE_READ, loc, rid, at, dcw[line_word(base, w) + L_FLOC])


@njit(cache=True)
def _check_unflushed(st, dc, dcw, rid, at, nbytes, line, s, nsets, ways, lsize, loc):
    """A read: no other core may hold the bytes read written but not yet written back."""
    me = st[S.CORE_SLOT]
    ncores = (dcw.size - GLOBAL_WORDS) // core_words(nsets, ways, lsize)
    for o in range(ncores):
        if o == me:
            continue
        base, data, fill, mask = layout(o, nsets, ways, lsize)
        if dcw[base + H_DIRTY] == 0:
            continue
        w = find(dcw, base, s, ways, rid, line)
        if w < 0 or dcw[line_word(base, w) + L_DIRTY] == 0:
            continue
        q = mask + w * lsize + at % lsize
        for k in range(nbytes):
            if dc[q + k]:
                raise Fault(F_UNFLUSHED_READ, loc, _pack_holder(rid, dcw[base + H_WHO], False), at + k,
                            dcw[line_word(base, w) + L_WLOC])


@njit(cache=True)
def check_read(st, gm, dc, dcw, base, w, hit, rid, at, nbytes, line, s, nsets, ways, lsize, fill, loc):
    if hit:
        _check_stale(gm, dc, dcw, base, w, rid, at, nbytes, lsize, fill, loc)
    _check_unflushed(st, dc, dcw, rid, at, nbytes, line, s, nsets, ways, lsize, loc)


@njit(cache=True)
def checked_write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, site):
    """Write back dirty line ``w`` after checking that GM still holds what the line was filled with
    (else another core's or a DMA's data would be lost)."""
    sh, gsh = chk
    m = line_word(base, w)
    rid = dcw[m + L_RID] - 1
    start, n = span(gm, rid, dcw[m + L_LINE], lsize)
    region, f, src = gm[rid], fill + w * lsize, data + w * lsize
    for k in range(n):
        if region[start + k] != dc[f + k]:
            raise Fault(F_LOST_WRITE, dcw[m + L_WLOC], rid, start + k, site)
    # for the race checker the write-back is the scalar pipe writing the whole line: two cores
    # writing back one line without synchronising race, whichever bytes each of them changed
    gm_shadow.gm(st, sh, gsh[rid], rid, hb.S, start, n, hb.WRITE, 0, site if site >= 0 else dcw[m + L_WLOC])
    memmove(dc, f, dc, src, n)
    dc[mask + w * lsize:mask + (w + 1) * lsize] = 0
    store_line(gm, dc, dcw, base, w, lsize, data)


@njit(cache=True)
def mark_written(dc, q, nbytes):
    dc[q:q + nbytes] = 1


@njit(cache=True)
def drain(st, chk):
    """The end of a kernel waits for every pipe: for the race checker, a barrier of all pipes."""
    hb.barrier_all(st, chk[0], np.int64(SITE_KERNEL_END))


# --------------------------------------------------------------------------- DMA against the DCaches


@instruction
def check_dma(st, dc, rid, off, nbytes, kind, loc):
    """At ``full``, before a DMA touches bytes [off, off + nbytes) of region ``rid`` (``kind``: ``hb.READ``,
    ``hb.WRITE`` or ``hb.READ_SPAN``).

    A DMA read must not cover bytes some core (this one included) holds
    written in a dirty line: it would read the old GM value.  A DMA write
    must not land in a dirty line at all: the line's write-back would store
    its fill-time bytes over the DMA's data.  Costs one word per core while
    no core holds a dirty line.  A span (a bound of what a read may touch) is
    not checked: its gaps are not read.
    """
    if nbytes <= 0 or kind == hb.READ_SPAN:
        return
    dcw = dc.view(np.int64)
    nsets, ways, lsize = dcw[G_SETS], dcw[G_WAYS], dcw[G_LINE]
    if nsets == 0:
        return                       # no core has cached anything
    me = st[S.CORE_SLOT]
    first, last = off // lsize, (off + nbytes - 1) // lsize
    ncores = (dcw.size - GLOBAL_WORDS) // core_words(nsets, ways, lsize)
    for o in range(ncores):
        base, data, fill, mask = layout(o, nsets, ways, lsize)
        if dcw[base + H_DIRTY] == 0:
            continue
        for w in range(nsets * ways):
            m = line_word(base, w)
            line = dcw[m + L_LINE]
            if dcw[m + L_RID] != rid + 1 or not dcw[m + L_DIRTY] or line < first or line > last:
                continue
            lo, hi = max(off, line * lsize), min(off + nbytes, (line + 1) * lsize)
            holder = _pack_holder(rid, dcw[base + H_WHO], o == me)
            if kind == hb.WRITE:
                raise Fault(F_DMA_WRITE_DIRTY, loc, holder, lo, dcw[m + L_WLOC])
            q = mask + w * lsize - line * lsize
            for b in range(lo, hi):
                if dc[q + b]:
                    raise Fault(F_DMA_READ_DIRTY, loc, holder, b, dcw[m + L_WLOC])
