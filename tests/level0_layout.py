"""Where the lanes of a level-0 vector operand sit, straight from Ascend C's documented layout."""
from __future__ import annotations

from typing import Callable

import numpy as np


def level0_elements(repeats: int, lanes: int, active: Callable[[int], bool], blk: int, rep: int,
                    epb: int) -> np.ndarray:
    """Element index of each active lane, in lane order: ``repeats`` repeats of ``lanes`` lanes,
    ``epb`` elements per 32-byte block, block stride ``blk`` and repeat stride ``rep`` in blocks."""
    out = []
    for r in range(repeats):
        for e in range(lanes):
            if active(e):
                out.append((r * rep + (e // epb) * blk) * epb + e % epb)
    return np.array(out)
