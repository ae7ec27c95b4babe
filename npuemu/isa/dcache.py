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

At check level ``full`` each line also keeps the bytes it was filled with and
which of its bytes this core has written, so that the hazards above become
:class:`npuemu.errors.DCacheError` naming the scalar access that caused them:
a read hit on bytes that changed in GM since the fill (stale read), a read of
bytes another core holds dirty (unflushed write), a write-back over GM bytes
that changed since the fill (lost write) and, through :func:`check_dma`, a DMA
that reads bytes dirty in some DCache or writes into a dirty line.

Layout of ``dc``
----------------
One uint8 array shared by every core of a launch (``runtime/launch.py``):
a global header of ``GLOBAL_WORDS`` int64 words holding the geometry (written
by the first core that caches anything, so the DMA checks can read it), then
one slice of :func:`core_bytes` per core, at ``st[CORE_SLOT]``:

* int64 words: ``HEADER_WORDS`` of per-core header, then ``LINE_WORDS`` per
  line (line ``w`` of set ``s`` is ``s * ways + w``);
* the lines' data, ``line`` bytes each;
* their fill copies and their written-byte masks (touched at ``full`` only).

A core only writes its own slice (and the geometry words, all with the same
values), so cores running on parallel threads never share a word of it;
memory never cached is never touched (``np.zeros`` pages).

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
from . import gm_shadow, hb
from . import state as S
from .common import memmove
from .fault import Fault, Message, register

# global header (int64 words)
GLOBAL_WORDS = 8
G_SETS = 0
G_WAYS = 1
G_LINE = 2

# per-core header (int64 words)
HEADER_WORDS = 8
H_DIRTY = 0            # lines currently dirty
H_CLOCK = 1            # LRU clock: ticks once per access
H_WHO = 2              # 1 + (core type << 16 | block idx) of the owner, for messages

# per-line words
LINE_WORDS = 6
L_RID = 0              # GM region id + 1; 0 = invalid line
L_LINE = 1             # line number inside the region
L_STAMP = 2            # LRU clock of the last access
L_DIRTY = 3
L_WLOC = 4             # location id of the scalar write that made the line dirty
L_FLOC = 5             # location id of the access that filled the line

# where a write-back happens (the ``c`` of F_LOST_WRITE): a loc id >= 0 is a
# data_cache_clean_and_invalid; these are the others
SITE_KERNEL_END = -1
_EVICT = -2            # SITE = _EVICT - loc of the access that evicted the line

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
    if c <= _EVICT:
        return f"on eviction by {env.source(_EVICT - c)}"
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


# --------------------------------------------------------------------------- geometry and layout


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


@njit(cache=True)
def _core_words(nsets, ways, lsize):
    """int64 words of one core's slice: its words, then data, fill copies and masks rounded up to words."""
    nlines = nsets * ways
    return HEADER_WORDS + nlines * LINE_WORDS + (3 * nlines * lsize + 7) // 8


def core_bytes(platform: Any) -> int:
    """Bytes of one core's slice of ``dc``."""
    sbits, ways, lbits = geometry(platform)
    return 8 * _core_words.py_func(1 << sbits, ways, 1 << lbits)


def dc_bytes(ncores: int, platform: Any) -> int:
    """Size of the shared DCache array for ``ncores`` cores of ``platform`` (a multiple of 8)."""
    return 8 * GLOBAL_WORDS + ncores * core_bytes(platform)


@njit(cache=True)
def _layout(slot, nsets, ways, lsize):
    """Where core ``slot``'s slice lives: its first word in ``dcw``, and the byte offsets in ``dc``
    of its line data, fill copies and written masks."""
    nlines = nsets * ways
    words = GLOBAL_WORDS + slot * _core_words(nsets, ways, lsize)
    data = 8 * (words + HEADER_WORDS + nlines * LINE_WORDS)
    return words, data, data + nlines * lsize, data + 2 * nlines * lsize


@njit(cache=True)
def _word(base, w):
    """Index in ``dcw`` of line ``w``'s first word, for the core whose slice starts at word ``base``."""
    return base + HEADER_WORDS + w * LINE_WORDS


