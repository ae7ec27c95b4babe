"""Rules for ``printf`` and ``dump_tensor``.

Everything constant about a call (the format string, the kinds of its
arguments, a dump's dtype, memory and shape) goes into a per-kernel table in
``lw.facts`` (``printf_formats``, ``dump_sites``) that the launcher hands to
the host-side printer; the generated code only logs the site's index and the
run-time numbers.
"""
from __future__ import annotations

import re
from typing import Any

from ...binary.facts import Conversion, DumpSite, PrintfFormat
from ...isa import debug as isa
from ...isa import hb
from ...isa import state as S
from ...language import debug as lang
from ...language.enums import POSITION_MEMORY, Hardware
from ..registry import Call, rule
from ..context import LoweringContext
from ..types import GlobalAddressT, GlobalTensorT, LocalTensorT, ScalarT, Value, const
from . import access
from .common import is_params, plain_arg, plain_int, settle_l0c
from .params import register_param_struct
from .shape_info import recorded_shape, shape_of

_SPEC = re.compile(r"%(?P<flags>[-+ #0]*)(?P<width>\d+|\*)?(?:\.(?P<prec>\d*|\*))?"
                   r"(?P<length>hh|h|ll|l|j|z|t|L)?(?P<conv>.?)", re.S)
SUPPORTED = "diuxfsp"
_DUMP_MEMORIES = (Hardware.UB, Hardware.L1, Hardware.L0C)

register_param_struct(lang.CheckLocalMemoryIAParam)


def _unescape(text: str) -> str:
    """pyasc passes the format to C: ``\\n`` (backslash, n) is a newline; nothing else is interpreted."""
    return text.replace("\\n", "\n")


def _parse_format(lw: LoweringContext, fmt: str, node) -> list[Any]:
    """Split a printf format into literal text (str) and conversions (regex matches)."""
    if "\n" in fmt:
        lw.fail("printf format contains a newline character; as in pyasc, write it escaped as "
                "\"\\\\n\" (the C compiler turns that into a newline)", node)
    out: list[Any] = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        out.append(_unescape(fmt[pos:m.start()]))
        pos = m.end()
        conv = m.group("conv")
        if m.group(0) == "%%":
            out.append("%")
            continue
        if not conv or conv not in SUPPORTED:
            lw.fail(f"printf conversion '{m.group(0)}' is not supported (the NPU prints %d %i %u %x %f %s %p)",
                    node)
        if "*" in (m.group("width") or "") + (m.group("prec") or ""):
            lw.fail(f"printf conversion '{m.group(0)}': '*' widths are not supported", node)
        out.append(m)
    out.append(_unescape(fmt[pos:]))
    return out


@rule(lang.printf)
def _printf(lw: LoweringContext, call: Call) -> None:
    if call.kwargs or not call.args:
        lw.fail("printf(format, *args) takes a format string and positional arguments", call.node)
    fmt_v, args = call.args[0], list(call.args[1:])
    if not (fmt_v.is_const and isinstance(fmt_v.const, str)):
        lw.type_error(f"the printf format must be a constant string, got {lw.describe(fmt_v)}", call.node)
    parts = _parse_format(lw, fmt_v.const, call.node)
    nconv = sum(not isinstance(p, str) for p in parts)
    if nconv != len(args):
        lw.type_error(f"printf format '{fmt_v.const}' has {nconv} conversions but {len(args)} arguments "
                      f"were given", call.node)
    pieces: list[Any] = []
    logged: list[tuple[str, str]] = []       # (put_int | put_float, expression) per run-time argument
    for p in parts:
        if isinstance(p, str):
            pieces.append(p)
        else:
            pieces.append(_conversion(lw, call, p, args.pop(0), logged))
    _log_printf(lw, call, pieces, logged, fmt_v.const)


def _log_printf(lw: LoweringContext, call: Call, pieces: list[Any], logged: list[tuple[str, str]],
                source: str) -> None:
    """Emit a printf record: the site's text and conversions in ``pieces``, the logged numbers in ``logged``."""
    formats = lw.facts.printf_formats
    formats.append(PrintfFormat(tuple(_merge(pieces)), source))
    lw.facts.uses_log = True
    cursor = lw.new_var("logp")
    begin = ["_st", "_log", str(len(formats) - 1), str(len(logged))]
    lw.emit(f"{cursor} = " + lw.call_isa("debug", "printf_begin", begin, call.node))
    for i, (fn, expr) in enumerate(logged):
        lw.emit(f"{lw.isa('debug', fn)}(_log, {cursor}, {plain_arg(str(i))}, {expr})")


