"""Every public name of pyasc's asc.language (basic, core, fwk) resolves in npuemu.asc."""
from __future__ import annotations

from pathlib import Path

import numpy as np

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


ADV_NAMES = [line.strip() for line in (Path(__file__).parent / "pyasc_surface" / "adv_names.txt").read_text()
             .splitlines() if line.strip() and not line.startswith("#")]

# asc.adv names npuemu does not provide yet; the list only shrinks (empty: every name resolves)
ADV_PENDING: set[str] = set()


def test_every_pyasc_adv_name_resolves_in_asc_adv():
    missing = [n for n in ADV_NAMES if n not in ADV_PENDING and not hasattr(asc.adv, n)]
    assert not missing, f"pyasc asc.adv names missing from npuemu.asc.adv: {missing}"
    provided = sorted(n for n in ADV_PENDING if hasattr(asc.adv, n))
    assert not provided, f"provided now, take them off ADV_PENDING: {provided}"


def test_adv_tiling_structs_have_the_c_layout_of_cann():
    """Every field int32 (RmsNormTiling's reciprocal a float32), in CANN's order, no padding."""
    sizes = {asc.adv.TCubeTiling: 49, asc.adv.MatmulApiStaticTiling: 46, asc.adv.SoftmaxTiling: 16,
             asc.adv.RmsNormTiling: 12}
    for struct, fields in sizes.items():
        assert len(struct().to_bytes()) == 4 * fields, struct.__name__
    t = asc.adv.TCubeTiling(m=64, base_k=32, batch_num=3)
    words = np.frombuffer(t.to_bytes(), dtype=np.int32)
    assert words[1] == 64 and words[10] == 32 and words[-1] == 3 and words.sum() == 99
    r = asc.adv.RmsNormTiling(h_length=1024, reciprocal_of_h_length=1 / 1024)
    assert np.frombuffer(r.to_bytes(), dtype=np.float32)[4] == np.float32(1 / 1024)
