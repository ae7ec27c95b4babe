"""The scalar unit's data cache (DCache): per core, write-back, 64-byte lines.

The hardware rule
-----------------
Every AIC and AIV core has its own data cache in front of GM (32 KB with
64-byte lines on A2/A3).  Scalar loads and stores -- ``GlobalTensor.get_value``,
``set_value`` and ``g(i)`` -- go through it; DMA (``data_copy``) reads and
writes GM directly.  A store changes only the cached line and marks it dirty;
the line reaches GM when it is written back: when it is evicted, when the
kernel calls ``data_cache_clean_and_invalid``, or when the kernel ends (the
compiler appends a clean-and-invalidate of the entire cache to a normal
kernel).  Nothing keeps the caches of different cores coherent with each
other or with DMA, so:

* a scalar read that hits a line cached before a DMA or another core changed
  GM returns the old value;
* a DMA, or another core, that reads GM before a dirty line is written back
  sees the old value;
* a write-back stores the whole line, so when two cores hold the same line
  dirty, the last write-back wins all of it and the other core's bytes are
  lost (the "random overwrite" the Ascend C documentation warns about); a
  DMA write to a line dirty in some cache is lost the same way.

The model
---------
Set-associative with LRU replacement, write-back and write-allocate; size,
line length and associativity come from the platform profile
(``dcache_bytes``, ``dcache_line``, ``dcache_ways``).  A line is identified by
its GM region and its line number inside the region: every region is taken to
start on a line boundary, as device allocations do, and line ``n`` of every
region maps to set ``n % sets``.

At check level ``full`` the hazards above become
:class:`npuemu.errors.DCacheError` naming the scalar access that caused them
(:mod:`npuemu.isa.dcache_checks`).  The array all cores' caches live in is
laid out in :mod:`npuemu.isa.dcache_lines`.

Two forms
---------
The model is built twice (:func:`_make_model`): the plain instructions for
binaries below check level ``full``, and the ``*_full`` ones, which check and
also tell the race checker about write-backs.  A binary calls one family
only, so the checking code costs the others neither time nor compilation.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from .linkage import instruction
from .. import errors
from . import dcache_checks
from . import state as S
from .dcache_checks import EVICT, SITE_KERNEL_END
from .dcache_lines import (GLOBAL_WORDS, H_CLOCK, H_DIRTY, H_WHO, HEADER_WORDS, L_DIRTY, L_RID, L_STAMP, L_WLOC,
                           LINE_WORDS, core_words, fill_line, find, layout, line_word, publish, store_line, victim)

# --------------------------------------------------------------------------- geometry


def geometry(platform: Any) -> tuple[int, int, int]:
    """``(set bits, ways, line bits)`` of a platform's DCache: ``1 << set_bits`` sets of ``ways`` lines
    of ``1 << line_bits`` bytes.

    Powers of two, so that a hit needs shifts and masks rather than
    divisions (instructions take the three packed by :func:`pack`).  Lines
    hold whole words, so a scalar (at most 8 bytes, naturally aligned) never
    straddles two.
    """
    line, ways, size = int(platform.dcache_line), int(platform.dcache_ways), int(platform.dcache_bytes)
    sets = size // (line * ways) if line > 0 and ways > 0 else 0
    if line < 8 or line & (line - 1) or sets < 1 or sets & (sets - 1) or sets * line * ways != size:
        raise errors.PlatformError(f"platform {platform.name}: the DCache needs a power-of-two line of at least "
                                   f"8 bytes and dcache_bytes = a power of two sets x dcache_ways x dcache_line")
    return sets.bit_length() - 1, ways, line.bit_length() - 1


def pack(platform: Any) -> int:
    """A platform's DCache geometry as the one integer the instructions take: set bits, ways, line bits."""
    sbits, ways, lbits = geometry(platform)
    return sbits | ways << 8 | lbits << 24


@njit(cache=True)
def _unpack(geo):
    """(sets, ways, line bytes) of a packed geometry (see :func:`pack`)."""
    return 1 << (geo & 0xFF), (geo >> 8) & 0xFFFF, 1 << (geo >> 24)


