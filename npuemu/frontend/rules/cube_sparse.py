"""Rules for 4:2 sparse matmul: ``load_data_with_sparse`` (B1 -> B2 with indices, MTE1) and
``mmad_with_sparse`` (M), int8 only, as documented for Atlas A2/A3.

Compile-time checks: positions (B1 -> B2 and an index tensor in B1; CO1 =
A2 x B2), int8 data with uint8/int8 indices and an int32 result,
``if_transpose`` (not supported, as documented).  Ranges, alignment and
extents are checked by ``isa/sparse.py``.
"""
from __future__ import annotations

from ...isa import hb
from ...language import cube as lang
from ...language import dtype as dt
from ...language.enums import TPosition
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import Value
from . import access
from .cube import _aic, _fields, _int, _ints, _local
from .cube_copy import mode_field


def _dtype(lw: LoweringContext, call: Call, t: Value, what: str, allowed: tuple[dt.DataType, ...]) -> None:
    if t.type.dtype not in allowed:
        lw.type_error(f"{call.name}: {what} must be {' or '.join(d.name for d in allowed)} (the documented 4:2 "
                      f"sparse path on Atlas A2/A3), not {t.type.dtype.name}", call.node)


@rule(lang.load_data_with_sparse)
def _load_data_with_sparse(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.load_data_with_sparse)
    dst = _local(lw, call, a["dst"], "dst", (TPosition.B2,))
    src = _local(lw, call, a["src"], "src", (TPosition.B1,))
    idx = _local(lw, call, a["idx"], "idx", (TPosition.B1,))
    _dtype(lw, call, dst, "dst", (dt.int8,))
    _dtype(lw, call, src, "src", (dt.int8,))
    _dtype(lw, call, idx, "idx", (dt.uint8, dt.int8))
    f = _fields(lw, call, a["params"], lang.LoadData2DParams, "params")
    mode_field(lw, call, f["if_transpose"], 6, 0, "load_data_with_sparse does not transpose (documented); use "
                                                  "if_transpose=False")
    v = [_int(lw, call, f[n], f"LoadData2DParams.{n}") for n in ("start_index", "repeat_times", "src_stride",
                                                                  "dst_gap")]
    if lw.full_check:
        start, rep, ss, gap = (f"({x})" for x in v)
        access.local(lw, hb.MTE1, src, f"(({start} + ({rep} - 1) * {ss} + 1) * 512 if {rep} > 0 else 0)",
                     access.READ_SPAN, call.node)
        access.local(lw, hb.MTE1, idx, f"(({start} + ({rep} - 1) * {ss} + 1) * 128 if {rep} > 0 else 0)",
                     access.READ_SPAN, call.node)
        access.local(lw, hb.MTE1, dst, f"((({rep} - 1) * (1 + {gap}) + 1) * 512 if {rep} > 0 else 0)",
                     access.WRITE, call.node)
    lw.facts.blas = True          # the AIC's cube scratch holds the sparse index table
    lw.emit_isa("sparse", "load_sparse", ["_st", "_lm", *_ints(dst), *_ints(src), *_ints(idx), *v], call.node)


@rule(lang.mmad_with_sparse)
def _mmad_with_sparse(lw: LoweringContext, call: Call) -> None:
    _aic(lw, call)
    a = call.bind_to(lw, lang.mmad_with_sparse)
    dst = _local(lw, call, a["dst"], "dst", (TPosition.CO1,))
    fm = _local(lw, call, a["fm"], "fm (the left matrix)", (TPosition.A2,))
    flt = _local(lw, call, a["filter"], "filter (the right matrix)", (TPosition.B2,))
    _dtype(lw, call, dst, "dst", (dt.int32,))
    _dtype(lw, call, fm, "fm", (dt.int8,))
    _dtype(lw, call, flt, "filter", (dt.int8,))
    f = _fields(lw, call, a["params"], lang.MmadParams, "params")
    m, n, k, init = (_int(lw, call, f[x], f"MmadParams.{x}") for x in ("m", "n", "k", "cmatrix_init_val"))
    if lw.full_check:
        live = f"(({m}) > 0 and ({n}) > 0 and ({k}) > 0)"
        m1, n1 = f"((({m}) + 15) // 16)", f"((({n}) + 15) // 16)"
        c_bytes = f"({m1} * {n1} * 1024 if {live} else 0)"
        access.local(lw, hb.M, fm, f"({m1} * ((({k}) + 31) // 32) * 512 if {live} else 0)", access.READ_SPAN,
                     call.node)
        access.local(lw, hb.M, flt, f"(((({k}) // 2 + 31) // 32) * {n1} * 512 if {live} else 0)", access.READ_SPAN,
                     call.node)
        access.local(lw, hb.M, dst, c_bytes, access.READ_SPAN, call.node)
        access.local(lw, hb.M, dst, c_bytes, access.WRITE, call.node)
    lw.facts.blas = True
    lw.emit_isa("sparse", "mmad_sparse", ["_st", "_lm", *_ints(dst), *_ints(fm), *_ints(flt), m, n, k, init],
                call.node)
