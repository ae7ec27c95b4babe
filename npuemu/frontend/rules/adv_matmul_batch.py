"""The Matmul object's rounds of batches: ``set_workspace``, ``iterate_n_batch``, ``get_batch_tensor_c``
(docs/matmul-api.md).

``iterate_n_batch(loops, batch_a, batch_b, ...)`` computes ``loops`` rounds of
``iterate_batch`` into the GM workspace given to ``set_workspace``: round ``r``
takes A ``r * batch_a`` and B ``r * batch_b`` matrices on (a batch of one
broadcasts within the round), and leaves its ``max(batch_a, batch_b)`` C
matrices back to back in the workspace, each ``single_core_m`` rows of
``single_core_n`` (``matrix_stride_c`` elements apart when given).
``get_batch_tensor_c`` then hands out the rounds in order: as a GlobalTensor
over the workspace, or copied into a UB tensor (MIX kernels).
"""
from __future__ import annotations

from ...errors import UnsupportedSyntaxError
from ...language import adv_matmul as lang
from ..context import LoweringContext
from ..registry import Call, method
from ..types import GlobalAddressT, GlobalTensorT, LocalTensorT, Value, const, scalar
from .adv_matmul import MatmulT, _int, _lib, _v
from .adv_matmul_run import _UB, _all
from .common import plain_int


@method(MatmulT, "set_workspace")
def _set_workspace(lw: LoweringContext, call: Call) -> None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.set_workspace)
    addr, size = a["addr"], a.get("size", const(None))
    if isinstance(addr.type, GlobalTensorT) and addr.type.dtype is not None:
        rid, off, n = (plain_int(c) for c in addr.code)
        nbytes = f"(-1 if {n} < 0 else {n} * {addr.type.dtype.sizeof()})"
    elif isinstance(addr.type, GlobalAddressT):
        rid, off = (plain_int(c) for c in addr.code)
        nbytes = "-1"
    else:
        lw.type_error(f"Matmul.set_workspace needs a GlobalTensor or a GlobalAddress, got {lw.describe(addr)}",
                      call.node)
    if not (size.is_const and size.const is None):
        nbytes = _int(lw, size, call, "size")
    csz = mm.c.dtype.sizeof()
    for k, e in (("nws_rid", rid), ("nws_off", off), ("nws_size", f"(-1 if {nbytes} < 0 else {nbytes} // {csz})"),
                 ("nws_set", "1")):
        lw.emit(f"{_v(mm, k)} = np.int64({e})")


def workspace_tensor(lw: LoweringContext, call: Call, mm: MatmulT, what: int) -> Value:
    """The workspace of ``set_workspace`` as a GlobalTensor of C's type (checked set: ``what`` 0
    ``iterate_n_batch``, 1 ``get_tensor_c()``)."""
    lw.emit_isa("adv_matmul", "check_workspace_set", ["_st", _v(mm, "init"), _v(mm, "nws_set"), str(what)],
                call.node)
    return Value(GlobalTensorT(mm.c.dtype), code=(_v(mm, "nws_rid"), _v(mm, "nws_off"), _v(mm, "nws_size")))


@method(MatmulT, "iterate_n_batch")
def _iterate_n_batch(lw: LoweringContext, call: Call) -> None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.iterate_n_batch)
    ws = workspace_tensor(lw, call, mm, 0)
    loops, ba, bb = (_int(lw, a[k], call, k) for k in ("batch_loop", "batch_a", "batch_b"))
    strides = [_int(lw, a.get(k, const(0)), call, k) for k in ("matrix_stride_a", "matrix_stride_b",
                                                                "matrix_stride_c")]
    sa, sb, sc, nb, okc = (lw.new_var(f"mmn{k}") for k in ("sa", "sb", "sc", "nb", "okc"))
    sm, sn, sk = _v(mm, "sm"), _v(mm, "sn"), _v(mm, "sk")
    lw.emit(f"{sa} = {strides[0]} if {strides[0]} > 0 else {sm} * {sk}")
    lw.emit(f"{sb} = {strides[1]} if {strides[1]} > 0 else {sk} * {sn}")
    lw.emit(f"{sc} = {strides[2]} if {strides[2]} > 0 else {sm} * {sn}")
    lw.emit(f"{nb} = max({ba}, {bb})")
    # in the workspace the C matrices have rows of single_core_n
    lw.emit(f"{okc} = {_v(mm, 'okc')}")
    lw.emit(f"{_v(mm, 'okc')} = {sn}")
    r, i = lw.new_var("mmround"), lw.new_var("mmbatch")
    with lw.emit_block(f"for {r} in range({loops}):"), lw.emit_block(f"for {i} in range({nb}):"):
        _all(lw, call, mm, ws, f"({r} * {ba} + (0 if {ba} == 1 else {i})) * {sa}",
             f"({r} * {bb} + (0 if {bb} == 1 else {i})) * {sb}", f"({r} * {nb} + {i}) * {sc}", const(0))
    lw.emit(f"{_v(mm, 'okc')} = {okc}")
    for k, e in (("nb_loops", loops), ("nb_next", "0"), ("nb_per", nb), ("nb_stride", sc)):
        lw.emit(f"{_v(mm, k)} = np.int64({e})")


@method(MatmulT, "get_batch_tensor_c")
def _get_batch_tensor_c(lw: LoweringContext, call: Call) -> Value | None:
    mm: MatmulT = call.recv.type
    a = call.bind_to(lw, lang.Matmul.get_batch_tensor_c)
    lw.emit_isa("adv_matmul", "check_batch_left", ["_st", _v(mm, "init"), _v(mm, "nb_next"), _v(mm, "nb_loops")],
                call.node)
    ba, bb = _int(lw, a["batch_a"], call, "batch_a"), _int(lw, a["batch_b"], call, "batch_b")
    stride, size = _v(mm, "nb_stride"), _v(mm, "nws_size")
    count = f"(max({ba}, {bb}) * {stride})"
    start = f"({_v(mm, 'nb_next')} * {_v(mm, 'nb_per')} * {stride})"
    part = lw.fresh_value(Value(GlobalTensorT(mm.c.dtype), code=(
        _v(mm, "nws_rid"), f"({_v(mm, 'nws_off')} + {start} * {mm.c.dtype.sizeof()})",
        f"({count} if {size} < 0 else min({count}, {size} - {start}))")), "mmround")
    lw.emit(f"{_v(mm, 'nb_next')} += 1")
    t = a.get("tensor")
    if t is None:
        return part
    if not (mm.mix and isinstance(t.type, LocalTensorT) and t.type.pos in _UB):
        lw.fail(f"get_batch_tensor_c into {lw.describe(t)}: the vector cores of a MIX kernel take the round into "
                f"UB (VECIN/VECCALC/VECOUT); a cube-only kernel uses the form returning a GlobalTensor", call.node,
                UnsupportedSyntaxError)
    if t.type.dtype is not mm.c.dtype:
        lw.type_error(f"get_batch_tensor_c into a {t.type.dtype.name} tensor, the C MatmulType says "
                      f"{mm.c.dtype.name}", call.node)
    lw.inline_values(_lib().to_ub, [t, part, scalar("int", count)], {}, call.node)
    return None
