"""UB watch ranges (``check_local_memory_ia``): four exception registers, each a byte range of UB and the
access kinds that trip it.

Register ``r`` is three state words from ``WATCH + 3 r``: the kinds armed
(a bit mask of ``K_*``; 0 = disarmed), and the range ``(start, end]`` in
bytes from the start of UB.  ``check`` runs inside the ``full``-level
access hook (npuemu/isa/local_shadow.py) for every local access.  Fault
codes 1930-1939.
"""
from __future__ import annotations

from numba import njit

from .. import errors
from ..language.enums import Hardware
from . import state as S
from .fault import Fault, register
from .hb import MTE1, MTE2, MTE3, READ, V, WRITE
from .hb import S as PIPE_S

F_WATCH_HIT = 1930
F_WATCH_PARAM = 1931

K_SCALAR_READ, K_SCALAR_WRITE, K_VECTOR_READ, K_VECTOR_WRITE, K_MTE_READ, K_MTE_WRITE = (1 << i for i in range(6))
_KINDS = ("scalar read", "scalar write", "vector read", "vector write", "MTE read", "MTE write")
_PARAMS = ("enable_bit", "start_addr", "end_addr")
UB = int(Hardware.UB)


def _kind_name(k: int) -> str:
    return _KINDS[k.bit_length() - 1] if k > 0 else "access"


register({
    F_WATCH_HIT: (errors.LocalMemoryWatchError,
                  lambda a, b, c, env: f"{_kind_name(c)} of UB byte {b} inside the range watched by exception "
                                       f"register {a} (check_local_memory_ia)"),
    F_WATCH_PARAM: (errors.ParamRangeError,
                    lambda a, b, c, env: f"CheckLocalMemoryIAParam.{_PARAMS[c]} = {a} is outside [0, {b}]"),
})


@njit(cache=True)
def set_watch(st, bit, start, end, kinds, enable, loc):
    if bit < 0 or bit > 3:
        raise Fault(F_WATCH_PARAM, loc, bit, 3, 0)
    if start < 0 or start > 65535:
        raise Fault(F_WATCH_PARAM, loc, start, 65535, 1)
    if end < 0 or end > 65535:
        raise Fault(F_WATCH_PARAM, loc, end, 65535, 2)
    w = S.WATCH + 3 * bit
    st[w] = kinds if enable else 0
    st[w + 1] = start * 32
    st[w + 2] = end * 32


@njit(cache=True)
def _kind(pipe, kind):
    write = kind == WRITE
    if pipe == PIPE_S:
        return K_SCALAR_WRITE if write else K_SCALAR_READ
    if pipe == V:
        return K_VECTOR_WRITE if write else K_VECTOR_READ
    if pipe == MTE1 or pipe == MTE2 or pipe == MTE3:
        return K_MTE_WRITE if write else K_MTE_READ
    return 0


@njit(cache=True)
def check(st, pipe, addr, nbytes, kind, loc):
    """Raise if an armed register watches this access (``kind``: an hb READ or WRITE; a READ_SPAN is only the
    bounding range of a strided read, which may skip the watched bytes, so it is not checked)."""
    rel = addr - st[S.SEG_BASE + UB]
    if nbytes <= 0 or rel < 0 or rel >= st[S.SEG_SIZE + UB] or (kind != READ and kind != WRITE):
        return
    k = _kind(pipe, kind)
    for r in range(4):
        w = S.WATCH + 3 * r
        if st[w] & k == 0:
            continue
        lo = max(rel, st[w + 1] + 1)                 # the first watched byte the access touches
        if lo <= min(rel + nbytes - 1, st[w + 2]):
            raise Fault(F_WATCH_HIT, loc, r, lo, k)