def core_bytes(platform: Any) -> int:
    """Bytes of one core's slice of ``dc``."""
    sbits, ways, lbits = geometry(platform)
    return 8 * core_words.py_func(1 << sbits, ways, 1 << lbits)


def dc_bytes(ncores: int, platform: Any) -> int:
    """Size of the shared DCache array for ``ncores`` cores of ``platform`` (a multiple of 8)."""
    return 8 * GLOBAL_WORDS + ncores * core_bytes(platform)


# --------------------------------------------------------------------------- the model's hooks below full
# What the model calls where a binary built for check level full checks (``dcache_checks``).


@njit(cache=True)
def _plain_write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, site):
    store_line(gm, dc, dcw, base, w, lsize, data)


@njit(cache=True)
def _no_read_check(st, gm, dc, dcw, base, w, hit, rid, at, nbytes, line, s, nsets, ways, lsize, fill, loc):
    pass


@njit(cache=True)
def _not_marked(dc, q, nbytes):
    pass


@njit(cache=True)
def _no_drain(st, chk):
    pass


# --------------------------------------------------------------------------- the model


def _make_model(full: bool):
    """The DCache instructions, with the checks of level ``full`` or without them."""
    write_back = dcache_checks.checked_write_back if full else _plain_write_back
    check_read = dcache_checks.check_read if full else _no_read_check
    mark_written = dcache_checks.mark_written if full else _not_marked
    drain = dcache_checks.drain if full else _no_drain

    @instruction
    def access(st, chk, gm, dc, rid, at, nbytes, write, geo, loc):
        """Bring the line holding bytes [at, at + nbytes) of region ``rid`` into this core's DCache.

        The bytes must lie inside one line and inside the region.  Returns
        their position in ``dc``; a write also marks the line dirty.
        """
        nsets, ways, lsize = _unpack(geo)
        dcw = dc.view(np.int64)
        base, data, fill, mask = layout(st[S.CORE_SLOT], nsets, ways, lsize)
        line = at // lsize
        s = line % nsets
        w = find(dcw, base, s, ways, rid, line)
        hit = w >= 0
        if not hit:
            publish(st, dcw, base, nsets, ways, lsize)
            w = victim(dcw, base, s, ways)
            if dcw[line_word(base, w) + L_DIRTY]:
                write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, EVICT - loc)
            fill_line(gm, dc, dcw, base, w, rid, line, lsize, data, fill, mask, full, loc)
        if not write:
            check_read(st, gm, dc, dcw, base, w, hit, rid, at, nbytes, line, s, nsets, ways, lsize, fill, loc)
        m = line_word(base, w)
        clock = dcw[base + H_CLOCK] + 1
        dcw[base + H_CLOCK] = clock
        dcw[m + L_STAMP] = clock
        pos = data + w * lsize + (at - line * lsize)
        if write:
            if dcw[m + L_DIRTY] == 0:
                dcw[m + L_DIRTY] = 1
                dcw[m + L_WLOC] = loc
                dcw[base + H_DIRTY] += 1
            mark_written(dc, pos - data + mask, nbytes)
        return pos

    @instruction
    def clean_line(st, chk, gm, dc, rid, at, geo, loc):
        nsets, ways, lsize = _unpack(geo)
        dcw = dc.view(np.int64)
        base, data, fill, mask = layout(st[S.CORE_SLOT], nsets, ways, lsize)
        line = at // lsize
        w = find(dcw, base, line % nsets, ways, rid, line)
        if w < 0:
            return
        m = line_word(base, w)
        if dcw[m + L_DIRTY]:
            write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, loc)
        dcw[m + L_RID] = 0

    @instruction
    def clean_all(st, chk, gm, dc, geo, site):
        nsets, ways, lsize = _unpack(geo)
        dcw = dc.view(np.int64)
        base, data, fill, mask = layout(st[S.CORE_SLOT], nsets, ways, lsize)
        if dcw[base + H_WHO] == 0:
            return                       # this core never cached anything
        if site == SITE_KERNEL_END:
            drain(st, chk)
        for w in range(nsets * ways):
            m = line_word(base, w)
            if dcw[m + L_RID] != 0:
                if dcw[m + L_DIRTY]:
                    write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, site)
                dcw[m + L_RID] = 0

    return access, clean_line, clean_all


