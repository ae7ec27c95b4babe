"""GM as the sub-kernels of a SuperKernel see it, and the DCache carried from one sub-kernel to the next.

CANN's generator concatenates every sub-kernel's GM parameters into one
list and hands each sub-kernel its slice.  npuemu runs each sub-kernel's own
compiled code, in which GM region ``i`` is its ``i``-th GM parameter; so
each sub-kernel gets a region tuple of its own parameters first, then as
many other regions of the SuperKernel as its tuple's fixed length allows
(so that a DCache line of any of them can be written back), with npuemu's
system region last.  An array two sub-kernels share is one region with one id per
sub-kernel's view.

The DCache array names a line by its region id and remembers the source
lines that wrote and filled it; when the SuperKernel moves from sub-kernel
``k - 1`` to ``k``, :meth:`GmLayout.carry_dcache` rewrites those ids into
sub-kernel ``k``'s numbering, so lines cached (and dirty) in one sub-kernel
are still there, as on hardware, in the next.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..codegen.abi import region_slots
from ..errors import LaunchError, SourceLoc
from ..isa import dcache
from ..isa.hb import GLOBAL_LOC
from ..isa.dcache_lines import H_DIRTY, HEADER_WORDS, L_DIRTY, L_FLOC, L_LINE, L_RID, L_WLOC, LINE_WORDS, layout
from ..language import dtype as dt
from ..runtime.args import Region, region_for

_NO_BYTES = np.zeros(0, np.uint8)


class GmLayout:
    """The SuperKernel's regions and each sub-kernel's region tuple and source-location table."""

    def __init__(self, kernel_names: Sequence[str], gm_params: Sequence[Sequence[str]],
                 values: Sequence[Any], locs: Sequence[Sequence[SourceLoc]], system: Region):
        self.regions: list[Region] = []          # unified
        where: dict[tuple[int, int], int] = {}
        own: list[list[int]] = []
        for name, params, vals in zip(kernel_names, gm_params, values):
            ids = []
            for p in params:
                r = region_for(p, vals[p])
                if r.writeback is not None:
                    raise LaunchError(f"SuperKernel sub-kernel '{name}': argument '{p}' is not C-contiguous; "
                                      f"pass a contiguous array (a copy would not be shared with the other "
                                      f"sub-kernels)")
                key = (r.bytes.__array_interface__["data"][0], r.bytes.size)
                if key not in where:
                    where[key] = len(self.regions)
                    self.regions.append(r)
                ids.append(where[key])
            own.append(ids)
        self.sizes: list[int] = []
        self.tuples: list[list[Region]] = []
        self.to_unified: list[np.ndarray] = []   # local id -> unified id (-1 padding, -2 system)
        self.to_local: list[np.ndarray] = []     # unified id -> local id (-1: not in this sub-kernel's view)
        for k, ids in enumerate(own):
            # the binary's region tuple has a fixed length (codegen/abi.py): its own parameters, then as many
            # other regions as fit, those of the nearest earlier sub-kernels first
            size = region_slots(len(gm_params[k]))
            others = [u for j in [*range(k - 1, -1, -1), *range(k + 1, len(own))] for u in own[j]]
            order = list(ids)
            for u in others:
                if u not in order and len(order) < size - 1:
                    order.append(u)
            pad = size - 1 - len(order)
            regs = [self.regions[u] for u in order] + [Region("(unused)", _NO_BYTES, dt.uint8)] * pad + [system]
            self.sizes.append(size)
            self.tuples.append(regs)
            self.to_unified.append(np.array(order + [-1] * pad + [-2], np.int64))
            back = np.full(len(self.regions) + 2, -1, np.int64)
            for local, u in reversed(list(enumerate(order))):
                back[u] = local
            back[-2] = size - 1                     # the system region
            self.to_local.append(back)
        # source locations: each sub-kernel's own ids (what its code passes), and SuperKernel-wide ids from
        # hb.GLOBAL_LOC on (the race checker's stamps and DCache lines carried from one sub-kernel to the next
        # record those, so a message names the line of the sub-kernel that made the access)
        self.all_locs: list[SourceLoc] = [loc for ls in locs for loc in ls]
        self.loc_base: list[int] = []
        for ls in locs:
            self.loc_base.append(GLOBAL_LOC + sum(len(x) for x in locs[:len(self.loc_base)]))
        self.locs = [LocTable(list(ls), self.all_locs) for ls in locs]

    def gm(self, k: int) -> tuple[np.ndarray, ...]:
        """Sub-kernel ``k``'s region tuple (its ``_gm`` argument)."""
        return tuple(r.bytes for r in self.tuples[k])

    def region_map(self, a: int, b: int) -> np.ndarray:
        """``m[rid + 1]``: sub-kernel ``b``'s ``rid + 1`` of sub-kernel ``a``'s region ``rid`` (0: not in
        ``b``'s view; 0 stays 0)."""
        m = np.zeros(self.sizes[a] + 1, np.int64)
        for local, u in enumerate(self.to_unified[a]):
            if u == -1:
                continue
            m[local + 1] = self.to_local[b][u] + 1 if u >= 0 else self.sizes[b]
        return m

    def carry_dcache(self, dc: np.ndarray, ncores: int, platform: Any, a: int, b: int) -> None:
        """Rewrite every core's cached lines from sub-kernel ``a``'s numbering into ``b``'s."""
        if ncores == 0 or dc.size <= 8 * 8:
            return
        set_bits, ways, line_bits = dcache.geometry(platform)
        nsets, lsize = 1 << set_bits, 1 << line_bits
        dcw = dc.view(np.int64)
        rmap, own, loc_base = self.region_map(a, b), len(self.locs[a].own), self.loc_base[a]
        nlines = nsets * ways
        for slot in range(ncores):
            base, data = (int(v) for v in layout(slot, nsets, ways, lsize)[:2])
            first = base + HEADER_WORDS
            rows = dcw[first:first + nlines * LINE_WORDS].reshape(nlines, LINE_WORDS)
            valid = rows[:, L_RID] > 0
            if not valid.any():
                continue
            new = rmap[rows[:, L_RID]]
            for w in np.flatnonzero(valid & (new == 0)):
                self._evict(dc, dcw, base, data, w, rows[w], lsize, a)
            valid &= new > 0
            rows[valid, L_RID] = new[valid]
            for col in (L_WLOC, L_FLOC):
                v = rows[:, col]
                ok = valid & (v >= 0) & (v < own)
                v[ok] += loc_base

    def _evict(self, dc: np.ndarray, dcw: np.ndarray, base: int, data: int, w: int, row: np.ndarray, lsize: int,
               a: int) -> None:
        """Write back (if dirty) and drop a line of a region the next sub-kernel's code cannot name (its
        region tuple is full): an approximation, documented in docs/superkernel.md."""
        if row[L_DIRTY]:
            region = self.tuples[a][int(row[L_RID]) - 1].bytes
            start = int(row[L_LINE]) * lsize
            n = max(0, min(lsize, region.size - start))
            region[start:start + n] = dc[data + w * lsize:data + w * lsize + n]
            dcw[base + H_DIRTY] -= 1
        row[L_RID] = 0
        row[L_DIRTY] = 0


class LocTable(Sequence[SourceLoc]):
    """A sub-kernel's source locations by id: its own ids first, the SuperKernel-wide ones from GLOBAL_LOC."""

    def __init__(self, own: list[SourceLoc], everything: list[SourceLoc]):
        self.own = own
        self.everything = everything

    def __len__(self) -> int:
        return GLOBAL_LOC + len(self.everything)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if 0 <= i < len(self.own):
            return self.own[i]
        if GLOBAL_LOC <= i < len(self):
            return self.everything[i - GLOBAL_LOC]
        return _UNKNOWN


_UNKNOWN = SourceLoc("<unknown>", 0, 0, "?", "")

__all__ = ["GmLayout", "LocTable"]
