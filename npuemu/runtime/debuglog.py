"""Host side of ``printf`` and ``dump_tensor``: decode each core's log buffer and print it."""
from __future__ import annotations

import numpy as np

from ..isa import state as S


def print_core_log(spec, st: np.ndarray, log: np.ndarray, block_dim: int) -> None:
    """Print what one core wrote with printf/dump_tensor (nothing if it wrote nothing)."""
    if st[S.LOG_CUR] == 0:
        return
    raise NotImplementedError("log decoding is provided by npuemu.runtime.debuglog")