@rule(lang.print_time_stamp)
def _print_time_stamp(lw: LoweringContext, call: Call) -> None:
    desc = lw.int_expr(call.bind_to(lw, lang.print_time_stamp)["desc_id"], call.node, "desc_id")
    mhz = str(int(lw.platform.system_counter_mhz))
    cycle = lw.call_isa("system", "system_cycle", [mhz], call.node)
    d = Conversion("u", "%d")
    pieces = ["descId is ", d, ", rsv is 0, timeStamp is ", d, ", pcPtr is ", d, ", entry is 0.\n"]
    logged = [("put_int", f"np.int64(({desc}) & {isa.U32})"), ("put_int", cycle),
              ("put_int", f"np.int64({lw.loc_id(call.node)})")]
    _log_printf(lw, call, pieces, logged, "print_time_stamp")


@rule(lang.metrics_prof_start, lang.metrics_prof_stop)
def _metrics_prof(lw: LoweringContext, call: Call) -> None:
    call.bind_to(lw, getattr(lang, call.name))


def _conversion(lw: LoweringContext, call: Call, m: re.Match, arg: Value, logged: list[tuple[str, str]]) -> Any:
    """The piece of the printed text for conversion ``m``: text for ``%s``, else a logged Conversion."""
    conv = m.group("conv")
    spec = "%" + m.group("flags") + (m.group("width") or "") + \
           (f".{m.group('prec')}" if m.group("prec") is not None else "")
    if conv == "s":
        if not (arg.is_const and isinstance(arg.const, str)):
            lw.type_error(f"printf '%s' prints compile-time strings; got {lw.describe(arg)}", call.node)
        return (spec + "s") % _unescape(arg.const)
    logged.append(_printf_arg(lw, call, conv, m.group(0), arg))
    return Conversion(conv, spec + {"f": "f", "x": "x", "p": "x"}.get(conv, "d"))


def _merge(pieces: list[Any]) -> list[Any]:
    """Join adjacent literal strings, drop empty ones."""
    out: list[Any] = []
    for p in pieces:
        if isinstance(p, str):
            if not p:
                continue
            if out and isinstance(out[-1], str):
                out[-1] += p
                continue
        out.append(p)
    return out


def _printf_arg(lw: LoweringContext, call: Call, conv: str, text: str, arg: Value) -> tuple[str, str]:
    """How one printf argument is logged; its kind must suit the conversion."""
    if conv == "p":
        if isinstance(arg.type, LocalTensorT):
            hw = int(POSITION_MEMORY[arg.type.pos])
            return "put_int", f"np.int64({arg.code[0]} - _st[{S.SEG_BASE + hw}])"
        if isinstance(arg.type, (GlobalTensorT, GlobalAddressT)):
            return "put_int", f"np.int64(({arg.code[0]} + 1) * {isa.GM_ADDRESS_STRIDE} + {arg.code[1]})"
    is_float = (isinstance(arg.type, ScalarT) and arg.type.kind == "float") or \
        (arg.is_const and isinstance(arg.const, float))
    is_int = (isinstance(arg.type, ScalarT) and arg.type.kind in ("int", "bool")) or \
        (arg.is_const and isinstance(arg.const, int))
    if conv == "f" and is_float:
        return "put_float", lw.materialize(arg, call.node, "float")
    if conv in "diuxp" and is_int:
        return "put_int", f"np.int64({lw.materialize(arg, call.node)})"     # bools too
    want = "a float" if conv == "f" else "an integer or bool" if conv != "p" else "an integer or a tensor"
    lw.type_error(f"printf '{text}' needs {want}, got {lw.describe(arg)}", call.node)


@rule(lang.dump_tensor)
def _dump_tensor(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.dump_tensor)
    shape = shape_of(lw, a["shape_info"], call.node, "dump_tensor shape_info")
    emit_dump(lw, call, a["tensor"], a["desc"], a["dump_size"], shape or recorded_shape(lw, a["tensor"]))


