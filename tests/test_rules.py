"""The rule table and its interface: registration, argument binding from the language stubs."""
from __future__ import annotations

import inspect
import pathlib
import re
import subprocess
import sys
import typing

import pytest

import npuemu.asc as asc
from npuemu import errors
from npuemu.frontend import binding
from npuemu.frontend.context import LoweringContext
from npuemu.frontend.registry import FUNC_RULES, Call
from npuemu.frontend.types import GlobalTensorT, LocalTensorT, RecordT, Value, const, scalar
from npuemu.language import (atomic, cube, dtype, sort, vec_binary, vec_cast, vec_cmpsel, vec_fill, vec_fused,
                             vec_gather, vec_interp, vec_rearrange, vec_reduce, vec_scalar, vec_transpose,
                             vec_unary)
from npuemu.language.builtin import dtype_text
from npuemu.language.params import ParamStruct

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("first", ["npuemu.frontend.lower", "npuemu.frontend.registry",
                                   "npuemu.frontend.rules.vec_gather"])
def test_importing_any_frontend_module_registers_every_rule(first):
    code = (f"import {first}\n"
            "from npuemu.frontend import registry\n"
            "from npuemu.frontend.types import LocalTensorT\n"
            "from npuemu.language import core, cube, vec_binary\n"
            "assert registry.func_rule(vec_binary.add) is not None\n"
            "assert registry.func_rule(cube.mmad) is not None\n"
            "assert registry.func_rule(core.TPipe) is not None\n"
            "assert (LocalTensorT, 'get_value') in registry.METHOD_RULES\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_rules_use_only_the_members_of_the_lowering_context():
    members = set(LoweringContext.__annotations__) | {n for n in vars(LoweringContext) if not n.startswith("_")}
    rules = ROOT / "npuemu" / "frontend" / "rules"
    used = {(f.name, m) for f in rules.glob("*.py") for m in re.findall(r"\blw\.(\w+)", f.read_text())}
    assert {(f, m) for f, m in used if m not in members} == set()


def test_the_lowering_context_does_not_import_the_lowerer():
    code = ("import sys, npuemu.frontend.context\n"
            "assert 'npuemu.frontend.lower' not in sys.modules, 'context imports lower'\n")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# --------------------------------------------------------------------------- binding calls to the stubs' forms

UB = Value(LocalTensorT(asc.float32, asc.TPosition.VECCALC), code=("a", "n"))
GM = Value(GlobalTensorT(asc.float32), code=("0", "0", "-1"))
N = scalar("int", "n")


def record(cls: type) -> Value:
    return Value(RecordT(cls, cls.field_names()), items=tuple(const(d) for _, d, _ in cls._fields_))


class Context:
    """The part of the lowering context binding uses: reporting a type error."""

    def type_error(self, message: str, node: object) -> None:
        raise errors.KernelTypeError(message)


def bind(stub, *args: Value, **kwargs: Value) -> dict[str, Value]:
    return binding.bind(Context(), Call(stub.__name__, None, list(args), kwargs), stub)


def test_a_call_binds_to_the_form_its_arguments_fit():
    assert set(bind(asc.add, UB, UB, UB, N)) == {"dst", "src0", "src1", "count", "is_set_mask"}
    level0 = bind(asc.add, UB, UB, UB, const(64), const(1), record(asc.BinaryRepeatParams))
    assert "count" not in level0 and level0["is_set_mask"].const is True
    assert "mask" in bind(asc.abs, UB, UB, mask=const([1, 2]), repeat_times=const(1),
                          repeat_params=record(asc.UnaryRepeatParams))


def test_among_forms_that_fit_the_values_types_choose():
    assert "count" in bind(asc.data_copy, UB, GM, N)
    assert "repeat_params" in bind(asc.data_copy, UB, GM, record(asc.DataCopyParams))
    assert "intri_params" in bind(asc.data_copy, UB, GM, record(asc.Nd2NzParams))
    dcci = bind(asc.data_cache_clean_and_invalid, const(asc.CacheLine.SINGLE_CACHE_LINE),
                const(asc.DcciDst.CACHELINE_OUT), GM)
    assert dcci["dst"] is GM


def test_a_value_of_the_wrong_type_is_left_to_the_rule():
    a = bind(asc.data_copy, UB, GM, const(1.5))
    assert a["count"].const == 1.5


@pytest.mark.parametrize("call, message", [
    (lambda: bind(asc.abs, UB, UB, N, is_set_mask=const(False)),
     r"abs\(\) got an unexpected keyword argument 'is_set_mask' \(parameters: dst, src, count\)"),
    (lambda: bind(asc.add, UB, UB, UB), r"add\(\) missing required argument 'count'"),
    (lambda: bind(asc.add, UB, UB, UB, mask=const(64), repeat_times=N),
     r"add\(\) missing required argument 'repeat_params'"),
    (lambda: bind(asc.get_block_idx, N), r"get_block_idx\(\) takes at most 0 arguments \(1 given\)"),
    (lambda: bind(asc.set_flag, const(asc.HardEvent.V_S), event=const(asc.HardEvent.V_S)),
     r"set_flag\(\) got multiple values for argument 'event'"),
])
def test_a_call_no_form_fits_is_rejected_for_the_nearest_form(call, message):
    with pytest.raises(errors.KernelTypeError, match=message):
        call()


def _bound_stubs() -> list:
    """The language functions and classes whose rules bind calls to their forms."""
    out = []
    for t, _ in FUNC_RULES.values():
        fn = inspect.unwrap(t.__init__ if isinstance(t, type) else t)
        if not getattr(t, "__module__", "").startswith("npuemu.language") or fn is object.__init__:
            continue        # Python's builtins; classes constructed without arguments
        if isinstance(t, type) and issubclass(t, ParamStruct) and t is not asc.MmadParams:
            continue        # parameter structs: their fields table is the signature
        variadic = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in inspect.signature(fn).parameters.values())
        if variadic and not typing.get_overloads(fn):
            continue        # printf, set_vector_mask: bound by hand
        out.append(t)
    return sorted(out, key=_stub_id)


