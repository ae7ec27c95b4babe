"""Rules for the sorting family (:mod:`npuemu.language.sort`); semantics in :mod:`npuemu.isa.sort`.

The score types each instruction takes are the language module's ``DTYPES``;
indices are uint32.  ``mrg_sort4`` and the Region Proposal instructions are
refused here: no npuemu platform (all Atlas A2/A3) has them.
"""
from __future__ import annotations

import ast
from typing import Callable

from ...isa import hb
from ...language import dtype as dt
from ...language import sort as lang
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import LocalTensorT, RecordT, TupleT, Value, const, is_number, scalar
from . import access
from .common import check_dtype, const_bool, dtype_arg, local
from .vec_reduce import emit, operands

_LISTS = ("src1", "src2", "src3", "src4")
_INFO = ("element_lengths", "if_exhausted_suspension", "valid_bit", "repeat_times")


def _indices(lw: LoweringContext, call: Call, v: Value, what: str) -> None:
    local(lw, v, call.node, what)
    check_dtype(lw, f"{call.name} {what}", v.type.dtype, (dt.uint32,), call.node)


def _half(d: dt.DataType) -> str:
    return "1" if d is dt.float16 else "0"


def _group_accesses(lw: LoweringContext, call: Call, dst: Value, scores: Value, index: Value, repeat: str) -> str:
    """Declare sort32's reads and writes; returns the clamped repeat count expression."""
    reps = f"max(0, min({repeat}, 255))"
    access.local_count(lw, hb.V, scores, f"{lang.SORT32_ELEMENTS} * {reps}", access.READ, call.node)
    access.local_count(lw, hb.V, index, f"{lang.SORT32_ELEMENTS} * {reps}", access.READ, call.node)
    access.local(lw, hb.V, dst, f"{lang.SORT32_ELEMENTS * lang.ENTRY_BYTES} * {reps}", access.WRITE, call.node)
    return reps


@rule(lang.sort32)
def _sort32(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.sort32)
    d = operands(lw, call, a, ("dst", "src0"), lang.DTYPES[lang.sort32])
    _indices(lw, call, a["src1"], "src1")
    repeat = lw.int_expr(a["repeat_time"], call.node, "repeat_time")
    _group_accesses(lw, call, a["dst"], a["src0"], a["src1"], repeat)
    emit(lw, "sort", "sort32", ["_lm", _half(d), *a["dst"].code, *a["src0"].code, *a["src1"].code, repeat],
         call.node)


@rule(lang.sort)
def _sort(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.sort)
    d = operands(lw, call, a, ("dst", "concat", "tmp"), lang.DTYPES[lang.sort])
    _indices(lw, call, a["index"], "index")
    full = const_bool(lw, a["is_full_sort"], call.node, "sort's is_full_sort")
    repeat = lw.int_expr(a["repeat_time"], call.node, "repeat_time")
    reps = _group_accesses(lw, call, a["dst"], a["concat"], a["index"], repeat)
    if full:
        nbytes = f"{lang.SORT32_ELEMENTS * lang.ENTRY_BYTES} * {reps}"
        access.local(lw, hb.V, a["dst"], nbytes, access.READ, call.node)
        access.local(lw, hb.V, a["tmp"], nbytes, access.WRITE, call.node)
    emit(lw, "sort", "sort", ["_lm", _half(d), str(int(full)), *a["dst"].code, *a["concat"].code,
                              *a["index"].code, *a["tmp"].code, repeat], call.node)


# --------------------------------------------------------------------------- merging


def _four(lw: LoweringContext, v: Value, node: ast.AST | None, what: str) -> list[Value]:
    """A list of four numbers (element lengths), constant or built in the kernel."""
    if v.is_const and isinstance(v.const, (list, tuple)):
        items = [const(c) for c in v.const]
    elif isinstance(v.type, TupleT):
        items = list(v.items)
    else:
        lw.type_error(f"{what} must be a list of {lang.MRG_SORT_ELEMENT_LEN} ints, got {lw.describe(v)}", node)
    if len(items) != lang.MRG_SORT_ELEMENT_LEN or not all(is_number(i) for i in items):
        lw.type_error(f"{what} must hold {lang.MRG_SORT_ELEMENT_LEN} ints (one length per list), got "
                      f"{len(items)} values", node)
    return items


def _runtime(lw: LoweringContext, v: Value) -> Value:
    return v if v.is_const else lw.fresh_value(v, "p")