_access, _clean_line, _clean_all = _make_model(False)
_access_full, _clean_line_full, _clean_all_full = _make_model(True)


# --------------------------------------------------------------------------- the instructions
# Every instruction takes the platform's geometry packed in one integer ``geo`` (:func:`pack`): the
# fewer arguments a call site passes, the less code it compiles to.
#
# Below check level full the generated code inlines a hit: it asks ``load_hit``/``store_hit`` for the
# cached position (no call passes an array on, so they compile to a few loads and stores in the
# kernel; ``dcw`` is ``dc`` viewed as int64, made once per kernel instance) and calls ``load`` /
# ``store`` only when that answers 0: a miss, or a clean line to dirty.  A binary built for check
# level full calls the ``*_full`` forms, which check, for every access.


@njit(cache=True)
def _hit(st, dcw, rid, at, geo):
    """This core's first word and the line holding byte ``at`` of region ``rid`` (or -1)."""
    sbits, ways, lbits = geo & 0xFF, (geo >> 8) & 0xFFFF, geo >> 24
    base = GLOBAL_WORDS + st[S.CORE_SLOT] * core_words(1 << sbits, ways, 1 << lbits)
    line = at >> lbits
    return base, find(dcw, base, line & ((1 << sbits) - 1), ways, rid, line)


@njit(cache=True)
def _touch(dcw, base, w, at, geo):
    """Mark line ``w`` most recently used; the position of byte ``at`` in ``dc``."""
    sbits, ways, lbits = geo & 0xFF, (geo >> 8) & 0xFFFF, geo >> 24
    clock = dcw[base + H_CLOCK] + 1
    dcw[base + H_CLOCK] = clock
    dcw[line_word(base, w) + L_STAMP] = clock
    data = 8 * (base + HEADER_WORDS + (ways << sbits) * LINE_WORDS)
    return data + (w << lbits) + (at & ((1 << lbits) - 1))


@instruction
def load_hit(st, dcw, rid, at, geo):
    """Position in ``dc`` of cached byte ``at`` of region ``rid`` for a read, or 0: call :func:`load`.

    (A position is never 0: the global header comes first.)
    """
    if st[S.SK_FLAGS] & S.SK_GETSET_DCCI:
        return 0                # get_value cleans its line first: never a plain hit
    base, w = _hit(st, dcw, rid, at, geo)
    if w < 0:
        return 0
    return _touch(dcw, base, w, at, geo)


@instruction
def store_hit(st, dcw, rid, at, geo):
    """Position in ``dc`` to write byte ``at`` of region ``rid`` to if its line is already dirty, else 0."""
    if st[S.SK_FLAGS] & S.SK_GETSET_DCCI:
        return 0                # set_value tracks the line it will clean later
    base, w = _hit(st, dcw, rid, at, geo)
    if w < 0 or dcw[line_word(base, w) + L_DIRTY] == 0:
        return 0
    return _touch(dcw, base, w, at, geo)


# In a SuperKernel's sub-kernel CANN compiles get_value / set_value with single-line cleans (st[SK_FLAGS]
# & SK_GETSET_DCCI, docs/superkernel.md): get_value cleans and invalidates its line before it reads;
# set_value cleans the line the same GlobalTensor wrote last when it writes another one (the last one is
# cleaned when the GlobalTensor dies, which the SuperKernel runner does as the sub-kernel returns).


@njit(cache=True)
def _pending_line(st, rid, at, geo):
    """set_value in a SuperKernel: the line to clean now (region id + 1, byte; 0: none), and remember ``at``
    (per GlobalTensor: st[SK_GT] is the pending slot of the one written through)."""
    p = S.SK_PEND + 2 * st[S.SK_GT]
    prid, pat = st[p], st[p + 1]
    st[p], st[p + 1] = rid + 1, at
    if prid and (prid != rid + 1 or (pat >> (geo >> 24)) != (at >> (geo >> 24))):
        return prid, pat
    return 0, 0


