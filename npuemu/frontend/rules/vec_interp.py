"""Rule for ``bilinear_interpolation`` (:mod:`npuemu.language.vec_interp`; semantics in :mod:`npuemu.isa.vec_interp`)."""
from __future__ import annotations

from ...isa import hb
from ...language import dtype as dt
from ...language import vec_interp as lang
from ..context import LoweringContext
from ..registry import Call, rule
from ..types import ScalarT
from . import access
from .common import check_dtype, is_int_like, local, mask_operand, plain_int, same_dtype


@rule(lang.bilinear_interpolation)
def _bilinear(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.bilinear_interpolation)
    name = "bilinear_interpolation"
    for n in ("dst", "src0", "src0_offset", "src1", "shared_tmp_buffer"):
        local(lw, a[n], call.node, n)
    d = same_dtype(lw, name, call.node, ("dst", a["dst"]), ("src0", a["src0"]), ("src1", a["src1"]))
    check_dtype(lw, name, d, lang.DTYPES[lang.bilinear_interpolation], call.node)
    check_dtype(lw, f"{name} src0_offset", a["src0_offset"].type.dtype, (dt.uint32,), call.node)
    check_dtype(lw, f"{name} shared_tmp_buffer", a["shared_tmp_buffer"].type.dtype, (dt.uint8,), call.node)
    mode = a["repeat_mode"]
    if not (is_int_like(mode) or (isinstance(mode.type, ScalarT) and mode.type.kind == "bool")):
        lw.type_error(f"{name}: repeat_mode must be a bool, got {lw.describe(mode)}", call.node)
    mask = mask_operand(lw, a["mask"], call.node)
    h = lw.int_expr(a["h_repeat"], call.node, "h_repeat")
    v = lw.int_expr(a["v_repeat"], call.node, "v_repeat")
    dblk = lw.int_expr(a["dst_blk_stride"], call.node, "dst_blk_stride")
    vro = lw.int_expr(a["v_r_offset"], call.node, "v_r_offset")
    mode_expr = f"np.int64(bool({lw.materialize(mode, call.node)}))"
    reps = f"max(0, min(({h}) * ({v}), 255))"
    access.local_count(lw, hb.V, a["src0_offset"], f"8 * {reps}", access.READ, call.node)
    access.local_all(lw, hb.V, a["src0"], access.READ_SPAN, call.node)
    access.local_all(lw, hb.V, a["src1"], access.READ_SPAN, call.node)
    access.local_all(lw, hb.V, a["shared_tmp_buffer"], access.WRITE, call.node)
    l0 = ["True", *mask, v]
    access.level0(lw, hb.V, a["dst"], l0, dblk, f"max(0, ({vro}) * 2 // 32)", access.WRITE, call.node)
    operands = [plain_int(c) for n in ("dst", "src0", "src0_offset", "src1", "shared_tmp_buffer")
                for c in a[n].code]
    lw.emit_isa("vec_interp", "bilinear", ["_st", "_lm", *operands, f"np.bool_({mask[0]})",
                                           *(plain_int(x) for x in (mask[1], mask[2], h)), mode_expr,
                                           *(plain_int(x) for x in (dblk, vro, v))], call.node)
