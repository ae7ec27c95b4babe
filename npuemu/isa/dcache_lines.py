"""The DCache array ``dc``: where each core's lines live, and how lines move between GM and the cache.

One uint8 array shared by every core of a launch (``runtime/launch.py``):
a global header of ``GLOBAL_WORDS`` int64 words holding the geometry (written
by the first core that caches anything, so the DMA checks can read it), then
one slice of :func:`core_words` per core, at ``st[CORE_SLOT]``:

* int64 words: ``HEADER_WORDS`` of per-core header, then ``LINE_WORDS`` per
  line (line ``w`` of set ``s`` is ``s * ways + w``);
* the lines' data, ``line`` bytes each;
* their fill copies and their written-byte masks (touched at ``full`` only).

A core only writes its own slice (and the geometry words, all with the same
values), so cores running on parallel threads never share a word of it;
memory never cached is never touched (``np.zeros`` pages).  The cache model
(:mod:`npuemu.isa.dcache`) and its checks (:mod:`npuemu.isa.dcache_checks`)
both work on this layout.
"""
from __future__ import annotations

from numba import njit

from . import state as S
from .common import memmove

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


# --------------------------------------------------------------------------- layout


@njit(cache=True)
def core_words(nsets, ways, lsize):
    """int64 words of one core's slice: its words, then data, fill copies and masks rounded up to words."""
    nlines = nsets * ways
    return HEADER_WORDS + nlines * LINE_WORDS + (3 * nlines * lsize + 7) // 8


@njit(cache=True)
def layout(slot, nsets, ways, lsize):
    """Where core ``slot``'s slice lives: its first word in ``dcw``, and the byte offsets in ``dc``
    of its line data, fill copies and written masks."""
    nlines = nsets * ways
    words = GLOBAL_WORDS + slot * core_words(nsets, ways, lsize)
    data = 8 * (words + HEADER_WORDS + nlines * LINE_WORDS)
    return words, data, data + nlines * lsize, data + 2 * nlines * lsize


@njit(cache=True)
def line_word(base, w):
    """Index in ``dcw`` of line ``w``'s first word, for the core whose slice starts at word ``base``."""
    return base + HEADER_WORDS + w * LINE_WORDS


@njit(cache=True)
def find(dcw, base, s, ways, rid, line):
    """The line holding (``rid``, ``line``) in set ``s``, or -1."""
    for k in range(ways):
        m = line_word(base, s * ways + k)
        if dcw[m + L_RID] == rid + 1 and dcw[m + L_LINE] == line:
            return s * ways + k
    return -1


@njit(cache=True)
def victim(dcw, base, s, ways):
    """An invalid line of set ``s`` if there is one, else the least recently used."""
    best = s * ways
    stamp = dcw[line_word(base, best) + L_STAMP]
    for k in range(ways):
        w = s * ways + k
        m = line_word(base, w)
        if dcw[m + L_RID] == 0:
            return w
        if dcw[m + L_STAMP] < stamp:
            best, stamp = w, dcw[m + L_STAMP]
    return best


@njit(cache=True)
def span(gm, rid, line, lsize):
    """First byte of the line in its region and how many of its bytes lie inside the region."""
    start = line * lsize
    return start, min(lsize, gm[rid].size - start)


# --------------------------------------------------------------------------- line transfers


@njit(cache=True)
def store_line(gm, dc, dcw, base, w, lsize, data):
    """Write dirty line ``w`` back to GM, whole, and mark it clean."""
    m = line_word(base, w)
    rid = dcw[m + L_RID] - 1
    start, n = span(gm, rid, dcw[m + L_LINE], lsize)
    src = data + w * lsize
    memmove(gm[rid], start, dc, src, n)
    dcw[m + L_DIRTY] = 0
    dcw[base + H_DIRTY] -= 1


@njit(cache=True)
def fill_line(gm, dc, dcw, base, w, rid, line, lsize, data, fill, mask, keep, loc):
    """Load (``rid``, ``line``) from GM into line ``w``, which must be clean; ``keep``: a copy too (full)."""
    start, n = span(gm, rid, line, lsize)
    region, d = gm[rid], data + w * lsize
    memmove(dc, d, region, start, n)
    if keep:
        memmove(dc, fill + w * lsize, region, start, n)
        dc[mask + w * lsize:mask + (w + 1) * lsize] = 0
    m = line_word(base, w)
    dcw[m + L_RID] = rid + 1
    dcw[m + L_LINE] = line
    dcw[m + L_DIRTY] = 0
    dcw[m + L_FLOC] = loc


@njit(cache=True)
def publish(st, dcw, base, nsets, ways, lsize):
    """Record the geometry and this core's name, once, for the checks that scan every core."""
    if dcw[base + H_WHO] == 0:
        dcw[base + H_WHO] = 1 + ((st[S.CORE_TYPE] << 16) | st[S.BLOCK_IDX])
        if dcw[G_SETS] == 0:
            dcw[G_SETS], dcw[G_WAYS], dcw[G_LINE] = nsets, ways, lsize
