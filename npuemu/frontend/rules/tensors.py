"""Rules for tensors and addresses: ``GlobalAddress``, ``GlobalTensor``, ``LocalTensor`` and ``LocalMemAllocator``.

A tensor is a handful of runtime integers (see ``docs/internals.md``): its
methods become arithmetic on them, scalar element accesses (through the
DCache for GM) and checks of index and position.  TPipe's queues and buffers,
the other source of LocalTensors, are in :mod:`.tpipe`.
"""
from __future__ import annotations

import ast
import itertools
import weakref

from ...errors import UnsupportedSyntaxError
from ...isa import hb
from ...isa import state as S
from ...language import core as lang
from ...language import dtype as dt
from ...language.enums import POSITION_MEMORY, CacheMode, CacheRwMode, Hardware, TPosition
from ..context import LoweringContext
from ..registry import Call, attribute, method, rule
from ..types import AllocatorT, GlobalAddressT, GlobalTensorT, LocalTensorT, Value, const, is_number, scalar
from . import access
from .cache import scalar_gm_load, scalar_gm_store
from .common import STORAGE_SUFFIX, dtype_arg, memory_of, position_arg, settle_l0c

# ---------------------------------------------------------------------------- dtype and addresses


@attribute(GlobalAddressT, "dtype")
@attribute(GlobalTensorT, "dtype")
@attribute(LocalTensorT, "dtype")
def _dtype(lw: LoweringContext, obj: Value, node) -> Value:
    if obj.type.dtype is None:
        lw.type_error("this GlobalTensor has no dtype until set_global_buffer binds it", node)
    return const(obj.type.dtype)


def _offset_address(lw: LoweringContext, call: Call) -> Value:
    addr, n = call.recv, call.args[0]
    if not (is_number(n) and lw.int_expr(n, call.node)):
        lw.type_error("a GlobalAddress can only be offset by an integer number of elements", call.node)
    step = addr.type.dtype.sizeof()
    sign = "-" if call.name == "-" else "+"
    return Value(addr.type, code=(addr.code[0], f"({addr.code[1]} {sign} ({lw.int_expr(n, call.node)}) * {step})"))


method(GlobalAddressT, "__add__", "__radd__", "__sub__")(_offset_address)


# ---------------------------------------------------------------------------- GlobalTensor

# the GlobalTensor objects each lowering has made, numbered from 1
_MADE: weakref.WeakKeyDictionary[LoweringContext, itertools.count] = weakref.WeakKeyDictionary()


@rule(lang.GlobalTensor)
def _global_tensor(lw: LoweringContext, call: Call) -> Value:
    if call.args or call.kwargs:
        lw.type_error("GlobalTensor() takes no arguments; bind it with set_global_buffer", call.node)
    made = _MADE.setdefault(lw, itertools.count(1))
    return Value(GlobalTensorT(None, ident=next(made)), code=("0", "0", "-1"))


@method(GlobalTensorT, "set_global_buffer")
def _set_global_buffer(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.GlobalTensor.set_global_buffer)
    buf, size = a["buffer"], a["buffer_size"]
    if not isinstance(buf.type, GlobalAddressT):
        lw.type_error(f"set_global_buffer needs a GlobalAddress (a kernel array argument, possibly offset), "
                      f"got {lw.describe(buf)}", call.node)
    size_code = "-1" if size.is_const and size.const is None else lw.int_expr(size, call.node, "buffer_size")
    origin = int(buf.code[0]) if buf.code[0].isdigit() else None      # the parameter's region id
    old = call.recv.type
    if old.dtype is not None and old.origin != origin:
        origin = None               # bound before to another region: either may be what later code sees
    new = Value(GlobalTensorT(buf.type.dtype, origin=origin, ident=old.ident),
                code=(buf.code[0], buf.code[1], size_code))
    update_receiver(lw, call, new)


def update_receiver(lw: LoweringContext, call: Call, new: Value) -> None:
    """Store ``new`` into the variable the method was called on (mutating methods)."""
    node = call.recv_node
    if not isinstance(node, ast.Name):
        lw.fail(f"{call.name} must be called on a variable", call.node, UnsupportedSyntaxError)
    if not lw.update_variable(node.id, new):
        lw.fail(f"{call.name} must be called on a variable", call.node, UnsupportedSyntaxError)


def _bound(lw: LoweringContext, call: Call) -> Value:
    """The receiver of a GlobalTensor method, which must have been bound to memory."""
    if call.recv.type.dtype is None:
        lw.type_error("GlobalTensor used before set_global_buffer", call.node)
    return call.recv


