"""What the race checker says: its fault codes and the messages of races and uninitialised reads.

The shadow checks (:mod:`npuemu.isa.local_shadow`, :mod:`npuemu.isa.gm_shadow`)
raise ``Fault(code, loc, lo, hi, detail)``: the byte range concerned and one
integer packing the rest (:func:`detail`): the accessing pipe and kind, the
other access's pipe, kind, core and source location, and the memory or GM
region.  The renderers here turn that into the message, naming the pipe and
the buffer as the error's fields, and say what would have ordered the two
accesses.  :func:`unsynchronised` words the race the host finds after a
launch whose cores never synchronise (:func:`npuemu.runtime.shadows.check_launch`).
"""
from __future__ import annotations

from typing import Any

from numba import njit

from .. import errors
from ..language.enums import HardEvent
from .fault import Message, register
from .hb import LOC_MASK, PIPE_NAMES, S

F_RACE_LOCAL = 760
F_UNINIT_LOCAL = 761
F_RACE_GM = 762
F_RACE_GM_CORES = 763
F_UNINIT_GM = 765

_EVENT_OF = {(PIPE_NAMES.index(e.name.split("_")[0]), PIPE_NAMES.index(e.name.split("_")[1])): e.name
             for e in HardEvent}
KIND_NAMES = ("read", "write", "atomic add write", "atomic max write", "atomic min write")


def hazard(write: int, other_write: int) -> str:
    """RAW, WAR or WAW: the later access's kind after the earlier one's."""
    return ("RR", "RAW", "WAR", "WAW")[2 * bool(write) + bool(other_write)]


@njit(cache=True)
def detail(pipe, write, other, other_write, where, other_loc, other_core):
    """The third fault argument: everything about the two accesses but their byte range."""
    return (pipe | write << 3 | other << 4 | other_write << 7 | where << 8 | other_core << 16
            | (other_loc & LOC_MASK) << 32)


@njit(cache=True)
def atomic_detail(atomic, other_atomic):
    """Bits to OR into :func:`detail` for GM writes made in a core's atomic mode (operation + 1, 0: plain)."""
    return atomic << 53 | other_atomic << 55


def kinds(c: int) -> tuple[int, int]:
    """The :data:`KIND_NAMES` indices of the two accesses of a GM race's :func:`detail`."""
    write, owrite, atomic, oatomic = (c >> 3) & 1, (c >> 7) & 1, (c >> 53) & 3, (c >> 55) & 3
    return (1 + atomic if atomic else write), (1 + oatomic if oatomic else owrite)


def _atomic_hint(k: int, ok: int) -> str:
    return (" (atomic writes of one operation need no order among themselves; a plain write, a read or an "
            "atomic write of another operation does)" if k >= 2 or ok >= 2 else "")


def unpack_detail(c: int) -> tuple[int, int, int, int, int, int, int]:
    """``(pipe, write, other pipe, other write, memory or region, other core, other loc)`` of :func:`detail`."""
    return (c & 7, (c >> 3) & 1, (c >> 4) & 7, (c >> 7) & 1, (c >> 8) & 0xFF, (c >> 16) & 0xFFFF,
            (c >> 32) & LOC_MASK)


def _fix_hint(other: int, pipe: int) -> str:
    """What would have ordered an access of pipe ``other`` before one of pipe ``pipe``."""
    name = _EVENT_OF.get((other, pipe))
    if other == S:
        return f"missing set_flag/wait_flag {name} after the scalar write"
    if name is None:
        return "missing pipe_barrier(PIPE_ALL)"
    return f"missing set_flag/wait_flag {name}, or a queue"


def _core_name(env: Any, slot: int) -> str:
    label = getattr(env, "core_label", None)
    return label(slot) if label is not None else f"the core in launch slot {slot}"


def _render_local_race(a: int, b: int, c: int, env: Any) -> Message:
    pipe, write, other, owrite, hw, _, oloc = unpack_detail(c)
    return Message(f"{hazard(write, owrite)}: {PIPE_NAMES[pipe]} {KIND_NAMES[write]} of {env.hardware(hw)} "
                   f"bytes [{a}, {b}) races with the {PIPE_NAMES[other]} {KIND_NAMES[owrite]} at "
                   f"{env.source(oloc)}: nothing orders them ({_fix_hint(other, pipe)})", PIPE_NAMES[pipe],
                   env.hardware(hw))