def _stub_id(stub) -> str:
    """``vec_binary.add``: stable across processes (pytest-xdist workers must collect the same ids)."""
    return f"{stub.__module__.rpartition('.')[2]}.{getattr(stub, '__qualname__', stub)}"


@pytest.mark.parametrize("stub", _bound_stubs(), ids=_stub_id)
def test_every_stub_a_rule_binds_to_has_readable_forms(stub):
    forms = binding.forms(stub)
    assert forms
    for form in forms:
        assert set(form.hints) == set(form.names), f"{stub!r}: every parameter is annotated"


def test_help_shows_each_form_and_the_data_types():
    doc = inspect.getdoc(asc.add)
    assert "add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int, is_set_mask: bool = True)" in doc
    assert "repeat_params: BinaryRepeatParams" in doc
    assert doc.endswith("Data types (Atlas A2/A3): float16, float32, int16, int32.")
    assert str(inspect.signature(asc.brcb)) == ("(dst: 'LocalTensor', src0: 'LocalTensor', repeat_times: 'int', "
                                                "repeat_params: 'BrcbRepeatParams') -> 'None'")


# --------------------------------------------------------------------------- data type tables, written once

FAMILIES = (vec_binary, vec_scalar, vec_unary, vec_fill, vec_reduce, vec_cmpsel, vec_gather, vec_fused, vec_rearrange,
            vec_transpose, vec_interp, sort, cube, atomic)


def documented_dtypes() -> dict[str, str]:
    """Instruction name -> its data types, from the table in docs/language.md."""
    text = (ROOT / "docs" / "language.md").read_text()
    section = text.split("## Data types per instruction", 1)[1]
    out = {}
    for names, dtypes in re.findall(r"^\| ((?:`\w+` ?)+) \| (.+?) \|$", section, re.M):
        for name in re.findall(r"`(\w+)`", names):
            assert name not in out, f"{name} is listed twice"
            out[name] = dtypes
    return out


def tabled_dtypes() -> dict[str, str]:
    out = {stub.__name__: ", ".join(dtype_text(d) for d in dts) for f in FAMILIES for stub, dts in f.DTYPES.items()}
    out["axpy"] = ", ".join(dtype_text(p) for p in vec_scalar.AXPY_TYPES) + " (source -> destination)"
    out["mmad"] = ", ".join(f"{a.name} x {b.name} -> {c.name}" for (a, b), c in cube.MMAD_TYPES.items())
    return out


def test_docs_list_the_data_types_of_the_tables():
    assert documented_dtypes() == tabled_dtypes()


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.__name__.rsplit(".", 1)[-1])
def test_docstrings_list_the_data_types_of_the_tables(family):
    for stub, dts in family.DTYPES.items():
        paragraph = f"Data types (Atlas A2/A3): {', '.join(dtype_text(d) for d in dts)}."
        assert f"\n\n{paragraph}\n" in inspect.getdoc(stub) + "\n"      # its own paragraph (others may follow)


_MODE_LETTERS = {"N": "CAST_NONE", "R": "CAST_RINT", "F": "CAST_FLOOR", "C": "CAST_CEIL", "A": "CAST_ROUND",
                 "Z": "CAST_TRUNC", "O": "CAST_ODD"}


def test_the_cast_docstring_shows_the_conversion_table():
    shown = {}
    for pairs, modes in re.findall(r"^    ([a-z0-9, >-]+?)(?: \(round to integral\))?\s{2,}([NRFCAZO](?: [NRFCAZO])*)",
                                   vec_cast.__doc__, re.M):
        pieces = pairs.split(", ")
        if all("->" in p for p in pieces):
            found = [tuple(p.split(" -> ")) for p in pieces]
        else:
            srcs, dsts = (side.split(", ") for side in pairs.split(" -> "))
            found = [(s, d) for s in srcs for d in dsts]
        for s, d in found:
            shown[(getattr(dtype, s.strip()), getattr(dtype, d.strip()))] = {_MODE_LETTERS[m] for m in modes.split()}
    assert shown == {pair: {m.name for m in modes} for pair, modes in vec_cast.MODES.items()}