@rule(lang.MrgSort4Info)
def _mrg_sort4_info(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "element_lengths, if_exhausted_suspension=False, valid_bit=15, repeat_times=1")
    lengths = [_runtime(lw, v) for v in _four(lw, a["element_lengths"], call.node, "MrgSort4Info.element_lengths")]
    items = [Value(TupleT(lang.MRG_SORT_ELEMENT_LEN), items=tuple(lengths))]
    for name in _INFO[1:]:
        v = a[name]
        if not is_number(v):
            lw.type_error(f"MrgSort4Info.{name} must be a number, got {lw.describe(v)}", call.node)
        items.append(_runtime(lw, v))
    return Value(RecordT(lang.MrgSort4Info, _INFO), items=tuple(items))


@rule(lang.MrgSortSrcList)
def _mrg_sort_src_list(lw: LoweringContext, call: Call) -> Value:
    a = call.bind(lw, "dtype, src1=None, src2=None, src3=None, src4=None")
    dtype = None
    if isinstance(a["dtype"].type, LocalTensorT):       # the tensors alone, as pyasc's examples write it
        if not (a["src4"].is_const and a["src4"].const is None):
            lw.type_error("MrgSortSrcList takes at most four lists", call.node)
        tensors = [a["dtype"], a["src1"], a["src2"], a["src3"]]
    else:
        dtype = dtype_arg(lw, a["dtype"], call.node, "MrgSortSrcList's dtype")
        tensors = [a[n] for n in _LISTS]
    items = [const(dtype)]
    for i, t in enumerate(tensors):
        if t.is_const and t.const is None:
            if i < 2:
                lw.type_error(f"MrgSortSrcList needs src{i + 1} (a merge takes at least two lists)", call.node)
            items.append(t)
            continue
        local(lw, t, call.node, f"MrgSortSrcList's src{i + 1}")
        if dtype is not None and t.type.dtype is not dtype:
            lw.type_error(f"MrgSortSrcList is of {dtype.name} but src{i + 1} is {t.type.dtype.name}", call.node)
        items.append(_runtime(lw, t))
    return Value(RecordT(lang.MrgSortSrcList, ("dtype", *_LISTS)), items=tuple(items))


def _info_values(lw: LoweringContext, call: Call, a: dict[str, Value]) -> tuple[list[Value], Value, Value, Value]:
    """(lengths, valid_bit, repeat, suspension) of either form of mrg_sort."""
    if "params" not in a:
        susp = const_bool(lw, a["is_exhausted_suspension"], call.node, "mrg_sort's is_exhausted_suspension")
        sorted_num = a["sorted_num"]
        if not (isinstance(sorted_num.type, TupleT) or (sorted_num.is_const and isinstance(sorted_num.const,
                                                                                           (list, tuple)))):
            lw.type_error(f"mrg_sort's sorted_num must be a list, got {lw.describe(sorted_num)}", call.node)
        lengths = _four(lw, a["element_count_list"], call.node, "mrg_sort's element_count_list")
        return lengths, a["valid_bit"], a["repeat_time"], const(susp)
    p = a["params"]
    if p.is_const and isinstance(p.const, lang.MrgSort4Info):        # a host-side instance
        info = p.const
        return (_four(lw, const(list(info.element_lengths)), call.node, "MrgSort4Info.element_lengths"),
                const(info.valid_bit), const(info.repeat_times), const(bool(info.if_exhausted_suspension)))
    if not (isinstance(p.type, RecordT) and p.type.cls is lang.MrgSort4Info):
        lw.type_error(f"mrg_sort's params must be an asc.MrgSort4Info, got {lw.describe(p)}", call.node)
    return list(p.item("element_lengths").items), p.item("valid_bit"), p.item("repeat_times"), \
        p.item("if_exhausted_suspension")