def _render_uninit(a: int, b: int, c: int, env: Any) -> Message:
    pipe, _, _, _, hw, _, _ = unpack_detail(c)
    return Message(f"{PIPE_NAMES[pipe]} read of {env.hardware(hw)} bytes [{a}, {b}), which nothing has written: "
                   f"on hardware this reads whatever an earlier kernel left there", PIPE_NAMES[pipe],
                   env.hardware(hw))


def _render_uninit_gm(a: int, b: int, c: int, env: Any) -> Message:
    pipe, _, _, _, rid, _, _ = unpack_detail(c)
    k, _ = kinds(c)
    if k >= 2:
        return Message(f"{PIPE_NAMES[pipe]} {KIND_NAMES[k]} of GM bytes [{a}, {b}) of {env.region(rid)}, which "
                       f"nothing has written: the host passed that buffer uninitialised, and an atomic write "
                       f"combines with what GM holds, so on hardware it adds to whatever was left in that memory "
                       f"(write the accumulator first, or pass it initialised)", PIPE_NAMES[pipe],
                       env.region_name(rid))
    return Message(f"{PIPE_NAMES[pipe]} read of GM bytes [{a}, {b}) of {env.region(rid)}, which nothing has "
                   f"written: the host passed that buffer uninitialised and no write ordered before this read "
                   f"filled these bytes, so on hardware it reads whatever was left in that memory",
                   PIPE_NAMES[pipe], env.region_name(rid))


def _render_gm_race(a: int, b: int, c: int, env: Any) -> Message:
    pipe, write, other, owrite, rid, _, oloc = unpack_detail(c)
    k, ok = kinds(c)
    return Message(f"{hazard(write, owrite)}: {PIPE_NAMES[pipe]} {KIND_NAMES[k]} of GM bytes [{a}, {b}) of "
                   f"{env.region(rid)} races with the {PIPE_NAMES[other]} {KIND_NAMES[ok]} at "
                   f"{env.source(oloc)}: nothing orders them ({_fix_hint(other, pipe)}){_atomic_hint(k, ok)}",
                   PIPE_NAMES[pipe], env.region_name(rid))


def _render_gm_cores(a: int, b: int, c: int, env: Any) -> Message:
    pipe, write, other, owrite, rid, core, oloc = unpack_detail(c)
    k, ok = kinds(c)
    return Message(f"{hazard(write, owrite)}: {PIPE_NAMES[pipe]} {KIND_NAMES[k]} of GM bytes [{a}, {b}) of "
                   f"{env.region(rid)} races with the {PIPE_NAMES[other]} {KIND_NAMES[ok]} by "
                   f"{_core_name(env, core)} at {env.source(oloc)}: no cross-core synchronisation (sync_all, "
                   f"cross_core_set_flag/wait_flag, ...) orders them{_atomic_hint(k, ok)}", PIPE_NAMES[pipe],
                   env.region_name(rid))


register({
    F_RACE_LOCAL: (errors.RaceError, _render_local_race),
    F_UNINIT_LOCAL: (errors.UninitializedReadError, _render_uninit),
    F_RACE_GM: (errors.RaceError, _render_gm_race),
    F_UNINIT_GM: (errors.UninitializedReadError, _render_uninit_gm),
    F_RACE_GM_CORES: (errors.RaceError, _render_gm_cores),
})


def unsynchronised(lo: int, hi: int, region: str, pipe_a: int, write_a: int, core_a: str, site_a: str,
                   pipe_b: int, write_b: int) -> str:
    """The message of GM bytes [lo, hi) that access ``b`` touches after another core's access ``a``
    (at least one a write) in a launch whose cores never synchronise; ``write_*`` index :data:`KIND_NAMES`."""
    kind = "WAW" if write_a and write_b else "RAW/WAR"         # the cores run in parallel: either order
    return (f"{kind}: {PIPE_NAMES[pipe_b]} {KIND_NAMES[write_b]} of GM bytes [{lo}, {hi}) of {region} "
            f"races with the {PIPE_NAMES[pipe_a]} {KIND_NAMES[write_a]} by {core_a} at {site_a}: the cores "
            f"do not synchronise (sync_all, cross_core_set_flag/wait_flag, ...), so nothing orders them"
            f"{_atomic_hint(write_a, write_b)}")