@instruction
def load(st, gm, dc, rid, at, nbytes, geo, loc):
    """Position in ``dc`` of the cached bytes [at, at + nbytes) of region ``rid`` (one line), for a read."""
    if st[S.SK_FLAGS] & S.SK_GETSET_DCCI:
        _clean_line(st, (), gm, dc, rid, at, geo, loc)
    return _access(st, (), gm, dc, rid, at, nbytes, False, geo, loc)


@instruction
def store(st, gm, dc, rid, at, nbytes, geo, loc):
    """Position in ``dc`` to write bytes [at, at + nbytes) of region ``rid`` (one line) to; marks it dirty."""
    if st[S.SK_FLAGS] & S.SK_GETSET_DCCI:
        prid, pat = _pending_line(st, rid, at, geo)
        if prid:
            _clean_line(st, (), gm, dc, prid - 1, pat, geo, loc)
    return _access(st, (), gm, dc, rid, at, nbytes, True, geo, loc)


@instruction
def clean_invalidate_line(st, gm, dc, rid, at, geo, loc):
    """``DataCacheCleanAndInvalid<SINGLE_CACHE_LINE>``: write back (if dirty) and drop the line of ``at``."""
    _clean_line(st, (), gm, dc, rid, at, geo, loc)


@instruction
def clean_invalidate_all(st, gm, dc, geo, loc):
    """``DataCacheCleanAndInvalid<ENTIRE_DATA_CACHE>``: write back every dirty line, then drop them all."""
    _clean_all(st, (), gm, dc, geo, loc)


@instruction
def flush_at_end(st, gm, dc, geo):
    """The entire-cache clean-and-invalidate the compiler appends to a normal kernel (not to a
    SuperKernel's sub-kernel: its entry decides)."""
    if st[S.SK_FLAGS] & S.SK_SUB:
        return
    _clean_all(st, (), gm, dc, geo, np.int64(SITE_KERNEL_END))


@instruction
def load_full(st, sh, gsh, gm, dc, rid, at, nbytes, geo, loc):
    """:func:`load` with the checks of level full (``sh``, ``gsh``: the race checker's arrays)."""
    if st[S.SK_FLAGS] & S.SK_GETSET_DCCI:
        _clean_line_full(st, (sh, gsh), gm, dc, rid, at, geo, loc)
    return _access_full(st, (sh, gsh), gm, dc, rid, at, nbytes, False, geo, loc)


@instruction
def store_full(st, sh, gsh, gm, dc, rid, at, nbytes, geo, loc):
    """:func:`store` with the checks of level full."""
    if st[S.SK_FLAGS] & S.SK_GETSET_DCCI:
        prid, pat = _pending_line(st, rid, at, geo)
        if prid:
            _clean_line_full(st, (sh, gsh), gm, dc, prid - 1, pat, geo, loc)
    return _access_full(st, (sh, gsh), gm, dc, rid, at, nbytes, True, geo, loc)


@instruction
def clean_invalidate_line_full(st, sh, gsh, gm, dc, rid, at, geo, loc):
    """:func:`clean_invalidate_line` with the checks of level full."""
    _clean_line_full(st, (sh, gsh), gm, dc, rid, at, geo, loc)


@instruction
def clean_invalidate_all_full(st, sh, gsh, gm, dc, geo, loc):
    """:func:`clean_invalidate_all` with the checks of level full."""
    _clean_all_full(st, (sh, gsh), gm, dc, geo, loc)


@instruction
def flush_at_end_full(st, sh, gsh, gm, dc, geo):
    """:func:`flush_at_end` with the checks of level full.

    It runs once every pipe has drained, so for the race checker it comes
    after all of the core's accesses.
    """
    if st[S.SK_FLAGS] & S.SK_SUB:
        return
    _clean_all_full(st, (sh, gsh), gm, dc, geo, np.int64(SITE_KERNEL_END))