@method(GlobalTensorT, "__getitem__")
def _gm_getitem(lw: LoweringContext, call: Call) -> Value:
    g = _bound(lw, call)
    start = lw.int_expr(call.args[0], call.node, "a GlobalTensor index")
    if start == "0":
        return g
    out = lw.new_var("goff"), lw.new_var("gsize")
    fn = lw.call_isa("tensor", "gm_sub_tensor", [g.code[1], g.code[2], str(g.type.dtype.sizeof()), start],
                     call.node)
    lw.emit(f"{out[0]}, {out[1]} = {fn}")
    return Value(g.type, code=(g.code[0], out[0], out[1]))


@method(GlobalTensorT, "set_l2_cache_hint")
def _l2_cache_hint(lw: LoweringContext, call: Call) -> None:
    """A hint for the L2 cache, which npuemu does not model: the enums are checked, nothing else happens."""
    a = call.bind_to(lw, lang.GlobalTensor.set_l2_cache_hint)
    for key, cls in (("mode", CacheMode), ("rw_mode", CacheRwMode)):
        v = lw.const_value(a[key], call.node, key)
        if not isinstance(v, cls):
            lw.type_error(f"set_l2_cache_hint {key} must be an asc.{cls.__name__}, got {v!r}", call.node)


@method(GlobalTensorT, "get_size")
def _gm_get_size(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.GlobalTensor.get_size)
    g = _bound(lw, call)
    return scalar("int", f"({g.code[2]} if {g.code[2]} >= 0 else "
                         f"(_gm[{g.code[0]}].size - {g.code[1]}) // {g.type.dtype.sizeof()})")


@method(GlobalTensorT, "get_phy_addr")
def _gm_phy_addr(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.GlobalTensor.get_phy_addr)
    g = _bound(lw, call)
    off = lw.int_expr(a["offset"], call.node)
    return Value(GlobalAddressT(g.type.dtype),
                 code=(g.code[0], f"({g.code[1]} + ({off}) * {g.type.dtype.sizeof()})"))


def scalar_kind(d: dt.DataType) -> str:
    return "float" if d.is_float else "int"


def from_storage(d: dt.DataType, expr: str, lw: LoweringContext) -> str:
    if d is dt.float16:
        return f"{lw.isa('scalar', 'f16_to_f32')}({expr})"
    if d is dt.bfloat16:
        return f"{lw.isa('scalar', 'bf16_to_f32')}({expr})"
    if d.is_float:
        return f"_f32({expr})"
    return f"np.int64({expr})"      # scalar ints are int64; uint64 keeps its bits


def to_storage(d: dt.DataType, value: Value, lw: LoweringContext, node: ast.AST | None) -> str:
    if d is dt.float16:
        return f"{lw.isa('scalar', 'f32_to_f16')}({lw.materialize(value, node, 'float')})"
    if d is dt.bfloat16:
        return f"{lw.isa('scalar', 'f32_to_bf16')}({lw.materialize(value, node, 'float')})"
    np_name = {"f32": "float32", "f64": "float64"}.get(STORAGE_SUFFIX[d])
    if np_name:
        return f"np.{np_name}({lw.materialize(value, node, 'float')})"
    # through int64, so that out-of-range values wrap (as a C++ assignment does) in both modes
    if value.is_const and isinstance(value.const, int) and not isinstance(value.const, bool):
        return f"np.{d.storage.name}(np.int64({lw.u64_expr(value, node)}))"
    return f"np.{d.storage.name}(np.int64({lw.materialize(value, node)}))"


@method(GlobalTensorT, "get_value", "__call__")
def _gm_get_value(lw: LoweringContext, call: Call) -> Value:
    g = _bound(lw, call)
    a = call.bind_to(lw, lang.GlobalTensor.get_value)
    idx = lw.int_expr(a["index"], call.node, "an element index")
    raw = scalar_gm_load(lw, g, idx, STORAGE_SUFFIX[g.type.dtype], call.node)     # through the DCache
    return lw.fresh_value(scalar(scalar_kind(g.type.dtype), from_storage(g.type.dtype, raw, lw)), "gv")


@method(GlobalTensorT, "set_value")
def _gm_set_value(lw: LoweringContext, call: Call) -> None:
    g = _bound(lw, call)
    a = call.bind_to(lw, lang.GlobalTensor.set_value)
    idx = lw.int_expr(a["index"], call.node, "an element index")
    val = to_storage(g.type.dtype, a["value"], lw, call.node)
    lw.emit(f"_st[{S.SK_GT}] = {g.type.ident % S.N_PEND}")       # whose deferred line (in a SuperKernel)
    scalar_gm_store(lw, g, idx, val, STORAGE_SUFFIX[g.type.dtype], call.node)      # through the DCache


