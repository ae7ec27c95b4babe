"""The one exception compiled instructions raise, and the table that explains it.

Instructions cannot build rich messages in nopython mode, so they raise
``Fault(code, loc, a, b, c)``: a fault code, the source-location id of the
call, and up to three integers.  Each instruction module registers its codes
with :func:`register` together with the user-facing error class and a
function that renders the message; the launcher turns the ``Fault`` into that
:class:`npuemu.errors.KernelFault`, adding kernel, core and source line.  A
renderer that knows which pipe made the faulting access or which buffer it
touched returns a :class:`Message` instead of a string, so that the error
carries them as ``pipe`` and ``buffer`` fields.

Each area of the instruction set has a range of codes, so that modules
written in parallel never collide; the codes each module registers today:

=========  =======================  ==============================================
range      area                     registered (module: codes)
=========  =======================  ==============================================
1-99       common                   common: 1-5
100-199    data movement            datamove: 100-108
200-299    queues and buffers       queue: 200-216
300-399    vector                   vmask: 300-309, vec_scalar: 310
400-499    fill and broadcast       vec_fill: 420-423
500-599    reductions               vec_reduce: 500-501
600-699    compare/select/gather    vec_cmpsel: 600-604, vec_gather: 650-653, vec_fused: 660-662
700-799    sync and race checking   sync: 700-709 720-722, race_report: 760-763 765, hb: 764
800-899    debug                    debug: 800-804
900-999    cube                     cube_move: 900-902, fixpipe: 960-962, cube_common: 990-993
1000-1099  scalar access            tensor: 1000-1007, dcache_checks: 1050-1054
1100-1199  scalar arithmetic        arith: 1100-1102
1200-1299  cross-core sync          cross_core: 1200-1204, soft_sync: 1205-1210
1300-1399  tiling data              tiling_data: 1300
1400-1499  runaway loops            runaway: 1400-1401
1500-1599  sorting                  sort: 1500-1506
1600-1699  atomic GM writes         atomic: 1600
1700-1799  vector rearrangement     vec_rearrange: 1700-1702, vec_transpose: 1750-1755
1800-1899  interpolation, AIPP      vec_interp: 1800-1809, aipp: 1850-1860
1900-1999  system registers         system: 1900-1903, user_tag: 1910, local_array: 1920, watch: 1930-1931
2000-2099  buffer pools and lists   buf_pool: 2000-2007, slice_copy: 2010-2015, list_tensor: 2020-2028
2100-2199  cube img2col and sparse  img2col: 2100-2102, sparse: 2110-2112
2200-2299  high-level Matmul        adv_matmul: 2200-2212 2214-2215
                                    adv_matmul_msg: 2213 2216
2300-2399  high-level API (adv)     adv_math_scratch: 2300-2303, adv_softmax: 2310-2316
                                    adv_norm: 2320-2325, adv_sort: 2330-2331
2400-2499  SuperKernel early start  task_sync: 2400-2401
=========  =======================  ==============================================
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Protocol

from .. import errors


class Fault(Exception):
    """Raised inside compiled kernel code; converted before users see it."""


class FaultEnv(Protocol):
    """What a message renderer can ask about the faulting launch."""

    def region(self, rid: int) -> str: ...
    def region_name(self, rid: int) -> str: ...
    def position(self, pos: int) -> str: ...
    def hardware(self, hw: int) -> str: ...
    def dtype(self, code: int) -> str: ...
    def source(self, loc_id: int) -> str: ...


class Message(NamedTuple):
    """A rendered fault message with the pipe and the buffer of the faulting access, where known.

    ``pipe`` is a pipe name (``"V"``, ``"MTE2"``, ``"S"``, ...); ``buffer`` is
    the GM argument's name (``FaultEnv.region_name``) or the on-chip memory's
    (``FaultEnv.hardware``: ``"UB"``, ``"L1"``, ...).
    """

    text: str
    pipe: str | None = None
    buffer: str | None = None


Render = Callable[[int, int, int, FaultEnv], "str | Message"]

FAULTS: dict[int, tuple[type[errors.KernelFault], Render]] = {}


def register(table: dict[int, tuple[type[errors.KernelFault], Render]]) -> None:
    """Add fault codes; a code may be registered once."""
    for code, entry in table.items():
        if code in FAULTS and FAULTS[code] != entry:
            raise RuntimeError(f"fault code {code} registered twice")
        FAULTS[code] = entry
