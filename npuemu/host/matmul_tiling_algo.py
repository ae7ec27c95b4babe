"""The matmul tiling search behind ``MatmulApiTiling`` / ``MultiCoreMatmulTiling`` / ``BatchMatmulTiling``.

:func:`compute_tiling` turns a :class:`TilingRequest` (what the setters
recorded) into the values of a ``TCubeTiling``, or raises
:class:`~npuemu.errors.TilingError` with the reason.  The steps, each
documented in docs/matmul-tiling.md:

1. split C (and K with split-K) over the cores (:func:`core_split`);
2. choose the base block, shrinking CANN's default until L0A/L0B/L0C, the
   bias table, the UB (C in UB) and L1 hold it (:func:`choose_base`);
3. stage as much of K in L1 as fits, then more M/N blocks where the MDL
   template allows (:func:`choose_steps`).

Every result passes :func:`~npuemu.host.matmul_tiling_check.check_tcube_tiling`
(the caller checks it once more before handing it out).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import TilingError
from .matmul_tiling_check import FRACTAL, base_k_unit, l1_bytes
from .matmul_tiling_enums import ELEMENT_BYTES, c0

DEFAULT_BASE_M = 128
DEFAULT_BASE_N = 256
DEFAULT_BASE_K_BYTES = 128     # baseK 64 for fp16/bf16 (CANN's default), 32 for fp32, 128 for int8
ACCUM_BYTES = 4

Triple = tuple[int, int, int]


def _align(n: int, unit: int) -> int:
    return -(-n // unit) * unit


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _free(v: int) -> bool:
    return v is None or v < 0


@dataclass(frozen=True)
class TilingRequest:
    """Everything a tiling depends on, as the setters recorded it (-1: not set, the library chooses)."""

    a: str                      # element kinds (matmul_tiling_enums.element_kind)
    b: str
    c: str
    bias: str
    a_trans: bool
    b_trans: bool
    a_nz: bool
    b_nz: bool
    c_in_ub: bool
    is_bias: bool
    shape: Triple               # (M, N, K) computed
    cores: int                  # cores the split may use (SetDim)
    l1: int                     # capacities in bytes (SetBufferSpace, else the platform's)
    l0a: int
    l0b: int
    l0c: int
    ub: int
    bt: int
    split_k: bool = False
    fixed_single: Triple = (-1, -1, -1)                     # SetSingleShape
    single_range: tuple[int, ...] = (-1, -1, -1, -1, -1, -1)  # SetSingleRange (max m,n,k, min m,n,k)
    align_split: Triple = (-1, -1, -1)                      # SetAlignSplit
    fixed_base: Triple = (-1, -1, -1)                       # SetFixSplit
    base_range: tuple[int, ...] = (-1, -1, -1, -1, -1, -1)  # SetSplitRange (max m,n,k, min m,n,k)
    db_l1_a: bool = True                                    # SetDoubleBuffer(a, b, c, ...)
    db_l1_b: bool = True
    db_l0c: bool = False
    org_k: tuple[int, int] | None = None                    # (Ka, Kb) of the original shape
    multi_core: bool = True                                 # False: the whole shape on one core
    macs_per_cycle: float = 4096.0                          # cube multiply-adds per cycle for A's type
    gm_bytes_per_cycle: float = 32.0                        # GM read rate of one core

    @property
    def k_unit(self) -> int:
        """baseK granularity: the §3.6 rule, and whole fractal rows (C0) of A and B."""
        return max(base_k_unit(self.a, self.a_trans, self.b_trans), c0(self.a), c0(self.b))


def core_split(req: TilingRequest) -> Triple:
    """(singleCoreM, singleCoreN, singleCoreK): the block of C (and of K) each core computes.

    Every split of M into ``mDim`` parts, N into ``nDim`` and (split-K) K into
    ``kDim`` with ``mDim*nDim*kDim <= cores`` is tried, each part rounded up
    to the alignment (16 for M and N, baseK's unit for K, or SetAlignSplit's).
    The split whose busiest core finishes first wins, by a roofline estimate
    of its cycles: ``max(singleM*singleN*singleK / macs_per_cycle,
    singleK*(singleM+singleN)*sizeof(A) / gm_bytes_per_cycle)`` (A and B read
    from GM once); ties go to the least work per core, then fewer cores, then
    the wider block of C (larger singleN: longer contiguous rows of C and B).
    """
    m, n, k = req.shape
    if not req.multi_core:
        return m, n, k
    am = req.align_split[0] if req.align_split[0] > 0 else FRACTAL
    an = req.align_split[1] if req.align_split[1] > 0 else FRACTAL
    ak = req.align_split[2] if req.align_split[2] > 0 else req.k_unit
    max_m, max_n, max_k, min_m, min_n, min_k = req.single_range

    def sizes(total: int, align: int, fixed: int, lo: int, hi: int, dims: int) -> list[int]:
        if not _free(fixed):
            return [fixed]
        out = []
        for d in range(1, min(dims, _cdiv(total, align)) + 1):
            s = min(total, _align(_cdiv(total, d), align))
            if (_free(hi) or s <= hi) and (_free(lo) or s >= lo) and s not in out:
                out.append(s)
        return out

    for name, v, total in (("singleCoreM", req.fixed_single[0], m), ("singleCoreN", req.fixed_single[1], n),
                           ("singleCoreK", req.fixed_single[2], k)):
        if not _free(v) and v > total:
            raise TilingError(f"SetSingleShape: {name} {v} > {name[-1]} = {total}")
    if not req.split_k and not _free(req.fixed_single[2]) and req.fixed_single[2] != k:
        raise TilingError(f"SetSingleShape: singleCoreK {req.fixed_single[2]} != K = {k}; K is split over cores "
                          f"only with EnableMultiCoreSplitK")
    best: tuple | None = None
    for sm in sizes(m, am, req.fixed_single[0], min_m, max_m, req.cores):
        m_blocks = _cdiv(m, sm)
        if m_blocks > req.cores:
            continue
        for sn in sizes(n, an, req.fixed_single[1], min_n, max_n, req.cores // m_blocks):
            mn_blocks = m_blocks * _cdiv(n, sn)
            if mn_blocks > req.cores:
                continue
            k_sizes = sizes(k, ak, req.fixed_single[2], min_k, max_k, req.cores // mn_blocks) if req.split_k \
                else [k if _free(req.fixed_single[2]) else req.fixed_single[2]]
            for sk in k_sizes:
                used = mn_blocks * (_cdiv(k, sk) if req.split_k else 1)
                if used > req.cores:
                    continue
                cycles = max(sm * sn * sk / req.macs_per_cycle,
                             sk * (sm + sn) * ELEMENT_BYTES[req.a] / req.gm_bytes_per_cycle)
                key = (cycles, sm * sn * sk, used, -sn, -sm)
                if best is None or key < best[0]:
                    best = (key, (sm, sn, sk))
    if best is None:
        raise TilingError(f"no split of M={m} N={n} K={k} over {req.cores} cores satisfies the single-core "
                          f"shape, range and alignment set (SetSingleShape/SetSingleRange/SetAlignSplit)")
    return best[1]


def _fit_problems(req: TilingRequest, base: Triple, db_l0: int, single: Triple) -> list[str]:
    """What a base block overflows (L1 counted with one block of A and B staged)."""
    bm, bn, bk = base
    out = []
    if bm * bk * ELEMENT_BYTES[req.a] * db_l0 > req.l0a:
        out.append(f"L0A ({bm}x{bk} {req.a} x{db_l0} > {req.l0a} bytes)")
    if bn * bk * ELEMENT_BYTES[req.b] * db_l0 > req.l0b:
        out.append(f"L0B ({bk}x{bn} {req.b} x{db_l0} > {req.l0b} bytes)")
    if bm * bn * ACCUM_BYTES > req.l0c:
        out.append(f"L0C ({bm}x{bn} x4 bytes > {req.l0c})")
    if req.is_bias and bn * ELEMENT_BYTES[req.bias] > req.bt:
        out.append(f"BiasTable ({bn} {req.bias} > {req.bt} bytes)")
    if req.c_in_ub and bm * bn * ELEMENT_BYTES[req.c] > req.ub:
        out.append(f"UB ({bm}x{bn} {req.c} > {req.ub} bytes)")
    t = dict(base_m=bm, base_n=bn, base_k=bk, depth_a1=1, depth_b1=1, is_bias=int(req.is_bias))
    if sum(l1_bytes(t, req.a, req.b, req.bias, req.a_trans, req.b_trans)) > req.l1:
        out.append(f"L1 (one {bm}x{bk} block of A and {bk}x{bn} of B > {req.l1} bytes)")
    return out


def choose_base(req: TilingRequest, single: Triple) -> tuple[Triple, int]:
    """((baseM, baseN, baseK), db of L0A/L0B): CANN's default base, clipped, shrunk until it fits.

    Start from (128, 256, 128 bytes of K) clipped to the single-core block
    rounded up to the alignment and to SetSplitRange's maxima; SetFixSplit's
    values are kept as given.  While something overflows, halve baseK (down
    to its unit), then the larger of baseN/baseM (down to 16 or SetSplitRange's
    minimum), then turn off L0A/L0B double buffering.
    """
    sm, sn, sk = single
    unit = req.k_unit
    max_m, max_n, max_k, min_m, min_n, min_k = req.base_range
    fm, fn, fk = req.fixed_base
    for name, v, align in (("baseM", fm, FRACTAL), ("baseN", fn, FRACTAL), ("baseK", fk, unit)):
        if not _free(v) and (v == 0 or v % align):
            raise TilingError(f"SetFixSplit: {name} {v} must be a positive multiple of {align}")
    if not _free(fm) and fm > _align(sm, FRACTAL):
        raise TilingError(f"SetFixSplit: baseM {fm} > singleCoreM {sm} rounded up to 16")
    if not _free(fn) and fn > _align(sn, FRACTAL):
        raise TilingError(f"SetFixSplit: baseN {fn} > singleCoreN {sn} rounded up to 16")

    def start(fixed: int, default: int, limit: int, align: int, hi: int) -> int:
        if not _free(fixed):
            return fixed
        v = min(default, _align(limit, align))
        if not _free(hi):
            v = min(v, max(align, hi // align * align))
        return v

    bm = start(fm, DEFAULT_BASE_M, sm, FRACTAL, max_m)
    bn = start(fn, DEFAULT_BASE_N, sn, FRACTAL, max_n)
    bk = start(fk, max(unit, int(DEFAULT_BASE_K_BYTES // ELEMENT_BYTES[req.a]) // unit * unit), sk, unit, max_k)
    floor_m = max(FRACTAL, 0 if _free(min_m) else _align(min_m, FRACTAL))
    floor_n = max(FRACTAL, 0 if _free(min_n) else _align(min_n, FRACTAL))
    floor_k = max(unit, 0 if _free(min_k) else _align(min_k, unit))
    db = 2
    while True:
        problems = _fit_problems(req, (bm, bn, bk), db, single)
        if not problems:
            return (bm, bn, bk), db
        if _free(fk) and bk > floor_k:
            bk = max(floor_k, _align(bk // 2, unit))
        elif _free(fn) and bn > floor_n and (bn >= bm or not (_free(fm) and bm > floor_m)):
            bn = max(floor_n, _align(bn // 2, FRACTAL))
        elif _free(fm) and bm > floor_m:
            bm = max(floor_m, _align(bm // 2, FRACTAL))
        elif db == 2:
            db = 1
        else:
            fixed = " (fixed by SetFixSplit)" if not (_free(fm) and _free(fn) and _free(fk)) else ""
            raise TilingError(f"the base block {bm}x{bn}x{bk}{fixed} overflows {', '.join(problems)}")


def choose_steps(req: TilingRequest, single: Triple, base: Triple) -> dict[str, int]:
    """stepM/N/Ka/Kb and depthA1/B1: as much of K staged in L1 as fits, then more M/N blocks.

    stepKa = stepKb is the largest divisor of ``ceil(singleCoreK/baseK)`` whose
    blocks of A and B, double buffered (SetDoubleBuffer), fit L1 with the bias;
    if none fits double buffered, L1 double buffering is dropped.  When the
    whole original K is staged (the MDL template allows stepM/stepN > 1 only
    then), stepN and stepM grow by turns while L1 holds them.
    """
    sm, sn, sk = single
    bm, bn, bk = base
    k_blocks = _cdiv(sk, bk)
    ka, kb = req.org_k or (req.shape[2], req.shape[2])

    def l1_fits(step_m: int, step_n: int, step_k: int, db_a: int, db_b: int) -> bool:
        t = dict(base_m=bm, base_n=bn, base_k=bk, depth_a1=step_m * step_k * db_a,
                 depth_b1=step_n * step_k * db_b, is_bias=int(req.is_bias))
        return sum(l1_bytes(t, req.a, req.b, req.bias, req.a_trans, req.b_trans)) <= req.l1

    divisors = [d for d in range(k_blocks, 0, -1) if k_blocks % d == 0]
    for db_a, db_b in (((2 if req.db_l1_a else 1), (2 if req.db_l1_b else 1)), (1, 1)):
        step_k = next((d for d in divisors if l1_fits(1, 1, d, db_a, db_b)), 0)
        if step_k:
            break
    else:                                       # choose_base made one block of each fit: not reached
        raise TilingError("L1 cannot hold one block of A and one of B")
    step_m = step_n = 1
    if ka <= bk * step_k and kb <= bk * step_k:
        grown = True
        while grown:
            grown = False
            if step_n < _cdiv(sn, bn) and l1_fits(step_m, step_n + 1, step_k, db_a, db_b):
                step_n += 1
                grown = True
            if step_m < _cdiv(sm, bm) and l1_fits(step_m + 1, step_n, step_k, db_a, db_b):
                step_m += 1
                grown = True
    return dict(step_m=step_m, step_n=step_n, step_k_a=step_k, step_k_b=step_k,
                depth_a1=step_m * step_k * db_a, depth_b1=step_n * step_k * db_b)


def compute_tiling(req: TilingRequest) -> dict[str, int]:
    """The TCubeTiling values (snake_case names) for ``req``; raises TilingError when there is none."""
    m, n, k = req.shape
    single = core_split(req)
    sm, sn, sk = single
    base, db = choose_base(req, single)
    bm, bn, _ = base
    used = _cdiv(m, sm) * _cdiv(n, sn) * (_cdiv(k, sk) if req.split_k else 1)
    out = dict(used_core_num=used, single_core_m=sm, single_core_n=sn, single_core_k=sk, base_m=base[0],
               base_n=base[1], base_k=base[2], db_l0a=db, db_l0b=db,
               db_l0c=2 if req.db_l0c and bm * bn * ACCUM_BYTES * 2 <= req.l0c else 1, is_bias=int(req.is_bias))
    out.update(choose_steps(req, single, base))
    return out


__all__ = ["TilingRequest", "compute_tiling", "core_split", "choose_base", "choose_steps"]
