"""Every public name of pyasc's asc.language (basic, core, fwk) resolves in npuemu.asc."""
from __future__ import annotations

from pathlib import Path

import npuemu.asc as asc

NAMES = [line.strip() for line in (Path(__file__).parent / "pyasc_surface" / "language_names.txt").read_text()
         .splitlines() if line.strip() and not line.startswith("#")]

# module-level helpers of pyasc's own implementation, not kernel API (argument checking, IR building)
INTERNAL = {"check_type", "check_type_gather_mask", "op_impl", "inline", "number"}


def test_every_pyasc_language_name_resolves():
    missing = [n for n in NAMES if n not in INTERNAL and not hasattr(asc, n)]
    assert not missing, f"pyasc names missing from npuemu.asc: {missing}"


def test_matmul_enums_have_pyasc_values():
    """The values scripts pass through tiling data and configs must be pyasc's (asc.language.core.enums)."""
    want = {asc.BatchMode: {"NONE": 0, "BATCH_LESS_THAN_L1": 1, "BATCH_LARGE_THAN_L1": 2, "SINGLE_LARGE_THAN_L1": 3},
            asc.IterateOrder: {"ORDER_M": 0, "ORDER_N": 1, "UNDEF": 2},
            asc.IterateMode: {"ITERATE_MODE_NORMAL": 1, "ITERATE_MODE_ALL": 2, "ITERATE_MODE_BATCH": 4,
                              "ITERATE_MODE_N_BATCH": 8, "ITERATE_MODE_DEFAULT": 255},
            asc.LayoutMode: {"NONE": 0, "NORMAL": 1, "BSNGD": 2, "SBNGD": 3, "BNGS1S2": 4},
            asc.MatmulConfigMode: {"CONFIG_NORM": 1, "CONFIG_MDL": 2, "CONFIG_SPECIALMDL": 3, "CONFIG_IBSHARE": 4},
            asc.ScheduleType: {"INNER_PRODUCT": 0, "OUTER_PRODUCT": 1},
            asc.BatchOutMode: {"SINGLE_BATCH": 0, "MULTI_BATCH": 1, "DYNAMIC": 2}}
    for enum, members in want.items():
        assert {m.name: m.value for m in enum} == members, enum.__name__