@rule(lang.mrg_sort)
def _mrg_sort(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.mrg_sort)
    dst, sl = a["dst"], a["sort_list"]
    d = local(lw, dst, call.node, "dst").dtype
    check_dtype(lw, call.name, d, lang.DTYPES[lang.mrg_sort], call.node)
    if not (isinstance(sl.type, RecordT) and sl.type.cls is lang.MrgSortSrcList):
        lw.type_error(f"mrg_sort's sort_list must be an asc.MrgSortSrcList, got {lw.describe(sl)}", call.node)
    srcs = [sl.item(n) for n in _LISTS]
    for i, s in enumerate(srcs):
        if isinstance(s.type, LocalTensorT) and s.type.dtype is not d:
            lw.type_error(f"mrg_sort: dst is {d.name} but sort_list.src{i + 1} is {s.type.dtype.name}", call.node)
    lengths, valid, repeat, susp = _info_values(lw, call, a)
    if valid.is_const:
        vb = valid.const
        if vb not in (3, 7, 15):
            lw.type_error(f"mrg_sort's valid_bit must be 3 (lists 1-2), 7 (lists 1-3) or 15 (lists 1-4), got "
                          f"{vb!r}", call.node)
        for i in (2, 3):
            if vb & (1 << i) and not isinstance(srcs[i].type, LocalTensorT):
                lw.type_error(f"mrg_sort's valid_bit {vb} merges list {i + 1}, but the MrgSortSrcList has no "
                              f"src{i + 1}", call.node)
    ls = [lw.int_expr(v, call.node, "element length") for v in lengths]
    vb = lw.int_expr(valid, call.node, "valid_bit")
    rep = lw.int_expr(repeat, call.node, "repeat_times")
    sus = lw.int_expr(susp, call.node, "is_exhausted_suspension")
    # which entries are touched: the lists valid_bit names, repeat times; a suspended merge reads and writes
    # a data-dependent part of it (declared as a span: races only)
    if lw.declares_access:
        total = " + ".join(f"((({ls[i]}) if ({vb}) & {1 << i} else 0))" for i in range(4))
        reps = f"max(1, min({rep}, 255))"
        read = access.READ if (susp.is_const and not susp.const) else access.READ_SPAN
        for i, s in enumerate(srcs):
            if isinstance(s.type, LocalTensorT):
                reach = f"((({reps}) - 1) * ({total}) + ({ls[i]})) * {lang.ENTRY_BYTES}"
                access.local(lw, hb.V, s, f"(({reach}) if ({vb}) & {1 << i} else 0)", read, call.node)
        access.local(lw, hb.V, dst, f"({reps}) * ({total}) * {lang.ENTRY_BYTES}", access.WRITE, call.node)
    tensors = []
    for s in srcs:
        tensors += list(s.code) if isinstance(s.type, LocalTensorT) else ["0", "0"]
    given = [str(int(isinstance(s.type, LocalTensorT))) for s in srcs[2:]]
    emit(lw, "sort", "mrg_sort", ["_lm", "_st", _half(d), *dst.code, *tensors, *given, *ls, vb, rep, sus],
         call.node)


@rule(lang.get_mrg_sort_result)
def _get_mrg_sort_result(lw: LoweringContext, call: Call) -> Value:
    call.bind(lw, "")
    fn = lw.isa("sort", "mrg_sort_result")
    counts = tuple(lw.fresh_value(scalar("int", f"{fn}(_st, {k})"), "sorted") for k in range(4))
    return Value(TupleT(4), items=counts)


# --------------------------------------------------------------------------- sorted-structure sizes


def _sort_size(lw: LoweringContext, call: Call, stub: Callable, what: str) -> Value:
    a = call.bind_to(lw, stub)
    d = a["dtype"]
    d = dt.float32 if d.is_const and d.const is None else dtype_arg(lw, d, call.node, f"{call.name}'s dtype")
    check_dtype(lw, call.name, d, lang.DTYPES[stub], call.node)
    per_entry = lang.ENTRY_BYTES // d.sizeof()
    n = a[what]
    if n.is_const:
        c = n.const
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= 0xFFFFFFFF:
            lw.type_error(f"{call.name}'s {what} must be a uint32, got {lw.describe(n)}", call.node)
        return const(c * per_entry)
    return scalar("int", f"(({lw.int_expr(n, call.node, what)}) * {per_entry})")


@rule(lang.get_sort_len)
def _get_sort_len(lw: LoweringContext, call: Call) -> Value:
    return _sort_size(lw, call, lang.get_sort_len, "elem_count")


@rule(lang.get_sort_offset)
def _get_sort_offset(lw: LoweringContext, call: Call) -> Value:
    return _sort_size(lw, call, lang.get_sort_offset, "elem_offset")


# --------------------------------------------------------------------------- not on Atlas A2/A3


def _refuse(stub: Callable, instead: str) -> Callable:
    def refuse(lw: LoweringContext, call: Call) -> None:
        lw.type_error(f"{stub.__name__} is not available on {lw.platform.name} (Atlas A2/A3): it is an "
                      f"instruction of the Atlas inference (AI Core) and training series, and the A2/A3 library "
                      f"reports it as unsupported; {instead}", call.node)
    return refuse


for _stub, _instead in lang.UNSUPPORTED.items():
    rule(_stub)(_refuse(_stub, _instead))