@rule(lang.dump_acc_chk_point)
def _dump_acc_chk_point(lw: LoweringContext, call: Call) -> None:
    a = call.bind_to(lw, lang.dump_acc_chk_point)
    t, start = a["tensor"], lw.int_expr(a["count_off"], call.node, "count_off")
    d = getattr(t.type, "dtype", None)
    if isinstance(t.type, LocalTensorT):
        addr, n = lw.new_var("laddr"), lw.new_var("llen")
        lw.emit(f"{addr}, {n} = " + lw.call_isa("tensor", "sub_tensor",
                                                [t.code[0], t.code[1], str(d.sizeof()), start], call.node))
        t = Value(t.type, code=(addr, n))
    elif isinstance(t.type, GlobalTensorT) and d is not None:
        off, n = lw.new_var("goff"), lw.new_var("gsize")
        lw.emit(f"{off}, {n} = " + lw.call_isa("tensor", "gm_sub_tensor",
                                               [t.code[1], t.code[2], str(d.sizeof()), start], call.node))
        t = Value(t.type, code=(t.code[0], off, n))
    emit_dump(lw, call, t, a["index"], a["dump_size"], None)


def emit_dump(lw: LoweringContext, call: Call, t: Value, desc_v: Value, n_v: Value,
          shape: tuple[int, ...] | None) -> None:
    desc = plain_int(lw.int_expr(desc_v, call.node, "desc"))
    n = plain_int(lw.int_expr(n_v, call.node, "dump_size"))
    d = getattr(t.type, "dtype", None)
    esize = str(d.sizeof()) if d is not None else "0"
    parts = [plain_int(c) for c in t.code]
    if isinstance(t.type, LocalTensorT):
        hw = POSITION_MEMORY.get(t.type.pos)
        if hw not in _DUMP_MEMORIES:
            lw.type_error(f"dump_tensor prints tensors in UB, L1, L0C or GM; this one is in position "
                          f"{t.type.pos.name}", call.node)
        site = _dump_site(lw, d.name, hw.name, shape)
        # the scalar unit reads the tensor: a race if its producer was not waited for; dumping
        # memory nothing wrote is a legitimate thing to look at, so it is not an uninitialised read
        access.local_count(lw, hb.S, t, f"max({n}, 0)", access.READ_SPAN, call.node)
        settle_l0c(lw, t, call.node)
        args = ["_st", "_log", "_lm", *parts, str(int(hw)), desc, n, str(site), esize]
        lw.emit_isa("debug", "dump_local", args, call.node)
    elif isinstance(t.type, GlobalTensorT) and d is not None:
        site = _dump_site(lw, d.name, "GM", shape)
        args = ["_st", "_log", f"_gm[{t.code[0]}]", *parts, desc, n, str(site), esize]
        lw.emit_isa("debug", "dump_gm", args, call.node)
    else:
        lw.type_error(f"dump_tensor needs a LocalTensor or a bound GlobalTensor, got {lw.describe(t)}", call.node)


def _dump_site(lw: LoweringContext, dtype: str, position: str, shape: tuple[int, ...] | None) -> int:
    sites = lw.facts.dump_sites
    sites.append(DumpSite(dtype, position, shape))
    lw.facts.uses_log = True
    return len(sites) - 1


@rule(lang.check_local_memory_ia)
def _check_local_memory_ia(lw: LoweringContext, call: Call) -> None:
    p = call.bind_to(lw, lang.check_local_memory_ia)["check_params"]
    cls = lang.CheckLocalMemoryIAParam
    if p.is_const and isinstance(p.const, cls):
        fields = {n: const(getattr(p.const, n)) for n in cls.field_names()}
    elif is_params(p, cls):
        fields = {n: p.item(n) for n in cls.field_names()}
    else:
        lw.type_error(f"check_local_memory_ia takes a CheckLocalMemoryIAParam, got {lw.describe(p)}", call.node)
    def truth(v: Value) -> str:
        return str(bool(v.const)) if v.is_const else lw.truth(v, call.node)

    flags = ("is_scalar_read", "is_scalar_write", "is_vector_read", "is_vector_write", "is_mte_read", "is_mte_write")
    kinds = " | ".join(f"({1 << i} if {truth(fields[f])} else 0)" for i, f in enumerate(flags))
    args = [lw.int_expr(fields[f], call.node, f) for f in ("enable_bit", "start_addr", "end_addr")]
    lw.emit_isa("watch", "set_watch", ["_st", *args, f"np.int64({kinds})",
                                       f"np.bool_({truth(fields['is_enable'])})"], call.node)