@njit(cache=True)
def _find(dcw, base, s, ways, rid, line):
    """The line holding (``rid``, ``line``) in set ``s``, or -1."""
    for k in range(ways):
        m = _word(base, s * ways + k)
        if dcw[m + L_RID] == rid + 1 and dcw[m + L_LINE] == line:
            return s * ways + k
    return -1


@njit(cache=True)
def _victim(dcw, base, s, ways):
    """An invalid line of set ``s`` if there is one, else the least recently used."""
    best = s * ways
    stamp = dcw[_word(base, best) + L_STAMP]
    for k in range(ways):
        w = s * ways + k
        m = _word(base, w)
        if dcw[m + L_RID] == 0:
            return w
        if dcw[m + L_STAMP] < stamp:
            best, stamp = w, dcw[m + L_STAMP]
    return best


@njit(cache=True)
def _span(gm, rid, line, lsize):
    """First byte of the line in its region and how many of its bytes lie inside the region."""
    start = line * lsize
    return start, min(lsize, gm[rid].size - start)


@njit(cache=True)
def _pack_holder(rid, who, mine):
    """Region id, the holding core's ``H_WHO`` and whether it is the faulting core, in one fault argument."""
    return rid + (((np.int64(mine) << 32) | who) << _RID_BITS)


# --------------------------------------------------------------------------- line transfers


@njit(cache=True)
def _store_line(gm, dc, dcw, base, w, lsize, data):
    """Write dirty line ``w`` back to GM, whole, and mark it clean."""
    m = _word(base, w)
    rid = dcw[m + L_RID] - 1
    start, n = _span(gm, rid, dcw[m + L_LINE], lsize)
    src = data + w * lsize
    memmove(gm[rid], start, dc, src, n)
    dcw[m + L_DIRTY] = 0
    dcw[base + H_DIRTY] -= 1


@njit(cache=True)
def _fill(gm, dc, dcw, base, w, rid, line, lsize, data, fill, mask, keep, loc):
    """Load (``rid``, ``line``) from GM into line ``w``, which must be clean; ``keep``: a copy too (full)."""
    start, n = _span(gm, rid, line, lsize)
    region, d = gm[rid], data + w * lsize
    memmove(dc, d, region, start, n)
    if keep:
        memmove(dc, fill + w * lsize, region, start, n)
        dc[mask + w * lsize:mask + (w + 1) * lsize] = 0
    m = _word(base, w)
    dcw[m + L_RID] = rid + 1
    dcw[m + L_LINE] = line
    dcw[m + L_DIRTY] = 0
    dcw[m + L_FLOC] = loc


@njit(cache=True)
def _publish(st, dcw, base, nsets, ways, lsize):
    """Record the geometry and this core's name, once, for the checks that scan every core."""
    if dcw[base + H_WHO] == 0:
        dcw[base + H_WHO] = 1 + ((st[S.CORE_TYPE] << 16) | st[S.BLOCK_IDX])
        if dcw[G_SETS] == 0:
            dcw[G_SETS], dcw[G_WAYS], dcw[G_LINE] = nsets, ways, lsize


# --------------------------------------------------------------------------- the checks of level full
# The model below is built twice (``_make_model``): with these hooks for binaries built for check
# level full, and with the no-ops after them for the others, which then neither run nor link (nor
# compile) any checking code.  ``chk`` is what the checks need besides the cache: the race
# checker's ``(sh, gsh)`` at full, ``()`` below.


@njit(cache=True)
def _check_stale(gm, dc, dcw, base, w, rid, at, nbytes, lsize, fill, loc):
    """A read hit: GM must still hold, at the bytes read, what the line was filled with."""
    f = fill + w * lsize + at % lsize
    region = gm[rid]
    for k in range(nbytes):
        if dc[f + k] != region[at + k]:
            raise Fault(F_STALE_READ, loc, rid, at, dcw[_word(base, w) + L_FLOC])


@njit(cache=True)
def _check_unflushed(st, dc, dcw, rid, at, nbytes, line, s, nsets, ways, lsize, loc):
    """A read: no other core may hold the bytes read written but not yet written back."""
    me = st[S.CORE_SLOT]
    ncores = (dcw.size - GLOBAL_WORDS) // _core_words(nsets, ways, lsize)
    for o in range(ncores):
        if o == me:
            continue
        base, data, fill, mask = _layout(o, nsets, ways, lsize)
        if dcw[base + H_DIRTY] == 0:
            continue
        w = _find(dcw, base, s, ways, rid, line)
        if w < 0 or dcw[_word(base, w) + L_DIRTY] == 0:
            continue
        q = mask + w * lsize + at % lsize
        for k in range(nbytes):
            if dc[q + k]:
                raise Fault(F_UNFLUSHED_READ, loc, _pack_holder(rid, dcw[base + H_WHO], False), at + k,
                            dcw[_word(base, w) + L_WLOC])


