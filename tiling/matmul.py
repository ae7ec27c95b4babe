"""Matmul tiling: CANN's ``TCubeTiling`` and the legality rules every matmul tiling must satisfy.

``C[M, N] = A[M, K] @ B[K, N] (+ bias[N])`` runs on the cube cores: each core
computes a ``singleCoreM x singleCoreN`` block of C over the whole K (no split-K
unless enabled), in base blocks of ``baseM x baseN x baseK`` that fit L0A/L0B/L0C
(double buffered by ``dbL0A``/``dbL0B``/``dbL0C``), with ``depthA1``/``depthB1``
base blocks of A and B staged in L1 (``stepM x stepKa`` and ``stepN x stepKb``
per load, times a double-buffer factor).  Field names and order are those of
CANN's ``TCubeTiling`` (50 int32 fields).

:func:`check_tcube_tiling` lists every violated constraint of
superkernel-binaries-tiling.md §3.6 (the tiling is legal when the list is
empty).  Two readings of the source are documented choices:

* the L0 capacities are ``<=``: CANN's own default base (128, 256, 64) with
  ``dbL0B = 2`` in float16 fills L0B exactly, and catlass turns double
  buffering off only when ``2 x tile > L0`` size;
* the L1 footprint of a base block is its fractal-padded size (M and N rounded
  up to 16, K to C0, ``ceil(baseN / C0)`` read as ``ceil(baseN / C0) * C0``),
  which is never smaller than the literal formula.

:func:`matmul_tiling` is the tiling function of the bundled matmul kernels
(kernels/matmul*.py, kernels/linear.py).  It produces legal tilings and, for
the kernels, keeps ``baseK`` a whole number of fractal rows of A (C0: 32
elements for int8), so every base block loads as whole 512-byte fractals.

How a kernel walks a tiling (:func:`core_block` and :func:`base_tiles` are the
host-side mirror of ``kernels/_cube.py``, used by the tests):

* core ``i < usedCoreNum`` owns the block of C at row block ``i // nBlocks``,
  column block ``i % nBlocks`` (``nBlocks = ceil(N / singleCoreN)``), clipped
  to M and N: the last row and column blocks are the tails;
* inside its block it computes ``baseM x baseN`` tiles (the last ones
  clipped), N-outer, M-inner for ``iterateOrder`` 0;
* each tile runs over K in L1 chunks of ``stepKa * baseK`` (the last one
  clipped) and each chunk in L0 steps of ``baseK`` (the last one clipped),
  accumulating in L0C.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from npuemu.asc import Field, KnownTypes, Struct
from npuemu.host.tiling import TilingContext, TilingError, TilingResult
from npuemu.language import dtype as dt
from npuemu.platform import Platform

_I32 = KnownTypes.int32
FRACTAL = 16                      # M and N granularity of the cube (16 x 16 fractals)
DEFAULT_BASE = (128, 256, 64)     # CANN's tuning default (baseM, baseN, baseK)


class TCubeTiling(Struct):
    """CANN's matmul tiling data (all int32, in CANN's field order)."""

    usedCoreNum = Field(_I32)
    M = Field(_I32)
    N = Field(_I32)
    Ka = Field(_I32)
    Kb = Field(_I32)
    singleCoreM = Field(_I32)
    singleCoreN = Field(_I32)
    singleCoreK = Field(_I32)
    baseM = Field(_I32)
    baseN = Field(_I32)
    baseK = Field(_I32)
    depthA1 = Field(_I32)
    depthB1 = Field(_I32)
    depthAL1CacheUB = Field(_I32, 0)
    depthBL1CacheUB = Field(_I32, 0)
    stepM = Field(_I32)
    stepN = Field(_I32)
    isBias = Field(_I32, 0)
    transLength = Field(_I32, 0)
    iterateOrder = Field(_I32, 0)     # 0: M first, 1: N first
    shareMode = Field(_I32, 0)
    shareL1Size = Field(_I32, 0)
    shareL0CSize = Field(_I32, 0)
    shareUbSize = Field(_I32, 0)
    batchM = Field(_I32, 1)
    batchN = Field(_I32, 1)
    singleBatchM = Field(_I32, 1)
    singleBatchN = Field(_I32, 1)
    stepKa = Field(_I32)
    stepKb = Field(_I32)
    dbL0A = Field(_I32, 2)
    dbL0B = Field(_I32, 2)
    dbL0C = Field(_I32, 1)
    ALayoutInfoB = Field(_I32, 0)
    ALayoutInfoS = Field(_I32, 0)
    ALayoutInfoN = Field(_I32, 0)
    ALayoutInfoG = Field(_I32, 0)
    ALayoutInfoD = Field(_I32, 0)
    BLayoutInfoB = Field(_I32, 0)
    BLayoutInfoS = Field(_I32, 0)
    BLayoutInfoN = Field(_I32, 0)
    BLayoutInfoG = Field(_I32, 0)
    BLayoutInfoD = Field(_I32, 0)
    CLayoutInfoB = Field(_I32, 0)
    CLayoutInfoS1 = Field(_I32, 0)
    CLayoutInfoN = Field(_I32, 0)
    CLayoutInfoG = Field(_I32, 0)
    CLayoutInfoS2 = Field(_I32, 0)
    BatchNum = Field(_I32, 0)
    mxTypePara = Field(_I32, 0)


@dataclass(frozen=True)
class MatmulConfig:
    """What the constraints depend on beyond the tiling: types, transposes, formats, modes."""

    a_dtype: str = "float16"
    b_dtype: str = "float16"
    c_dtype: str = "float32"
    bias_dtype: str = "float32"
    trans_a: bool = False
    trans_b: bool = False
    a_format: str = "ND"
    b_format: str = "ND"
    split_k: bool = False         # EnableMultiCoreSplitK
    mdl: bool = False             # the MDL template's extra step rules


def c0(dtype: str) -> int:
    """Elements of one 32-byte fractal row: 8 (fp32/int32), 16 (fp16/bf16), 32 (int8), 64 (int4)."""
    if dtype == "int4":
        return 64
    return 32 // dt.by_name(dtype).sizeof()


def _size(dtype: str) -> float:
    return 0.5 if dtype == "int4" else dt.by_name(dtype).sizeof()


def _accum_size(cfg: MatmulConfig) -> int:
    """Bytes of one L0C element: int32 for integer inputs, float32 otherwise."""
    return 4


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def l1_usage(t: TCubeTiling, cfg: MatmulConfig) -> tuple[int, int, int]:
    """(AL1, BL1, bias) bytes the tiling stages in L1 (fractal-padded base blocks)."""
    k0a, k0b = c0(cfg.a_dtype), c0(cfg.b_dtype)
    a_block = _align(t.baseM, FRACTAL) * _align(t.baseK, k0a) * _size(cfg.a_dtype)
    b_block = _align(t.baseN, FRACTAL) * _align(t.baseK, k0b) * _size(cfg.b_dtype)
    bias = t.baseN * _size(cfg.bias_dtype) if t.isBias else 0
    return int(a_block * t.depthA1), int(b_block * t.depthB1), int(bias)


def check_tcube_tiling(t: TCubeTiling, platform: Platform, cfg: MatmulConfig | None = None,
                       **options: Any) -> list[str]:
    """Every §3.6 constraint ``t`` violates on ``platform`` (empty: legal).

    ``cfg`` (or its fields as keywords: ``a_dtype="float32", trans_b=True``)
    gives the types, transposes, formats and modes the rules depend on; the
    default is float16 A and B, float32 C and bias, ND, no transposes.
    """
    cfg = dataclasses.replace(cfg or MatmulConfig(), **options)
    bad: list[str] = []
    missing = t.unassigned()
    if missing:
        return [f"fields never assigned: {', '.join(missing)}"]

    def need(ok: bool, message: str) -> None:
        if not ok:
            bad.append(message)

    # shapes and cores
    for name in ("M", "N", "Ka", "Kb", "singleCoreM", "singleCoreN", "singleCoreK", "baseM", "baseN", "baseK",
                 "stepM", "stepN", "stepKa", "stepKb", "depthA1", "depthB1", "usedCoreNum"):
        need(getattr(t, name) > 0, f"{name} = {getattr(t, name)} must be positive")
    if bad:
        return bad
    need(t.Ka == t.Kb, f"Ka ({t.Ka}) and Kb ({t.Kb}) differ")
    need(t.singleCoreM <= t.M, f"singleCoreM {t.singleCoreM} > M {t.M}")
    need(t.singleCoreN <= t.N, f"singleCoreN {t.singleCoreN} > N {t.N}")
    if cfg.split_k:
        need(t.singleCoreK <= t.Ka, f"singleCoreK {t.singleCoreK} > K {t.Ka}")
    else:
        need(t.singleCoreK == t.Ka, f"singleCoreK {t.singleCoreK} != K {t.Ka} (K is split only with split-K)")
    need(t.usedCoreNum <= platform.aic_count,
         f"usedCoreNum {t.usedCoreNum} > {platform.aic_count} cube cores of {platform.name}")
    blocks = -(-t.M // t.singleCoreM) * -(-t.N // t.singleCoreN)
    if cfg.split_k:
        blocks *= -(-t.Ka // t.singleCoreK)
    need(t.usedCoreNum == blocks, f"usedCoreNum {t.usedCoreNum} != ceil(M/singleCoreM) * ceil(N/singleCoreN)"
                                  f"{' * ceil(K/singleCoreK)' if cfg.split_k else ''} = {blocks}")

    # L0 capacities (double-buffer factors included) and the bias table
    for name in ("dbL0A", "dbL0B", "dbL0C"):
        need(getattr(t, name) in (1, 2), f"{name} = {getattr(t, name)} must be 1 or 2")
    l0a = t.baseM * t.baseK * _size(cfg.a_dtype) * t.dbL0A
    l0b = t.baseN * t.baseK * _size(cfg.b_dtype) * t.dbL0B
    l0c = t.baseM * t.baseN * _accum_size(cfg) * t.dbL0C
    need(l0a <= platform.l0a_size, f"baseM*baseK*sizeof(A)*dbL0A = {l0a:g} > L0A {platform.l0a_size}")
    need(l0b <= platform.l0b_size, f"baseN*baseK*sizeof(B)*dbL0B = {l0b:g} > L0B {platform.l0b_size}")
    need(l0c <= platform.l0c_size, f"baseM*baseN*{_accum_size(cfg)}*dbL0C = {l0c} > L0C {platform.l0c_size}")
    if t.isBias:
        bt = t.baseN * _size(cfg.bias_dtype)
        need(bt <= platform.bt_size, f"baseN*sizeof(bias) = {bt:g} > BiasTable {platform.bt_size}")

    # L1 staging: depths are step products times a double-buffer factor of 1 or 2
    for depth, m_or_n, k, name in ((t.depthA1, t.stepM, t.stepKa, "depthA1 = stepM*stepKa"),
                                   (t.depthB1, t.stepN, t.stepKb, "depthB1 = stepN*stepKb")):
        need(depth in (m_or_n * k, 2 * m_or_n * k), f"{name}*db with db in (1, 2), got {depth} "
                                                    f"(steps {m_or_n} x {k})")
    al1, bl1, bias = l1_usage(t, cfg)
    need(al1 + bl1 + bias <= platform.l1_size,
         f"L1 use AL1 {al1} + BL1 {bl1}{f' + bias {bias}' if bias else ''} = {al1 + bl1 + bias} > L1 "
         f"{platform.l1_size}")

    # alignment
    need(t.baseM % FRACTAL == 0, f"baseM {t.baseM} is not a multiple of 16")
    need(t.baseN % FRACTAL == 0, f"baseN {t.baseN} is not a multiple of 16")
    k_unit = c0(cfg.a_dtype) if (not cfg.trans_a and cfg.trans_b) else FRACTAL
    need(t.baseK % k_unit == 0, f"baseK {t.baseK} is not a multiple of {k_unit}"
                                f"{' (C0: A not transposed, B transposed)' if k_unit != FRACTAL else ''}")
    if "NZ" in cfg.a_format.upper() or "NZ" in cfg.b_format.upper():
        k0 = c0(cfg.a_dtype)
        for name, unit in (("M", FRACTAL), ("N", FRACTAL), ("Ka", k0), ("singleCoreM", FRACTAL),
                           ("singleCoreN", FRACTAL), ("singleCoreK", k0)):
            need(getattr(t, name) % unit == 0, f"NZ input: {name} {getattr(t, name)} is not a multiple of {unit}")
    need(t.iterateOrder in (0, 1), f"iterateOrder {t.iterateOrder} must be 0 (M first) or 1 (N first)")

    # the MDL template's step rules
    if cfg.mdl:
        if t.Ka / t.baseK > t.stepKa:
            need(t.stepM == 1, f"MDL: Ka/baseK > stepKa needs stepM == 1, got {t.stepM}")
        if t.Kb / t.baseK > t.stepKb:
            need(t.stepN == 1, f"MDL: Kb/baseK > stepKb needs stepN == 1, got {t.stepN}")
        ka_loads = -(-t.singleCoreK // (t.baseK * t.stepKa))
        kb_loads = -(-t.singleCoreK // (t.baseK * t.stepKb))
        need(ka_loads % kb_loads == 0 or kb_loads % ka_loads == 0,
             f"MDL: K loads of A ({ka_loads}) and B ({kb_loads}) must divide one another")
    return bad


def _core_split(m: int, n: int, cores: int) -> tuple[int, int]:
    """(singleCoreM, singleCoreN): 16-aligned blocks of C using as many cores as possible, squarest first."""
    best: tuple[int, int, int, int] | None = None        # (-used, imbalance, single_m, single_n)
    for mc in range(1, min(-(-m // FRACTAL), cores) + 1):
        single_m = _align(-(-m // mc), FRACTAL)
        nc = min(-(-n // FRACTAL), cores // -(-m // single_m))
        single_n = _align(-(-n // nc), FRACTAL)
        used = -(-m // single_m) * -(-n // single_n)
        cand = (-used, abs(single_m - single_n), single_m, single_n)
        if used <= cores and (best is None or cand < best):
            best = cand
    assert best is not None
    return best[2], best[3]


def config_of(ctx: TilingContext) -> MatmulConfig:
    a, b = ctx.input(0), ctx.input(1)
    bias = ctx.inputs[2] if len(ctx.inputs) > 2 else None
    return MatmulConfig(a.dtype, b.dtype, ctx.output(0).dtype, bias.dtype if bias else "float32",
                        bool(ctx.attr("trans_a", False)), bool(ctx.attr("trans_b", False)), a.format, b.format,
                        bool(ctx.attr("split_k", False)), bool(ctx.attr("mdl", False)))


def matmul_shape(ctx: TilingContext, cfg: MatmulConfig) -> tuple[int, int, int]:
    a, b = ctx.input(0), ctx.input(1)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise TilingError(f"matmul tiling takes 2-D A and B, got {a.shape} and {b.shape}")
    m, ka = (a.shape[1], a.shape[0]) if cfg.trans_a else a.shape
    kb, n = (b.shape[1], b.shape[0]) if cfg.trans_b else b.shape
    if ka != kb:
        raise TilingError(f"matmul K of A ({ka}) and B ({kb}) differ")
    return m, n, ka


def matmul_tiling(ctx: TilingContext) -> TilingResult:
    """A legal TCubeTiling for ``ctx``: inputs A, B (and optional bias), output C.

    Attributes: ``trans_a``, ``trans_b``, ``base`` (a fixed (baseM, baseN, baseK)
    as ``SetFixSplit``), ``workspace_c_bytes`` (bytes per element of C a mix
    kernel stages in the GM workspace: ``M * N`` of them are requested);
    ``split_k`` is not produced (K stays whole).
    """
    cfg = config_of(ctx)
    m, n, k = matmul_shape(ctx, cfg)
    p = ctx.platform
    cores = ctx.platform_ascendc().get_core_num_aic()
    if cores < 1:
        raise TilingError(f"{p.name} has no cube cores")
    k_unit = _k_unit(cfg)
    base_m, base_n, base_k = ctx.attr("base") or DEFAULT_BASE

    # split C over the cores in 16-aligned blocks, then fit the base blocks into them
    single_m, single_n = _core_split(m, n, cores)
    used = -(-m // single_m) * -(-n // single_n)
    t = TCubeTiling(usedCoreNum=used, M=m, N=n, Ka=k, Kb=k, singleCoreM=min(single_m, m),
                    singleCoreN=min(single_n, n), singleCoreK=k, isBias=int(len(ctx.inputs) > 2))
    if not ctx.attr("base"):
        base_m = min(base_m, _align(t.singleCoreM, FRACTAL))
        base_n = min(base_n, _align(t.singleCoreN, FRACTAL))
        base_k = min(base_k, _align(k, k_unit))
    t.baseM, t.baseN, t.baseK = base_m, base_n, base_k
    t.stepM = t.stepN = 1
    t.stepKa = t.stepKb = 1
    t.depthA1 = t.depthB1 = 2
    t.dbL0A = t.dbL0B = 2
    t.dbL0C = 1
    if not ctx.attr("base"):
        _shrink_to_fit(t, p, cfg, k_unit)
        # stage more of K in L1 while it fits (depth = 2 x step: double-buffered loads)
        while t.stepKa * t.baseK < k:
            t.stepKa += 1
            t.stepKb = t.stepKa
            t.depthA1 = t.depthB1 = 2 * t.stepKa
            if sum(l1_usage(t, cfg)) > p.l1_size or t.stepKa > 8:
                t.stepKa -= 1
                t.stepKb = t.stepKa
                t.depthA1 = t.depthB1 = 2 * t.stepKa
                break
    bad = check_tcube_tiling(t, _with_cores(p, cores), cfg)
    if bad:
        raise TilingError(f"no legal matmul tiling for M={m} N={n} K={k} on {p.name}: {'; '.join(bad)}")
    # a mix kernel hands C to the vector cores through GM: M x N elements of workspace
    c_bytes = int(ctx.attr("workspace_c_bytes", 0))
    return TilingResult(block_dim=used, tiling_data=t, workspace_sizes=(m * n * c_bytes,), extra={"config": cfg})


def _k_unit(cfg: MatmulConfig) -> int:
    """baseK granularity: the §3.6 rule, and at least one fractal row of A (C0) so L0 loads move whole fractals."""
    rule = c0(cfg.a_dtype) if (not cfg.trans_a and cfg.trans_b) else FRACTAL
    return max(rule, c0(cfg.a_dtype))


def core_block(t: TCubeTiling, idx: int) -> tuple[int, int, int, int]:
    """(row, column, rows, columns) of the block of C that cube core ``idx`` computes."""
    n_blocks = -(-t.N // t.singleCoreN)
    m0 = idx // n_blocks * t.singleCoreM
    n0 = idx % n_blocks * t.singleCoreN
    return m0, n0, min(t.singleCoreM, t.M - m0), min(t.singleCoreN, t.N - n0)


def base_tiles(t: TCubeTiling, rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """The ``baseM x baseN`` tiles of a ``rows x cols`` block in kernel order: (row, column, rows, columns)."""
    out = []
    for j in range(0, cols, t.baseN):
        for i in range(0, rows, t.baseM):
            out.append((i, j, min(t.baseM, rows - i), min(t.baseN, cols - j)))
    return out


def _shrink_to_fit(t: TCubeTiling, p: Platform, cfg: MatmulConfig, k_unit: int) -> None:
    """Halve baseK, then baseN, then baseM (then drop double buffering) until L0 and L1 hold the blocks."""
    def fits() -> bool:
        sa, sb = _size(cfg.a_dtype), _size(cfg.b_dtype)
        return (t.baseM * t.baseK * sa * t.dbL0A <= p.l0a_size and t.baseN * t.baseK * sb * t.dbL0B <= p.l0b_size
                and t.baseM * t.baseN * _accum_size(cfg) * t.dbL0C <= p.l0c_size
                and (not t.isBias or t.baseN * _size(cfg.bias_dtype) <= p.bt_size)
                and sum(l1_usage(t, cfg)) <= p.l1_size)
    while not fits():
        if t.baseK > k_unit:
            t.baseK = max(k_unit, _align(t.baseK // 2, k_unit))
        elif t.baseN > FRACTAL:
            t.baseN = max(FRACTAL, _align(t.baseN // 2, FRACTAL))
        elif t.baseM > FRACTAL:
            t.baseM = max(FRACTAL, _align(t.baseM // 2, FRACTAL))
        elif t.dbL0A == 2 or t.dbL0B == 2:
            t.dbL0A = t.dbL0B = 1
        else:
            raise TilingError(f"even a 16 x 16 x {k_unit} base block does not fit {p.name}'s L0/L1")


def _with_cores(p: Platform, cores: int) -> Platform:
    """``p`` as seen by a tiling capped to ``cores`` cube cores (for the usedCoreNum check)."""
    return p if cores >= p.aic_count else dataclasses.replace(p, aic_count=cores)


__all__ = ["TCubeTiling", "MatmulConfig", "check_tcube_tiling", "matmul_tiling", "l1_usage", "c0", "core_block",
           "base_tiles"]
