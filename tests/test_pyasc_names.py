"""Every public name of pyasc's asc.language (basic, core, fwk) resolves in npuemu.asc."""
from __future__ import annotations

from pathlib import Path

import npuemu.asc as asc

NAMES = [line.strip() for line in (Path(__file__).parent / "pyasc_surface" / "language_names.txt").read_text()
         .splitlines() if line.strip() and not line.startswith("#")]

# module-level helpers of pyasc's own implementation, not kernel API (argument checking, IR building)
INTERNAL = {"check_type", "check_type_gather_mask", "op_impl", "inline", "number"}

# not provided yet, each with where it is meant to come from
PENDING = {
    "AippParams": "AIPP image preprocessing", "AippPaddingParams": "AIPP", "AippSwapParams": "AIPP",
    "AippSingleLineParams": "AIPP", "AippDataTypeConvParams": "AIPP", "AippChannelPaddingParams": "AIPP",
    "AippColorSpaceConvParams": "AIPP", "AippInputFormat": "AIPP", "set_aipp_functions": "AIPP",
    "load_image_to_local": "AIPP", "bilinear_interpolation": "vector interpolation",
    "BatchMode": "Matmul high-level API", "IterateMode": "Matmul high-level API",
    "IterateOrder": "Matmul high-level API", "LayoutMode": "Matmul high-level API",
    "MatmulConfigMode": "Matmul high-level API", "ScheduleType": "Matmul high-level API",
    "check_local_memory_ia": "local-memory watch ranges", "set_mm_layout_transform": "cube configuration",
    "LocalTensorAuto": "automatic synchronisation",
    "DataCopyCO12DstParams": "cube data copies", "DataCopyEnhancedParams": "cube data copies",
    "Nz2NdParamsFull": "cube data copies",
}


def test_every_pyasc_language_name_resolves():
    missing = [n for n in NAMES if n not in INTERNAL and n not in PENDING and not hasattr(asc, n)]
    assert not missing, f"pyasc names missing from npuemu.asc: {missing}"


def test_the_pending_list_is_current():
    """A name that arrived must leave PENDING, so the list always says what is still to do."""
    arrived = sorted(n for n in PENDING if hasattr(asc, n))
    assert not arrived, f"provided now, drop from PENDING: {arrived}"
    assert set(PENDING) <= set(NAMES)