@njit(cache=True)
def _check_read(st, gm, dc, dcw, base, w, hit, rid, at, nbytes, line, s, nsets, ways, lsize, fill, loc):
    if hit:
        _check_stale(gm, dc, dcw, base, w, rid, at, nbytes, lsize, fill, loc)
    _check_unflushed(st, dc, dcw, rid, at, nbytes, line, s, nsets, ways, lsize, loc)


@njit(cache=True)
def _checked_write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, site):
    """Write back dirty line ``w`` after checking that GM still holds what the line was filled with
    (else another core's or a DMA's data would be lost)."""
    sh, gsh = chk
    m = _word(base, w)
    rid = dcw[m + L_RID] - 1
    start, n = _span(gm, rid, dcw[m + L_LINE], lsize)
    region, f, src = gm[rid], fill + w * lsize, data + w * lsize
    for k in range(n):
        if region[start + k] != dc[f + k]:
            raise Fault(F_LOST_WRITE, dcw[m + L_WLOC], rid, start + k, site)
    # for the race checker the write-back is the scalar pipe writing the whole line: two cores
    # writing back one line without synchronising race, whichever bytes each of them changed
    gm_shadow.gm(st, sh, gsh[rid], rid, hb.S, start, n, hb.WRITE, site if site >= 0 else dcw[m + L_WLOC])
    memmove(dc, f, dc, src, n)
    dc[mask + w * lsize:mask + (w + 1) * lsize] = 0
    _store_line(gm, dc, dcw, base, w, lsize, data)


@njit(cache=True)
def _mark_written(dc, q, nbytes):
    dc[q:q + nbytes] = 1


@njit(cache=True)
def _drain(st, chk):
    """The end of a kernel waits for every pipe: for the race checker, a barrier of all pipes."""
    hb.barrier_all(st, chk[0], np.int64(SITE_KERNEL_END))


@njit(cache=True)
def _plain_write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, site):
    _store_line(gm, dc, dcw, base, w, lsize, data)


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


@njit(cache=True)
def _unpack(geo):
    """(sets, ways, line bytes) of a packed geometry (see :func:`pack`)."""
    return 1 << (geo & 0xFF), (geo >> 8) & 0xFFFF, 1 << (geo >> 24)


def pack(platform: Any) -> int:
    """A platform's DCache geometry as the one integer the instructions take: set bits, ways, line bits."""
    sbits, ways, lbits = geometry(platform)
    return sbits | ways << 8 | lbits << 24


def _make_model(full: bool):
    """The DCache instructions, with the checks of level ``full`` or without them."""
    write_back = _checked_write_back if full else _plain_write_back
    check_read = _check_read if full else _no_read_check
    mark_written = _mark_written if full else _not_marked
    drain = _drain if full else _no_drain

    @instruction
    def access(st, chk, gm, dc, rid, at, nbytes, write, geo, loc):
        """Bring the line holding bytes [at, at + nbytes) of region ``rid`` into this core's DCache.

        The bytes must lie inside one line and inside the region.  Returns
        their position in ``dc``; a write also marks the line dirty.
        """
        nsets, ways, lsize = _unpack(geo)
        dcw = dc.view(np.int64)
        base, data, fill, mask = _layout(st[S.CORE_SLOT], nsets, ways, lsize)
        line = at // lsize
        s = line % nsets
        w = _find(dcw, base, s, ways, rid, line)
        hit = w >= 0
        if not hit:
            _publish(st, dcw, base, nsets, ways, lsize)
            w = _victim(dcw, base, s, ways)
            if dcw[_word(base, w) + L_DIRTY]:
                write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, _EVICT - loc)
            _fill(gm, dc, dcw, base, w, rid, line, lsize, data, fill, mask, full, loc)
        if not write:
            check_read(st, gm, dc, dcw, base, w, hit, rid, at, nbytes, line, s, nsets, ways, lsize, fill, loc)
        m = _word(base, w)
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
        base, data, fill, mask = _layout(st[S.CORE_SLOT], nsets, ways, lsize)
        line = at // lsize
        w = _find(dcw, base, line % nsets, ways, rid, line)
        if w < 0:
            return
        m = _word(base, w)
        if dcw[m + L_DIRTY]:
            write_back(st, chk, gm, dc, dcw, base, w, lsize, data, fill, mask, loc)
        dcw[m + L_RID] = 0

    @instruction
    def clean_all(st, chk, gm, dc, geo, site):
        nsets, ways, lsize = _unpack(geo)
        dcw = dc.view(np.int64)
        base, data, fill, mask = _layout(st[S.CORE_SLOT], nsets, ways, lsize)
        if dcw[base + H_WHO] == 0:
            return                       # this core never cached anything
        if site == SITE_KERNEL_END:
            drain(st, chk)
        for w in range(nsets * ways):
            m = _word(base, w)
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
    base = GLOBAL_WORDS + st[S.CORE_SLOT] * _core_words(1 << sbits, ways, 1 << lbits)
    line = at >> lbits
    return base, _find(dcw, base, line & ((1 << sbits) - 1), ways, rid, line)


