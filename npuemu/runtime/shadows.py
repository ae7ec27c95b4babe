"""The race checker's arrays on the host: each launch's shadows, and the check once its cores have stopped.

At check level ``full`` every core gets an ``sh`` array (its clocks and its
local-memory shadow, :func:`new_core_shadow`) and the launch one GM shadow
per region (:func:`new_gm_shadows`); :mod:`npuemu.isa.hb` lays them out.
Allocating and zeroing every core's shadow (hundreds of KiB each) and
faulting in fresh pages would cost a launch more than checking all its
accesses, so the arrays come from the runtime's pool of recycled arrays
(:mod:`.pool`) and go back to it when the launch drops them.  Handing an
array out again resets only what a fresh one would differ in: the headers,
the first word of every snapshot slot (0: empty) and, if a cross-core
primitive used them, the sync objects.  The records past a list's count are
never read (see :mod:`npuemu.isa.shadow_ranges`).

:func:`check_launch` compares the GM accesses of cores that never
synchronise, which ran in parallel, after the launch.
"""
from __future__ import annotations

import mmap
from typing import Any, Sequence

import numpy as np

from .. import errors
from ..isa import gm_shadow, hb, local_shadow
from ..isa import shadow_ranges as R
from ..isa.race_report import unsynchronised
from .pool import POOL

_LAZY_BYTES = 1 << 20  # arrays at least this large come from mmap: pages never touched cost nothing


def core_words(ncores: int, lm_bytes: int) -> int:
    """Size in int64 words of a core's ``sh`` array at check level ``full``."""
    return hb.FIXED + ncores * hb.N_PIPES + R.LH + local_shadow.capacity(lm_bytes) * local_shadow.LOCAL_WIDTH


def gm_words(nbytes: int, system: bool, ncores: int) -> int:
    """Size in int64 words of one GM region's shadow at check level ``full``."""
    objs = hb.MAX_SYNC_OBJECTS * ncores * hb.N_PIPES if system else 0
    return hb.GH + ncores * (R.LH + gm_shadow.capacity(nbytes) * gm_shadow.GM_WIDTH) + objs


def _zeros(nwords: int) -> np.ndarray:
    """A zeroed int64 array; large ones are mapped lazily so untouched pages cost nothing."""
    if nwords * 8 < _LAZY_BYTES:
        return np.zeros(nwords, np.int64)
    return np.frombuffer(mmap.mmap(-1, nwords * 8), np.int64)


def _take(key: tuple[Any, ...], nwords: int) -> np.ndarray:
    """A pooled array for ``key`` (its contents are stale: the caller resets them) or a fresh one."""
    arr = POOL.take(key)
    return arr if arr is not None else _zeros(nwords)


_TEMPLATES: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _core_template(ncores: int, lm_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """What a fresh ``sh`` holds in its header and clocks, and in its cross-core clocks and list header."""
    t = _TEMPLATES.get((ncores, lm_bytes))
    if t is None:
        n = hb.N_PIPES
        head = np.zeros(hb.LVC + n * n, np.int64)
        head[hb.H_NCORES], head[hb.H_LMBYTES] = ncores, lm_bytes
        head[hb.H_RVC], head[hb.H_LOCAL] = hb.FIXED, hb.FIXED + ncores * n
        head[hb.LVC + np.arange(n) * (n + 1)] = 1               # clocks start at 1: a stamp is never 0
        tail = np.zeros(ncores * n + R.LH, np.int64)            # cross-core clocks, local list header
        R.init_list(tail, ncores * n, local_shadow.capacity(lm_bytes), local_shadow.LOCAL_WIDTH)
        t = _TEMPLATES[(ncores, lm_bytes)] = (head, tail)
    return t


def new_core_shadow(slot: int, ncores: int, lm_bytes: int) -> np.ndarray:
    """The ``sh`` array of the core at launch slot ``slot``."""
    key = ("sh", ncores, lm_bytes)
    sh = _take(key, core_words(ncores, lm_bytes))
    head, tail = _core_template(ncores, lm_bytes)
    sh[:head.size] = head
    sh[hb.H_SLOT] = slot
    sh[hb.FSNAP:hb.FIXED:hb.SNAP] = 0           # every snapshot slot empty
    sh[hb.FIXED:hb.FIXED + tail.size] = tail
    return POOL.lend(key, sh)


def new_gm_shadows(sizes: list[int], ncores: int, online: bool,
                   uninitialized: list[bool] | None = None) -> tuple[np.ndarray, ...]:
    """The GM shadows of a launch: one per region, the last one npuemu's system region.

    ``online``: the cores wait for each other and run one at a time, so each
    access checks the other cores' ranges as it happens; otherwise
    :func:`check_launch` compares them after the launch.
    ``uninitialized[i]``: region ``i`` holds nothing the host wrote, so a read
    of bytes no core has written is reported.
    """
    out = []
    for i, nbytes in enumerate(sizes):
        system = i == len(sizes) - 1
        key = ("gsh", nbytes, system, ncores)
        g = _take(key, gm_words(nbytes, system, ncores))
        cap = gm_shadow.capacity(nbytes)
        part = R.LH + cap * gm_shadow.GM_WIDTH
        if system and g[hb.GH_DIRTY]:
            g[hb.GH + ncores * part:] = 0
        g[:hb.GH] = 0
        g[hb.GH_NCORES], g[hb.GH_ONLINE], g[hb.GH_NBYTES], g[hb.GH_PART] = ncores, int(online), nbytes, part
        g[hb.GH_UNINIT] = int(bool(uninitialized and uninitialized[i]))
        g[hb.GH_OBJ] = hb.GH + ncores * part if system else 0
        lists = hb.GH + np.arange(ncores, dtype=np.int64) * part
        g[lists + R.L_COUNT] = 0
        g[lists + R.L_CAP] = cap
        g[lists + R.L_WIDTH] = gm_shadow.GM_WIDTH
        g[lists + R.L_OVER] = 0
        out.append(POOL.lend(key, g))
    return tuple(out)


def check_launch(gsh: tuple[np.ndarray, ...], region_names: list[str], locs: list[Any],
                 core_labels: list[str], kernel: str, buffers: Sequence[str] | None = None) -> None:
    """After a launch whose cores never synchronise: raise a RaceError for GM two cores conflict on.

    ``region_names`` describe the GM regions in the message; ``buffers`` are
    the arguments' bare names, the error's ``buffer`` (None when not given).
    """
    for rid, g in enumerate(gsh):
        if g.size <= hb.GH or g[hb.GH_ONLINE]:
            continue
        r = gm_shadow.cross_core_conflict(g)
        if not r[0]:
            continue
        lo, hi, ca, sa, wa, cb, sb, wb = (int(v) for v in r[1:])

        def site(stamp: int) -> str:
            i = (stamp >> 3) & hb.LOC_MASK
            return f"{locs[i].short()} `{locs[i].line_text.strip()}`" if i < len(locs) else "an unknown line"

        loc_b = (sb >> 3) & hb.LOC_MASK
        detail = unsynchronised(lo, hi, region_names[rid], sa & 7, wa, core_labels[ca], site(sa), sb & 7, wb)
        raise errors.RaceError(detail, kernel=kernel, core=core_labels[cb],
                               loc=locs[loc_b] if loc_b < len(locs) else None, pipe=hb.PIPE_NAMES[sb & 7],
                               buffer=buffers[rid] if buffers is not None else None)
