"""Rules for ``ListTensorDesc`` and ``TensorDesc`` (``isa/list_tensor.py`` decodes the GM buffer).

A ListTensorDesc is five run-time integers (the buffer's GM address and what
``init`` decoded); a TensorDesc four (dimension count, index, data address),
plus, in its static type, the ``asc.array`` that ``set_shape_addr`` gave it
for the shape.  Both are filled by mutating methods, which rebind the
variable they are called on.
"""
from __future__ import annotations

import ast

from ...errors import UnsupportedSyntaxError
from ...language import dtype as dt
from ...language import list_tensor as lang
from ..context import LoweringContext
from ..registry import Call, method, rule
from ..types import GlobalAddressT, GlobalTensorT, ListTensorDescT, LocalArrayT, TensorDescT, Value, scalar
from .common import dtype_arg, plain_int
from .tensors import update_receiver

_UNSET = ("0", "0", "0", "-1", "0")


def _decode(lw: LoweringContext, call: Call, a: dict[str, Value]) -> Value:
    data = a["data"]
    if not isinstance(data.type, GlobalAddressT):
        lw.type_error(f"ListTensorDesc needs the GlobalAddress of its buffer, got {lw.describe(data)}", call.node)
    rid, off = (plain_int(c) for c in data.code)
    dim, count, ptroff = lw.new_var("ltdim"), lw.new_var("ltcount"), lw.new_var("ltptr")
    args = [f"_gm[{rid}]", rid, off, lw.int_expr(a["length"], call.node, "length"),
            lw.int_expr(a["shape_size"], call.node, "shape_size")]
    lw.emit(f"{dim}, {count}, {ptroff} = " + lw.call_isa("list_tensor", "decode", args, call.node))
    return Value(ListTensorDescT(), code=(rid, off, dim, count, ptroff))


@rule(lang.ListTensorDesc)
def _list_tensor_desc(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.ListTensorDesc)
    if a["data"].is_const and a["data"].const is None:
        return Value(ListTensorDescT(), code=_UNSET)
    return _decode(lw, call, a)


@method(ListTensorDescT, "init")
def _init(lw: LoweringContext, call: Call) -> None:
    update_receiver(lw, call, _decode(lw, call, call.bind_to(lw, lang.ListTensorDesc.init)))


def _list_args(lt: Value) -> list[str]:
    """``g, rid, off`` of a ListTensorDesc's buffer, then ``dim, count, ptroff``."""
    rid, off, dim, count, ptroff = (plain_int(c) for c in lt.code)
    return [f"_gm[{rid}]", rid, off, dim, count, ptroff]


@method(ListTensorDescT, "get_data_ptr")
def _list_data_ptr(lw: LoweringContext, call: Call) -> Value:
    a = call.bind_to(lw, lang.ListTensorDesc.get_data_ptr)
    d = dtype_arg(lw, a["dtype"], call.node)
    g, rid, off, _, count, ptroff = _list_args(call.recv)
    r, o = lw.new_var("ltrid"), lw.new_var("ltoff")
    args = [g, rid, off, count, ptroff, lw.int_expr(a["index"], call.node, "index"), "len(_gm)"]
    lw.emit(f"{r}, {o} = " + lw.call_isa("list_tensor", "data_ptr", args, call.node))
    return Value(GlobalAddressT(d), code=(r, o))


@method(ListTensorDescT, "get_size")
def _list_size(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.ListTensorDesc.get_size)
    count = plain_int(call.recv.code[3])
    return lw.fresh_value(scalar("int", lw.call_isa("list_tensor", "size", [count], call.node)), "ltn")


