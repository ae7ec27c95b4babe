"""4:2 structured-sparse matmul: ``load_data_with_sparse`` (B1 -> B2 with indices, MTE1) and
``mmad_with_sparse`` (M), int8 x int8 -> int32, Atlas A2/A3.

Documented (Ascend C ``LoadDataWithSparse`` / ``MmadWithSparse``): the right
matrix B is sparse, at most 2 of every 4 consecutive K elements non-zero; the
user stores it densified (each group of 4 K values becomes 2) with two 2-bit
indices per group: ``a`` in {0, 1, 2}, the position of the first kept element
in the group, and ``b`` in {0, 1, 2}, the position of the second kept element
counted from the group's second element (so it sits at ``1 + b``).  Four 2-bit
indices fill one byte, the first in the lowest bits ("reversed" order).  The
cube multiplies each kept B value with the A element at its position: C[m, n]
+= A[m, 4g + a] * Bd[2g, n] + A[m, 4g + 1 + b] * Bd[2g + 1, n].  Each
``load_data_with_sparse`` repeat moves one 512-byte dense fractal and reads
128 bytes of indices.

Assumed (not stated by the documentation; see docs/cube.md): index ``j`` of a
fractal's 128 index bytes belongs to byte ``j`` of the dense fractal as it
lies in L0B (ZN: element (k, n) of a 32 x 16 fractal at ``n * 32 + k``), so
even ``j`` are ``a`` indices and odd ``j`` are ``b`` indices; the index
fractals follow the dense fractals' numbering (repeat ``r`` reads the 128
bytes of fractal ``start_index + r * src_stride``); ``MmadParams.k`` counts
A's (the original) K, a multiple of 4, and B holds ``k / 2`` dense rows; the
indices travel with the L0B fractal they were loaded into (npuemu keeps them
per L0B fractal in the core state) until it is loaded again.

Fault codes 2110-2119.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import errors
from ..language.enums import Hardware
from . import cube_common as cc
from . import state as S
from .common import memmove
from .fault import Fault, register
from .linkage import instruction
from .mmad import MAX_DIM, L0C_ALIGN, settle_l0c

F_SPARSE_K = 2110
F_SPARSE_INDEX = 2111
F_SPARSE_SLOT = 2112

register({
    F_SPARSE_K: (errors.ParamRangeError,
                 lambda a, b, c, env: f"mmad_with_sparse k = {a} must be a multiple of 4 (k counts the original, "
                                      f"sparse K: groups of 4 of which B keeps 2)"),
    F_SPARSE_INDEX: (errors.ParamRangeError,
                     lambda a, b, c, env: f"sparse index {a} (L0B fractal {b}, element {c}) is outside {{0, 1, 2}}: "
                                          f"the documented 4:2 encoding never produces 3"),
    F_SPARSE_SLOT: (errors.CapacityError,
                    lambda a, b, c, env: f"L0B fractal {a} has no sparse index slot: npuemu keeps indices for "
                                         f"{b} fractals (64 KiB of L0B)"),
})

SLOTS = S.SPARSE_TABLE_BYTES // 128      # L0B fractals whose indices an AIC keeps


@njit(cache=True)
def _index_bytes(st, lm):
    """The AIC's sparse index table: the last SPARSE_TABLE_BYTES of its cube scratch (zero at the start)."""
    end = st[S.SCRATCH_BASE] + st[S.SCRATCH_SIZE]
    return lm[end - S.SPARSE_TABLE_BYTES:end]