@method(GlobalTensorT, "__setitem__")
def _gm_setitem(lw: LoweringContext, call: Call) -> None:
    """``g[i] = v``: Ascend C's ``g(i) = v``, a scalar write through the DCache that, unlike ``set_value``,
    never cleans its line, in a SuperKernel's sub-kernel too (the developer cleans it, spec §1.8)."""
    g = _bound(lw, call)
    idx = lw.int_expr(call.args[0], call.node, "an element index")
    val = to_storage(g.type.dtype, call.args[1], lw, call.node)
    saved = lw.new_var("skf")
    lw.emit(f"{saved} = _st[{S.SK_FLAGS}]")
    lw.emit(f"_st[{S.SK_FLAGS}] = {saved} & ~{S.SK_GETSET_DCCI}")
    scalar_gm_store(lw, g, idx, val, STORAGE_SUFFIX[g.type.dtype], call.node)
    lw.emit(f"_st[{S.SK_FLAGS}] = {saved}")


# ---------------------------------------------------------------------------- LocalTensor


@rule(lang.LocalTensor)
def _local_tensor(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.LocalTensor)
    d = dtype_arg(lw, a["dtype"], call.node)
    pos = position_arg(lw, a["pos"], call.node)
    hw = memory_of(lw, pos, call.node)
    addr = lw.int_expr(a["addr"], call.node, "addr")
    n = lw.int_expr(a["tile_size"], call.node, "tile_size")
    out = lw.new_var("laddr")
    lw.emit(f"{out} = " + lw.call_isa("tensor", "static_tensor",
                                      ["_st", str(int(hw)), addr, f"({n}) * {d.sizeof()}"], call.node))
    return Value(LocalTensorT(d, pos), code=(out, n))


@method(LocalTensorT, "__getitem__")
def _local_getitem(lw: LoweringContext, call: Call) -> Value:
    t = call.recv
    start = lw.int_expr(call.args[0], call.node, "a LocalTensor index")
    if start == "0":
        return t
    a, n = lw.new_var("laddr"), lw.new_var("llen")
    lw.emit(f"{a}, {n} = " + lw.call_isa("tensor", "sub_tensor",
                                         [t.code[0], t.code[1], str(t.type.dtype.sizeof()), start], call.node))
    return Value(t.type, code=(a, n))


@method(LocalTensorT, "get_size", "get_length")
def _local_size(lw: LoweringContext, call: Call) -> Value:
    t = call.recv
    if call.name == "get_length":
        return scalar("int", f"({t.code[1]} * {t.type.dtype.sizeof()})")
    return scalar("int", t.code[1])


@method(LocalTensorT, "get_position")
def _local_position(lw: LoweringContext, call: Call) -> Value:
    return const(call.recv.type.pos)


@method(LocalTensorT, "get_phy_addr")
def _local_phy_addr(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.LocalTensor.get_phy_addr)
    t = call.recv
    hw = POSITION_MEMORY[t.type.pos]
    off = lw.int_expr(a["offset"], call.node)       # in elements, as Ascend C's GetPhyAddr(offset)
    return scalar("int", f"({t.code[0]} - _st[{S.SEG_BASE + int(hw)}] + ({off}) * {t.type.dtype.sizeof()})")


@method(LocalTensorT, "reinterpret_cast")
def _reinterpret(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.LocalTensor.reinterpret_cast)
    t = call.recv
    d = dtype_arg(lw, a["dtype"], call.node)
    old = t.type.dtype.sizeof()
    return Value(LocalTensorT(d, t.type.pos), code=(t.code[0], f"({t.code[1]} * {old} // {d.sizeof()})"))


@method(LocalTensorT, "get_value", "__call__")
def _local_get_value(lw: LoweringContext, call: Call) -> Value:
    t = call.recv
    a = call.bind_to(lw, lang.LocalTensor.get_value)
    idx = lw.int_expr(a["index"], call.node, "an element index")
    _scalar_access(lw, t, idx, access.READ, call.node)
    settle_l0c(lw, t, call.node)
    raw = lw.call_isa("tensor", f"local_get_{STORAGE_SUFFIX[t.type.dtype]}",
                      ["_lm", t.code[0], t.code[1], idx], call.node)
    return lw.fresh_value(scalar(scalar_kind(t.type.dtype), from_storage(t.type.dtype, raw, lw)), "lv")