@method(ListTensorDescT, "get_desc")
def _get_desc(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.ListTensorDesc.get_desc)
    desc = a["desc"]
    if not isinstance(desc.type, TensorDescT):
        lw.type_error(f"get_desc fills a TensorDesc, got {lw.describe(desc)}", call.node)
    if desc.type.shape is None:
        lw.type_error("call desc.set_shape_addr(buf) with an asc.array(asc.uint64, n) before get_desc: the "
                      "shape is written there", call.node)
    node = call.node.args[0] if call.node.args else next(k.value for k in call.node.keywords if k.arg == "desc")
    g, rid, off, dim, count, ptroff = _list_args(call.recv)
    index = lw.int_expr(a["index"], call.node, "index")
    r, o = lw.new_var("tdrid"), lw.new_var("tdoff")
    args = [g, rid, off, dim, count, ptroff, index, "len(_gm)", desc.type.shape]
    lw.emit(f"{r}, {o} = " + lw.call_isa("list_tensor", "get_desc", args, call.node))
    new = Value(desc.type, code=(dim, plain_int(index), r, o))
    if not (isinstance(node, ast.Name) and lw.update_variable(node.id, new)):
        lw.fail("get_desc must be given a TensorDesc variable", call.node, UnsupportedSyntaxError)


@rule(lang.TensorDesc)
def _tensor_desc(lw: LoweringContext, call: Call) -> Value:
    d = dtype_arg(lw, call.bind_to(lw, lang.TensorDesc)["dtype"], call.node)
    return Value(TensorDescT(d), code=("0", "0", "-1", "0"))


@method(TensorDescT, "set_shape_addr")
def _set_shape_addr(lw: LoweringContext, call: Call) -> None:
    buf = call.bind_to(lw, lang.TensorDesc.set_shape_addr)["shape_ptr"]
    if not isinstance(buf.type, LocalArrayT) or buf.type.dtype not in (dt.uint64, dt.int64):
        lw.type_error(f"set_shape_addr takes the shape buffer as an asc.array(asc.uint64, n), got "
                      f"{lw.describe(buf)}", call.node)
    t = call.recv.type
    update_receiver(lw, call, Value(TensorDescT(t.dtype, buf.type.var, buf.type.n), code=call.recv.code))


@method(TensorDescT, "get_dim", "get_index")
def _desc_int(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, getattr(lang.TensorDesc, call.name))
    return scalar("int", call.recv.code[0 if call.name == "get_dim" else 1])


def _shape_var(lw: LoweringContext, call: Call) -> str:
    if call.recv.type.shape is None:
        lw.type_error(f"TensorDesc.{call.name} needs the shape: call set_shape_addr and get_desc first", call.node)
    return call.recv.type.shape


@method(TensorDescT, "get_shape")
def _desc_shape(lw: LoweringContext, call: Call) -> Value:
    i = lw.int_expr(call.bind_to(lw, lang.TensorDesc.get_shape)["offset"], call.node, "offset")
    args = [_shape_var(lw, call), plain_int(call.recv.code[0]), i]
    return lw.fresh_value(scalar("int", lw.call_isa("list_tensor", "shape_at", args, call.node)), "tds")


def _data(lw: LoweringContext, call: Call) -> tuple[str, str]:
    rid = lw.fresh_value(scalar("int", lw.call_isa("list_tensor", "desc_region", [plain_int(call.recv.code[2])],
                                                   call.node)), "tdr")
    return rid.code[0], call.recv.code[3]


@method(TensorDescT, "get_data_ptr")
def _desc_data_ptr(lw: LoweringContext, call: Call) -> Value:
    call.bind_to(lw, lang.TensorDesc.get_data_ptr)
    return Value(GlobalAddressT(call.recv.type.dtype), code=_data(lw, call))


@method(TensorDescT, "get_data_obj")
def _desc_data_obj(lw: LoweringContext, call: Call) -> Value:
    """A GlobalTensor over the tensor's data, bounded by its element count (the product of its shape)."""
    call.bind_to(lw, lang.TensorDesc.get_data_obj)
    shape = _shape_var(lw, call)
    rid, off = _data(lw, call)
    n = lw.fresh_value(scalar("int", lw.call_isa("list_tensor", "elements", [shape, plain_int(call.recv.code[0])],
                                                 call.node)), "tdn")
    return Value(GlobalTensorT(call.recv.type.dtype), code=(rid, off, n.code[0]))
