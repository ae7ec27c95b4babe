"""The calling convention of a generated kernel: its arguments and their Numba types.

Every kernel instance (one per emulated core) is called as
``kernel(_st, _lm, _gm, _log, _sh, _gsh, _dc, *scalars)``:

==========  ==================================================================
``_st``     int64[:]: the core's state words (``npuemu.isa.state``)
``_lm``     uint8[:]: the core's local memories (UB, or L1/L0A/L0B/L0C/BT) and cube scratch
``_gm``     tuple of uint8[:]: the GM regions, arguments first, padded, npuemu's system region last
``_log``    int64[:]: the printf/dump_tensor log (a 1-word dummy when the kernel logs nothing)
``_sh``     int64[:]: the core's race-checker shadow (a dummy below check level ``full``)
``_gsh``    tuple of int64[:]: the GM shadows, one per region (dummies below ``full``)
``_dc``     uint8[:]: the DCache model of all cores of the launch
scalars     one per :class:`~npuemu.binary.facts.ScalarParam`: int64, float32, bool, or a
            read-only int64[:]/float32[:] for a struct's array field
==========  ==================================================================

The region tuple's length is part of the machine code's type, so it is padded
to 8, 16, 32, ... entries: one length serves almost every kernel, and a
binary fixes its whole signature before it is ever launched.
"""
from __future__ import annotations

from typing import Any, Sequence

CORE_ARRAYS = ("_st", "_lm", "_gm", "_log", "_sh", "_gsh", "_dc")


def region_slots(gm_params: int) -> int:
    """Entries of the region tuple for a kernel with ``gm_params`` GM parameters (+1: the system region)."""
    size = 8
    while size < gm_params + 1:
        size *= 2
    return size


def numba_signature(gm_params: int, scalar_kinds: Sequence[str]) -> tuple[Any, ...]:
    """The Numba argument types of a kernel with ``gm_params`` GM parameters and these scalar kinds."""
    from numba.core import types
    i64 = types.Array(types.int64, 1, "C")
    u8 = types.Array(types.uint8, 1, "C")
    scalar = {"int": types.int64, "float": types.float32, "bool": types.boolean,
              "int[]": i64, "float[]": types.Array(types.float32, 1, "C")}
    slots = region_slots(gm_params)
    return (i64, u8, types.UniTuple(u8, slots), i64, i64, types.UniTuple(i64, slots), u8,
            *(scalar[k] for k in scalar_kinds))
