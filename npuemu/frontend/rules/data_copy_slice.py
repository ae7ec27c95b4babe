"""The slice form of ``data_copy``: ``data_copy(dst, src, dst_slices, src_slices, dim_value)``, GM <-> UB.

``dim_value`` is a compile-time constant (it fixes how many entries of the two
lists are read); the ``SliceInfo`` fields may be run-time values.  They reach
the instruction as one int64 array (``isa/slice_copy.py`` checks and walks
them).
"""
from __future__ import annotations

from ...isa.slice_copy import MAX_DIMS
from ...language import dtype as dt
from ...language.enums import VECTOR_POSITIONS
from ...language.params import SliceInfo
from ..context import LoweringContext
from ..registry import Call
from ..types import TupleT, Value, const
from .common import check_dtype, is_params, plain_int
from .data_copy import _akind, _esize, _gm_to_local, _ints, _local_to_gm, _region, _same


# the element types the slice copy moves on A2/A3 (Ascend C's slice DataCopy page): no 64-bit types
SLICE_DTYPES = (dt.int8, dt.uint8, dt.int16, dt.uint16, dt.int32, dt.uint32, dt.float16, dt.bfloat16, dt.float32)


def _slices(lw: LoweringContext, call: Call, v: Value, dims: int, what: str) -> list[str]:
    """The first ``dims`` SliceInfo of a list argument, as ``dims * 5`` int expressions."""
    if v.is_const and isinstance(v.const, (list, tuple)):
        items = [const(x) for x in v.const]
    elif isinstance(v.type, TupleT):
        items = list(v.items)
    else:
        lw.type_error(f"data_copy {what} must be a list of asc.SliceInfo, got {lw.describe(v)}", call.node)
    if len(items) < dims:
        lw.type_error(f"data_copy {what} has {len(items)} SliceInfo but dim_value is {dims}", call.node)
    out = []
    for i, it in enumerate(items[:dims]):
        if it.is_const and isinstance(it.const, SliceInfo):
            out += [lw.int_expr(const(getattr(it.const, f)), call.node, f) for f in SliceInfo.field_names()]
        elif is_params(it, SliceInfo):
            out += [lw.int_expr(it.item(f), call.node, f"{what}[{i}].{f}") for f in SliceInfo.field_names()]
        else:
            lw.type_error(f"data_copy {what}[{i}] must be an asc.SliceInfo, got {lw.describe(it)}", call.node)
    return out


def slice_copy(lw: LoweringContext, call: Call, a: dict[str, Value]) -> None:
    """``data_copy(dst, src, slice_list1, slice_list2, dim_value)``: list 1 describes dst, list 2 src."""
    dst, src = a["dst"], a["src"]
    dims = lw.const_value(a["dim_value"], call.node, "dim_value")
    if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= MAX_DIMS:
        lw.type_error(f"data_copy dim_value must be a compile-time int in 1..{MAX_DIMS}, got {dims!r}", call.node)
    fields = (_slices(lw, call, a["slice_list1"], dims, "slice_list1")
              + _slices(lw, call, a["slice_list2"], dims, "slice_list2"))
    info = f"np.array([{', '.join(fields)}], np.int64)"
    if _gm_to_local(dst, src):
        ub, g, to_ub = dst, src, True
    elif _local_to_gm(dst, src):
        ub, g, to_ub = src, dst, False
    else:
        lw.type_error(f"data_copy with slice lists moves GM -> UB or UB -> GM, not {lw.describe(src)} to "
                      f"{lw.describe(dst)}", call.node)
    _same(lw, call, ub, g)
    check_dtype(lw, "data_copy with slice lists", ub.type.dtype, SLICE_DTYPES, call.node)
    if ub.type.pos not in VECTOR_POSITIONS:
        lw.type_error(f"data_copy with slice lists moves between GM and UB; the local tensor is in position "
                      f"{ub.type.pos.name}", call.node)
    dims_arg, esize = plain_int(str(dims)), _esize(ub)
    if lw.full_check:
        lw.emit_isa("slice_copy", "slice_access", [
            "_st", "_sh", "_gsh", "_dc", info, dims_arg, esize, f"np.bool_({to_ub})", plain_int(ub.code[0]),
            plain_int(g.code[0]), plain_int(g.code[1])], call.node)
    if to_ub:
        lw.emit_isa("slice_copy", "slice_gm_to_ub", ["_lm", _region(g), *_ints(ub), *_ints(g), info, dims_arg,
                                                     esize], call.node)
    else:
        lw.emit_isa("slice_copy", "slice_ub_to_gm", ["_st", _region(g), "_lm", *_ints(g), *_ints(ub), info,
                                                     dims_arg, esize, _akind(ub)], call.node)