@njit(cache=True)
def _touch(dcw, base, w, at, geo):
    """Mark line ``w`` most recently used; the position of byte ``at`` in ``dc``."""
    sbits, ways, lbits = geo & 0xFF, (geo >> 8) & 0xFFFF, geo >> 24
    clock = dcw[base + H_CLOCK] + 1
    dcw[base + H_CLOCK] = clock
    dcw[_word(base, w) + L_STAMP] = clock
    data = 8 * (base + HEADER_WORDS + (ways << sbits) * LINE_WORDS)
    return data + (w << lbits) + (at & ((1 << lbits) - 1))


@instruction
def load_hit(st, dcw, rid, at, geo):
    """Position in ``dc`` of cached byte ``at`` of region ``rid`` for a read, or 0: call :func:`load`.

    (A position is never 0: the global header comes first.)
    """
    base, w = _hit(st, dcw, rid, at, geo)
    if w < 0:
        return 0
    return _touch(dcw, base, w, at, geo)


@instruction
def store_hit(st, dcw, rid, at, geo):
    """Position in ``dc`` to write byte ``at`` of region ``rid`` to if its line is already dirty, else 0."""
    base, w = _hit(st, dcw, rid, at, geo)
    if w < 0 or dcw[_word(base, w) + L_DIRTY] == 0:
        return 0
    return _touch(dcw, base, w, at, geo)


@instruction
def load(st, gm, dc, rid, at, nbytes, geo, loc):
    """Position in ``dc`` of the cached bytes [at, at + nbytes) of region ``rid`` (one line), for a read."""
    return _access(st, (), gm, dc, rid, at, nbytes, False, geo, loc)


@instruction
def store(st, gm, dc, rid, at, nbytes, geo, loc):
    """Position in ``dc`` to write bytes [at, at + nbytes) of region ``rid`` (one line) to; marks it dirty."""
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
    """The entire-cache clean-and-invalidate the compiler appends to a normal kernel."""
    _clean_all(st, (), gm, dc, geo, np.int64(SITE_KERNEL_END))


@instruction
def load_full(st, sh, gsh, gm, dc, rid, at, nbytes, geo, loc):
    """:func:`load` with the checks of level full (``sh``, ``gsh``: the race checker's arrays)."""
    return _access_full(st, (sh, gsh), gm, dc, rid, at, nbytes, False, geo, loc)


@instruction
def store_full(st, sh, gsh, gm, dc, rid, at, nbytes, geo, loc):
    """:func:`store` with the checks of level full."""
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
    _clean_all_full(st, (sh, gsh), gm, dc, geo, np.int64(SITE_KERNEL_END))


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
    ncores = (dcw.size - GLOBAL_WORDS) // _core_words(nsets, ways, lsize)
    for o in range(ncores):
        base, data, fill, mask = _layout(o, nsets, ways, lsize)
        if dcw[base + H_DIRTY] == 0:
            continue
        for w in range(nsets * ways):
            m = _word(base, w)
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
