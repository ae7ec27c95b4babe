"""Kernel faults carry the pipe and the buffer of the faulting access as fields, not only in their text."""
from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import npuemu.isa
from corpus import case_gm_out_of_bounds as gm_oob
from corpus import intra_core_kernels as K
from npuemu import errors
from npuemu.isa import fault

FULL = {"check": "full"}


def test_a_gm_bounds_fault_names_the_argument(mode):
    with pytest.raises(errors.BoundsError, match="outside GM argument 'x'") as info:
        gm_oob.run(False, **mode)
    assert info.value.buffer == "x"
    assert info.value.pipe is None                 # the copy's direction is not part of this fault


def test_a_race_in_ub_names_the_pipe_and_the_memory(mode):
    with pytest.raises(errors.RaceError, match=r"RAW: V read of UB bytes") as info:
        K.run_ub(K.RAW_MTE2_V, False, **FULL, **mode)
    assert (info.value.pipe, info.value.buffer) == ("V", "UB")


def test_a_gm_race_between_cores_names_the_pipe_and_the_argument(mode):
    with pytest.raises(errors.RaceError, match=r"RAW: MTE2 read of GM bytes .* of GM argument 'z'") as info:
        K.run_handoff(False, **FULL, **mode)
    assert (info.value.pipe, info.value.buffer) == ("MTE2", "z")


def test_a_race_of_cores_that_never_synchronise_names_the_pipe(mode):
    with pytest.raises(errors.RaceError, match=r"WAW: MTE3 write of GM bytes .* of GM argument 'z'") as info:
        K.run_split(False, **FULL, **mode)
    assert (info.value.pipe, info.value.buffer) == ("MTE3", "z")


def test_an_uninitialised_read_names_the_pipe_and_the_memory(mode):
    with pytest.raises(errors.UninitializedReadError) as info:
        K.run_ub(K.UNINIT, False, **FULL, **mode)
    assert (info.value.pipe, info.value.buffer) == ("V", "UB")


def test_an_uninitialised_gm_read_names_the_pipe_and_the_argument(mode):
    with pytest.raises(errors.UninitializedReadError) as info:
        K.run_ub(K.UNINIT_GM, False, **FULL, **mode)
    assert (info.value.pipe, info.value.buffer) == ("MTE2", "z")


def test_faults_that_concern_no_single_access_leave_the_fields_empty():
    e = errors.SyncError("set twice", kernel="k", core="AIV 0")
    assert e.pipe is None and e.buffer is None


def _documented_codes() -> dict[str, set[int]]:
    """``module: a-b c, ...`` in isa/fault.py's table of code ranges, as module -> codes."""
    table = fault.__doc__.split("registered (module: codes)")[1]
    out: dict[str, set[int]] = {}
    for module, spans in re.findall(r"(\w+): ([\d\- ]+?)(?=,|\s{2,}|\n)", table):
        for span in spans.split():
            lo, _, hi = span.partition("-")
            out.setdefault(module, set()).update(range(int(lo), int(hi or lo) + 1))
    return out


def test_the_documented_fault_codes_are_the_registered_ones():
    for info in pkgutil.iter_modules(npuemu.isa.__path__):
        importlib.import_module(f"npuemu.isa.{info.name}")
    registered: dict[str, set[int]] = {}
    for code, (_, render) in fault.FAULTS.items():
        registered.setdefault(render.__module__.rsplit(".", 1)[1], set()).add(code)
    assert _documented_codes() == registered
