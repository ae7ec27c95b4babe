"""docs/reference.md: generated from the kernel language, current, and complete."""
from __future__ import annotations

import inspect
import pydoc
import re

import npuemu.asc as asc
from npuemu import reference
from npuemu.language.builtin import TEMP_BUFFERS, builtin_name
from npuemu.language.params import ParamStruct


def test_the_reference_is_current():
    assert reference.PATH.read_text() == reference.render(), "run python -m npuemu.reference"


def test_every_builtin_and_struct_has_an_entry():
    text = reference.PATH.read_text()
    entries = set(re.findall(r"^### `asc\.(\w+)`", text, re.M))
    names = {n for n in dir(asc) if not n.startswith("_") and builtin_name(getattr(asc, n))
             and getattr(getattr(asc, n), "__module__", "").startswith("npuemu.language.")}
    structs = {n for n in dir(asc) if isinstance(o := getattr(asc, n), type) and issubclass(o, ParamStruct)
               and o is not ParamStruct}
    assert names and structs
    assert not (names | structs) - entries


def test_help_shows_forms_data_types_and_scratch_rules():
    text = pydoc.render_doc(asc.reduce_sum, renderer=pydoc.plaintext)
    assert "Forms::" in text and "shared_tmp_buffer: LocalTensor, count: int" in text
    assert "Data types (Atlas A2/A3): float16, float32." in text
    assert "Temporary buffer ``shared_tmp_buffer``" in text and "round_up(r, e)" in text


def test_every_scratch_tensor_has_a_size_rule():
    """An instruction with a scratch-tensor parameter documents how large it must be."""
    scratch = set()
    for n in dir(asc):
        obj = getattr(asc, n)
        if not builtin_name(obj) or isinstance(obj, type):
            continue
        forms = [getattr(obj, "__wrapped__", obj)]
        params = set()
        for f in forms:
            params |= set(inspect.signature(f).parameters)
        doc = obj.__doc__ or ""
        if any(p in ("tmp", "temp_buffer", "shared_tmp_buffer", "tmp_buffer") for p in params) or \
                re.search(r"\b(shared_tmp_buffer|tmp_buffer|temp_buffer)\b:", doc):
            scratch.add(obj)
    assert scratch, "found no instruction with a scratch tensor"
    assert scratch <= set(TEMP_BUFFERS), sorted(o.__name__ for o in scratch - set(TEMP_BUFFERS))


def test_the_main_parameter_structs_give_units():
    for cls in (asc.DataCopyParams, asc.DataCopyExtParams, asc.DataCopyPadExtParams, asc.Nd2NzParams,
                asc.BinaryRepeatParams, asc.UnaryRepeatParams, asc.CopyRepeatParams, asc.GatherMaskParams,
                asc.GatherRepeatParams, asc.BrcbRepeatParams):
        missing = [f for f in cls.field_names() if not cls._units_.get(f)]
        assert not missing, (cls.__name__, missing)
    assert "bytes per burst" in reference.PATH.read_text()


def test_fault_messages_show_placeholders():
    from npuemu.isa import local_array
    assert reference.fault_message(local_array.F_INDEX) == "index a of an asc.array of b elements"