@instruction
def load_sparse(st, lm, dst, dst_len, src, src_len, idx, idx_len, start, repeat, sstride, dgap, loc):
    """``load_data_with_sparse(b2, b1, idx, LoadData2DParams(...))``: dense fractals and their indices."""
    cc.check_aic(st, loc)
    cc.check_param(start, 0, 0xFFFF, 8, loc)
    cc.check_param(repeat, 0, 255, 9, loc)
    cc.check_param(sstride, 0, 0xFFFF, 10, loc)
    cc.check_param(dgap, 0, 0xFFFF, 11, loc)
    cc.check_align(st, dst, Hardware.L0B, cc.FRACTAL, cc.DST, loc)
    cc.check_align(st, src, Hardware.L1, cc.C0_BYTES, cc.SRC, loc)
    cc.check_align(st, idx, Hardware.L1, cc.C0_BYTES, cc.SCALES, loc)
    if repeat == 0:
        return
    last = start + (repeat - 1) * sstride
    cc.check_extent((last + 1) * cc.FRACTAL, src_len, cc.SRC, loc)
    cc.check_extent((last + 1) * 128, idx_len, cc.SCALES, loc)
    cc.check_extent(((repeat - 1) * (1 + dgap) + 1) * cc.FRACTAL, dst_len, cc.DST, loc)
    slot0 = (dst - st[S.SEG_BASE + Hardware.L0B]) // cc.FRACTAL
    last_slot = slot0 + (repeat - 1) * (1 + dgap)
    if last_slot >= SLOTS:
        raise Fault(F_SPARSE_SLOT, loc, last_slot, SLOTS, 0)
    ib = _index_bytes(st, lm)
    for r in range(repeat):
        f = start + r * sstride
        slot = slot0 + r * (1 + dgap)
        memmove(lm, dst + r * (1 + dgap) * cc.FRACTAL, lm, src + f * cc.FRACTAL, cc.FRACTAL)
        memmove(ib, slot * 128, lm, idx + f * 128, 128)


@instruction
def mmad_sparse(st, lm, dst, dst_len, fm, fm_len, flt, flt_len, m, n, k, init_val, loc):
    """``mmad_with_sparse(c, a, b, MmadParams(m, n, k, ...))``: C (int32, NZ) [+]= A (ZZ) x densified B (ZN)."""
    cc.check_aic(st, loc)
    cc.check_param(m, 0, MAX_DIM, 20, loc)
    cc.check_param(n, 0, MAX_DIM, 21, loc)
    cc.check_param(k, 0, MAX_DIM, 22, loc)
    cc.check_align(st, dst, Hardware.L0C, L0C_ALIGN, cc.DST, loc)
    cc.check_align(st, fm, Hardware.L0A, cc.FRACTAL, cc.FM, loc)
    cc.check_align(st, flt, Hardware.L0B, cc.FRACTAL, cc.FILTER, loc)
    if m == 0 or n == 0 or k == 0:
        return
    if k % 4 != 0:
        raise Fault(F_SPARSE_K, loc, k, 0, 0)
    m1, n1 = (m + 15) // 16, (n + 15) // 16
    k1a = (k + 31) // 32             # A fractals along K (original K)
    k1b = (k // 2 + 31) // 32        # B fractals along K (dense K)
    cc.check_extent(m1 * k1a * cc.FRACTAL, fm_len, cc.FM, loc)
    cc.check_extent(k1b * n1 * cc.FRACTAL, flt_len, cc.FILTER, loc)
    cc.check_extent(m1 * n1 * 1024, dst_len * 4, cc.DST, loc)
    slot0 = (flt - st[S.SEG_BASE + Hardware.L0B]) // cc.FRACTAL
    if slot0 + k1b * n1 > SLOTS:
        raise Fault(F_SPARSE_SLOT, loc, slot0 + k1b * n1 - 1, SLOTS, 0)
    settle_l0c(st, lm, loc)
    a8 = lm.view(np.int8)
    ib = _index_bytes(st, lm)
    c32 = lm.view(np.int32)
    cbase = dst // 4
    for nn in range(n1 * 16):
        for mm in range(m1 * 16):
            acc = np.int64(0)
            for kd in range(k // 2):
                fb = (kd // 32) * n1 + nn // 16
                e = (nn % 16) * 32 + kd % 32
                bv = np.int64(a8[flt + fb * cc.FRACTAL + e])
                code = (np.int64(ib[(slot0 + fb) * 128 + e // 4]) >> (2 * (e % 4))) & 3
                if code == 3:
                    raise Fault(F_SPARSE_INDEX, loc, code, slot0 + fb, e)
                ka = 4 * (kd // 2) + kd % 2 + code     # a: group start + code; b: group start + 1 + code
                fa = (mm // 16) * k1a + ka // 32
                av = np.int64(a8[fm + fa * cc.FRACTAL + (mm % 16) * 32 + ka % 32])
                acc += av * bv
            at = cbase + ((nn // 16) * m1 + mm // 16) * 256 + (mm % 16) * 16 + nn % 16
            base = np.int64(0) if init_val else np.int64(c32[at])
            c32[at] = np.int32(((base + acc + 2 ** 31) % 2 ** 32) - 2 ** 31)