@method(LocalTensorT, "set_value")
def _local_set_value(lw: LoweringContext, call: Call) -> None:
    t = call.recv
    a = call.bind_to(lw, lang.LocalTensor.set_value)
    idx = lw.int_expr(a["index"], call.node, "an element index")
    val = to_storage(t.type.dtype, a["value"], lw, call.node)
    _scalar_access(lw, t, idx, access.WRITE, call.node)
    settle_l0c(lw, t, call.node)
    lw.emit_isa("tensor", f"local_set_{STORAGE_SUFFIX[t.type.dtype]}", ["_lm", t.code[0], t.code[1], idx, val],
                call.node)


def _scalar_access(lw: LoweringContext, t: Value, idx: str, kind: int, node) -> None:
    """Element ``idx`` of ``t``, read or written by the scalar unit (an index outside ``t`` is not declared:
    the access itself reports it)."""
    if lw.declares_access:
        size = t.type.dtype.sizeof()
        lw.local_access(hb.S, f"({t.code[0]}) + ({idx}) * {size}",
                        f"({size} if 0 <= ({idx}) < ({t.code[1]}) else 0)", kind, node,
                        where=access.where(t))


# ---------------------------------------------------------------------------- LocalTensorAuto


@rule(lang.LocalTensorAuto)
def _local_tensor_auto(lw: LoweringContext, call: Call) -> Value:
    """A UB range per call site (and inlining chain), 32-byte aligned, bumped upward from UB offset 0."""
    a = call.bind_to(lw, lang.LocalTensorAuto)
    d = dtype_arg(lw, a["dtype"], call.node)
    shape = a["shape"]
    dims = shape.const if shape.is_const else None
    if isinstance(dims, int) and not isinstance(dims, bool):
        dims = (dims,)
    if not (isinstance(dims, (tuple, list)) and dims
            and all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in dims)):
        lw.type_error(f"LocalTensorAuto: shape must be a compile-time positive element count or tuple of "
                      f"counts (its UB is allocated when the kernel is compiled), got {lw.describe(shape)}",
                      call.node)
    n = 1
    for x in dims:
        n *= x
    nbytes = n * d.sizeof()
    site = (lw.loc_id(call.node), lw.loc_id(None))          # the call and the function it is inlined into
    off = lw.facts.auto_ub.get(site)
    if off is None:
        off = lw.facts.auto_ub_end
        lw.facts.auto_ub[site] = off
        lw.facts.auto_ub_end = off + (nbytes + 31) // 32 * 32
    out = lw.new_var("laddr")
    # the UB bounds check of a static tensor: a kernel whose LocalTensorAutos exceed UB fails here
    lw.emit(f"{out} = " + lw.call_isa("tensor", "static_tensor", ["_st", str(int(Hardware.UB)), str(off),
                                                                   str(nbytes)], call.node))
    return Value(LocalTensorT(d, TPosition.VECCALC, region=(off, off + nbytes)), code=(out, str(n)))


# ---------------------------------------------------------------------------- LocalMemAllocator


@rule(lang.LocalMemAllocator)
def _allocator(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.LocalMemAllocator)
    hw = lw.const_value(a["hardware"], call.node, "the hardware")
    return Value(AllocatorT(int(Hardware(hw))), code=("0",))


@method(AllocatorT, "alloc")
def _allocator_alloc(lw: LoweringContext, call: Call) -> Value:
    al = call.recv
    a = call.bind_to(lw, lang.LocalMemAllocator.alloc)
    pos = position_arg(lw, a["pos"], call.node)
    if memory_of(lw, pos, call.node) != al.type.hardware:
        lw.type_error(f"position {pos.name} is not in {Hardware(al.type.hardware).name}", call.node)
    d = dtype_arg(lw, a["dtype"], call.node)
    n = lw.int_expr(a["tile_size"], call.node, "tile_size")
    addr = lw.new_var("laddr")
    lw.emit(f"{addr} = " + lw.call_isa("tensor", "static_tensor",
                                       ["_st", str(al.type.hardware), al.code[0], f"({n}) * {d.sizeof()}"], call.node))
    nxt = Value(al.type, code=(f"(({al.code[0]}) + ({n}) * {d.sizeof()} + 31) // 32 * 32",))
    if isinstance(call.recv_node, ast.Name):
        update_receiver(lw, call, nxt)
    return Value(LocalTensorT(d, pos), code=(addr, n))


@method(AllocatorT, "get_cur_addr")
def _allocator_cur(lw: LoweringContext, call: Call) -> Value:
    return scalar("int", call.recv.code[0])
