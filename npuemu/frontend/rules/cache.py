"""Rules for cache control, and the DCache plumbing of scalar GM accesses.

``data_cache_clean_and_invalid`` takes its mode and destination as
compile-time enum constants (template parameters in Ascend C).  Every DCache
instruction receives the platform's geometry packed in one integer, so one
compiled instruction serves every profile.  A kernel with a scalar GM access
gets the entire-cache flush the compiler appends to a normal kernel; a kernel
without one pays nothing.  A binary built for check level ``full`` calls the
checking forms of the instructions (``*_full``); the others never link the
checking code.
"""
from __future__ import annotations

import numpy as np

from ...isa import dcache
from ...language import cache as lang
from ...language.enums import CacheLine, DcciDst
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import Value, scalar
from .common import global_tensor, plain_int

# DcciDst values that make the DCache coherent with GM; the others are reserved on A2/A3
_GM_TARGETS = (DcciDst.CACHELINE_OUT, DcciDst.CACHELINE_ALL)

# numpy names of the isa storage suffixes (for the typed views of the DCache array); element sizes
_NP_NAMES = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32", "u32": "uint32",
             "i64": "int64", "u64": "uint64", "f32": "float32", "f64": "float64"}
_ESIZE = {sfx: np.dtype(name).itemsize for sfx, name in _NP_NAMES.items()}
_SHIFT = {sfx: size.bit_length() - 1 for sfx, size in _ESIZE.items()}


def geometry_arg(lw: LoweringContext) -> str:
    """This binary's platform's DCache geometry, packed as the instructions take it."""
    return f"np.int64({dcache.pack(lw.platform)})"


def dc_view(lw: LoweringContext, suffix: str) -> str:
    """The name of ``_dc`` viewed as storage type ``suffix``, made once at the top of the kernel.

    A hit reads and writes through it: a NumPy view per access would cost
    more than the whole hit.
    """
    return lw.declare_runtime(f"_dc_{suffix}", f"_dc.view(np.{_NP_NAMES[suffix]})")


def _checked(lw: LoweringContext, fn: str) -> str:
    """The DCache instruction ``fn`` in the form of this binary's check level."""
    return f"{fn}_full" if lw.full_check else fn


def _arrays(lw: LoweringContext) -> list[str]:
    """The arrays a DCache instruction takes (and the race checker's, at check level full)."""
    return ["_st", "_sh", "_gsh", "_gm", "_dc"] if lw.full_check else ["_st", "_gm", "_dc"]


def flush_at_kernel_end(lw: LoweringContext) -> None:
    """Append, once, the whole-DCache clean-and-invalidate the compiler puts at the end of a kernel."""
    lw.facts.dcache = True        # at check level full the launch runs its cores one at a time
    args = ", ".join([*_arrays(lw), geometry_arg(lw)])
    lw.at_kernel_end(f"{lw.isa('dcache', _checked(lw, 'flush_at_end'))}({args})")


# ---------------------------------------------------------------------------- scalar GM access
# ``g.get_value(i)`` checks the index, then reads the element in the DCache array where a hit finds
# it; only a miss calls into the model (``or`` evaluates it only when the hit answers 0):
#
#     at = tensor.gm_elem(_gm, rid, off, size, 4, i, loc)
#     v = _dc_i32[(dcache.load_hit(_st, _dc_i64, rid, at, geo) or tensor.gm_get_i32(_st, _gm, _dc, rid, at, geo, loc)) >> 2]
#
# ``set_value`` likewise stores at ``store_hit`` (a hit on a line already dirty) or ``gm_set_*``.  A
# binary built for check level full asks ``gm_get_*_full`` / ``gm_set_*_full`` for every access.


def _position(lw: LoweringContext, g: Value, idx: str, sfx: str, write: bool, node) -> str:
    """Emit the bounds check of element ``idx`` of ``g``; the expression of the element in ``_dc_<sfx>``."""
    at = lw.new_var("gat")
    rid, geo = plain_int(g.code[0]), geometry_arg(lw)
    check = lw.call_isa("tensor", "gm_elem", ["_gm", rid, plain_int(g.code[1]), plain_int(g.code[2]),
                                                     str(_ESIZE[sfx]), idx], node)
    lw.emit(f"{at} = {check}")
    flush_at_kernel_end(lw)
    fn = f"gm_{'set' if write else 'get'}_{sfx}"
    pos = lw.call_isa("tensor", _checked(lw, fn), [*_arrays(lw), rid, at, geo], node)
    if not lw.full_check:
        hit = f"{lw.isa('dcache', 'store_hit' if write else 'load_hit')}(_st, {dc_view(lw, 'i64')}, {rid}, {at}, {geo})"
        pos = f"({hit} or {pos})"
    return f"{dc_view(lw, sfx)}[{pos} >> {_SHIFT[sfx]}]"


def scalar_gm_load(lw: LoweringContext, g: Value, idx: str, sfx: str, node) -> str:
    """Emit ``g.get_value(idx)`` through the DCache; the expression of the element (storage type)."""
    return _position(lw, g, idx, sfx, False, node)


def scalar_gm_store(lw: LoweringContext, g: Value, idx: str, value: str, sfx: str, node) -> None:
    """Emit ``g.set_value(idx, value)`` (``value``: an expression of the storage type) through the DCache."""
    lw.emit(f"{_position(lw, g, idx, sfx, True, node)} = {value}")


# ---------------------------------------------------------------------------- data_cache_clean_and_invalid


def _enum(lw: LoweringContext, call: Call, v: Value, cls, what: str):
    c = lw.const_value(v, call.node, what)
    try:
        return cls(c)
    except (ValueError, TypeError):
        lw.type_error(f"{call.name}: {what} must be a {cls.__name__} member, got {c!r}", call.node)


@rule(lang.data_cache_clean_and_invalid)
def _data_cache_clean_and_invalid(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.data_cache_clean_and_invalid)   # (entire_type, dst, dcci_dst) or (.., dcci_dst, dst)
    entire = _enum(lw, call, a["entire_type"], CacheLine, "entire_type")
    target = a["dcci_dst"]
    if not (target.is_const and target.const is None):
        target = _enum(lw, call, target, DcciDst, "dcci_dst")
        if target not in _GM_TARGETS:
            lw.type_error(f"data_cache_clean_and_invalid: DcciDst.{target.name} is a reserved value, not "
                          f"supported on this platform (use CACHELINE_OUT)", call.node)
    g = a["dst"]
    global_tensor(lw, g, call.node, "dst of data_cache_clean_and_invalid")
    if entire == CacheLine.ENTIRE_DATA_CACHE:          # the address does not matter
        lw.emit_isa("dcache", _checked(lw, "clean_invalidate_all"), [*_arrays(lw), geometry_arg(lw)],
                    call.node)
    else:                                              # the line holding the tensor's first element
        lw.emit_isa("dcache", _checked(lw, "clean_invalidate_line"),
                    [*_arrays(lw), plain_int(g.code[0]), plain_int(g.code[1]), geometry_arg(lw)], call.node)
    lw.facts.dcache = True


@rule(lang.icache_preload)
def _icache_preload(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.icache_preload)
    lw.int_expr(a["pre_fetch_len"], call.node, "pre_fetch_len")     # checked; the ICache is not modelled


@rule(lang.get_icache_preload_status)
def _get_icache_preload_status(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.get_icache_preload_status)
    return scalar("int", "np.int64(0)")                                 # idle
