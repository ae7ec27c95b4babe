"""The host matmul tiling library (pyasc's asc.lib.host): enums, hand-derived tilings, refusals, properties.

Hand-computed values follow the rules of docs/matmul-tiling.md step by step
(shown next to each assertion); the properties check every tiling returned
with 0 against the legality checker and against capacities and coverage
recomputed here, over Hypothesis-drawn shapes, dtypes, transposes, bias, core
counts and platforms (built-in and custom, with small L1/L0).
"""
from __future__ import annotations

import logging
import math
import runpy
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

import npuemu.asc as asc
from npuemu.errors import TilingError
from npuemu.host.matmul_tiling import (BatchMatmulTiling, CubeFormat, DataType, DequantType, MatmulApiTiling,
                                       MatmulConfigParams, MatrixMadType, MatrixTraverse, MultiCoreMatmulTiling,
                                       ScheduleType, TPosition, get_ascendc_platform)
from npuemu.host.matmul_tiling_check import check_tcube_tiling, validate_tcube_tiling
from npuemu.host.platform_api import PlatformAscendC, PlatformAscendCManager
from npuemu.platform import get_platform
from npuemu.testing import profiles
from npuemu.testing import strategies as nst

ROOT = Path(__file__).resolve().parent.parent
GM, ND = TPosition.GM, CubeFormat.ND
DT = {"float16": DataType.DT_FLOAT16, "bfloat16": DataType.DT_BF16, "float32": DataType.DT_FLOAT,
      "int8": DataType.DT_INT8, "int32": DataType.DT_INT32}
OUT = {"float16": "float32", "bfloat16": "float32", "float32": "float32", "int8": "int32"}
SIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "int8": 1, "int32": 4}


def make(cls, platform, a="float16", *, a_trans=False, b_trans=False, bias=False, shape=(1024, 1024, 1024)):
    mm = cls(platform)
    assert mm.set_a_type(GM, ND, DT[a], a_trans) == 0
    assert mm.set_b_type(GM, ND, DT[a], b_trans) == 0
    assert mm.set_c_type(GM, ND, DT[OUT[a]]) == 0
    assert mm.set_bias_type(GM, ND, DT[OUT[a]]) == 0
    assert mm.enable_bias(bias) == 0
    assert mm.set_shape(*shape) == 0
    return mm


def fields(t) -> dict[str, int]:
    return {name: int(getattr(t, name)) for name, _ in t._struct_fields_}


# ------------------------------------------------------------------------------------------ enums


def test_enums_have_canns_values():
    """matmul_tiling_base.h: DataType is ge::DataType's numbering; LCM/SHM/ROW_MAJOR are aliases."""
    assert (DataType.DT_FLOAT, DataType.DT_FLOAT16, DataType.DT_INT8, DataType.DT_INT32) == (0, 1, 2, 3)
    assert (DataType.DT_BF16, DataType.DT_INT4, DataType.DT_BFLOAT16, DataType.DT_MAX) == (27, 29, 33, 40)
    assert TPosition.LCM is TPosition.VECCALC and TPosition.SHM is TPosition.SPM
    assert (TPosition.GM, TPosition.CO1, TPosition.VECCALC, TPosition.TSCM, TPosition.MAX) == (0, 7, 11, 13, 14)
    assert CubeFormat.ROW_MAJOR is CubeFormat.ND and CubeFormat.COLUMN_MAJOR == 8 and CubeFormat.VECTOR == 7
    assert [m.value for m in MatrixTraverse] == [0, 1, 2] and MatrixMadType.MXMODE == 2
    assert (DequantType.TENSOR, ScheduleType.OUTER_PRODUCT) == (1, 1)
    p = MatmulConfigParams()
    assert (p.mm_config_type, p.enable_l1_cache_ub, p.schedule_type, p.traverse, p.en_vec_nd2nz) == \
        (1, False, ScheduleType.INNER_PRODUCT, MatrixTraverse.NOSET, False)


# ------------------------------------------------------------------------------------------ hand-computed


def test_1024_cube_fp16_on_910b1_with_24_cores():
    """M=N=K=1024 fp16 -> fp32, set_dim(24), Ascend910B1 (L1 512 KiB, L0A/B 64 KiB, L0C 128 KiB).

    Core split (roofline: max(MACs / 4096, bytes read / 32) cycles): every split is GM-bound here; (4, 6)
    and (6, 4) read the least, 176 + 256 = 432 rows: 432*1024*2/32 = 27648 cycles ((3, 8): 30720, (4, 4):
    32768); work and cores tie, (6, 4) has the wider block: singleCoreM = ceil(1024/6) -> 176 (16-aligned),
    singleCoreN = 256, ceil(1024/176) * 4 = 6 * 4 = 24 cores.
    Base: (128, 256, 128 bytes / 2 = 64): L0A 128*64*2*2 = 32 KiB, L0B 256*64*2*2 = 64 KiB, L0C 128*256*4 =
    128 KiB, all fit.  Steps: K has 1024/64 = 16 blocks; one step of K double buffered takes
    2*(128*64 + 64*256)*2 = 96 KiB of L1, so stepK <= 5, the largest divisor of 16 is 4: depth 2*1*4 = 8.
    1024/64 = 16 > 4 K blocks staged: stepM = stepN = 1 (the MDL rule).
    """
    mm = make(MultiCoreMatmulTiling, "Ascend910B1")
    assert mm.set_dim(24) == 0
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0 and mm.last_error is None
    want = dict(used_core_num=24, m=1024, n=1024, k_a=1024, k_b=1024, single_core_m=176, single_core_n=256,
                single_core_k=1024, base_m=128, base_n=256, base_k=64, depth_a1=8, depth_b1=8, step_m=1,
                step_n=1, step_k_a=4, step_k_b=4, db_l0a=2, db_l0b=2, db_l0c=1, is_bias=0, iterate_order=0)
    assert {k: fields(t)[k] for k in want} == want
    assert (mm.get_base_m(), mm.get_base_n(), mm.get_base_k()) == (128, 256, 64)
    assert mm.get_core_num() == 24 and mm.get_single_shape() == (176, 256, 1024)


def test_the_split_balances_the_cube_and_gm_traffic():
    """M=333, N=777, K=5000 fp16 on 24 cores.  The least work per core would be 21 blocks of 16 x 777
    (12432 elements) reading 793 rows; the roofline picks (3, 7): 112 x 112 blocks (333/3 = 111 -> 112,
    777/7 = 111 -> 112), 224 rows: 224*5000*2/32 = 70000 cycles against (4, 6)'s 96 + 144 = 240 rows."""
    mm = make(MultiCoreMatmulTiling, "Ascend910B1", shape=(333, 777, 5000))
    mm.set_dim(24)
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    assert (t.single_core_m, t.single_core_n, t.used_core_num) == (112, 112, 21)


def test_int8_with_b_transposed_on_8_cores():
    """M=N=K=512 int8 -> int32, B transposed, set_dim(8).

    Roofline (8192 int8 MACs and 32 bytes per cycle): (2, 4) and (4, 2) read 384 rows: 384*512/32 = 6144
    cycles (compute 2048); (2, 3) reads 432, (2, 2) 512, (1, 8) 576.  (4, 2) is wider: 128 x 256, 8 cores.  baseK's unit is C0(int8) = 32 (A not transposed, B
    transposed); baseK = 128 bytes = 128 elements: L0A 128*128*2 = 32 KiB, L0B 256*128*2 = 64 KiB.  K has
    4 blocks; a K step double buffered takes 2*(128*128 + 256*128) = 96 KiB, 4 steps = 384 KiB fit: the
    whole K is staged, but 128/128 and 256/256 leave no more M or N blocks: stepM = stepN = 1, depth 8.
    """
    mm = make(MultiCoreMatmulTiling, "Ascend910B1", "int8", b_trans=True, shape=(512, 512, 512))
    mm.set_dim(8)
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    got = tuple(getattr(t, f) for f in ("used_core_num", "single_core_m", "single_core_n", "base_m", "base_n",
                                        "base_k", "step_k_a", "step_m", "step_n", "depth_a1", "depth_b1"))
    assert got == (8, 128, 256, 128, 256, 128, 4, 1, 1, 8, 8)


def test_fp32_single_core():
    """fp32 512^3 on one core: baseK = 128 bytes / 4 = 32 (unit 16); L0B 256*32*4*2 = 64 KiB fits.

    L1 per K step, double buffered: 2*(128*32*4 + 32*256*4) = 96 KiB -> stepK <= 5 -> 4 (divides 16 blocks).
    """
    mm = make(MatmulApiTiling, "Ascend910B1", "float32", shape=(512, 512, 512))
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    f = fields(t)
    assert (f["used_core_num"], f["single_core_m"], f["single_core_n"], f["single_core_k"]) == (1, 512, 512, 512)
    assert (f["base_m"], f["base_n"], f["base_k"], f["step_k_a"], f["depth_a1"], f["depth_b1"]) == \
        (128, 256, 32, 4, 8, 8)


def test_whole_k_in_l1_lets_steps_grow():
    """M=N=256, K=64 fp16, one core: K is one block (stepK 1, 96 KiB double buffered); the whole K is staged,
    so stepN (1 block of N: 256/256) stays 1 and stepM grows to 2 (A 2*2*16 KiB + B 2*32 KiB = 128 KiB)."""
    mm = make(MatmulApiTiling, "Ascend910B1", shape=(256, 256, 64))
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    assert (t.step_m, t.step_n, t.step_k_a, t.depth_a1, t.depth_b1) == (2, 1, 1, 4, 2)


def test_bias_fp32_bounds_base_n_by_the_bias_table():
    """A 512-byte bias table holds 128 fp32 bias elements: baseN halves from 256 to 128."""
    p = nst.make_platform("Ascend910B1", bt_size=512)
    mm = make(MatmulApiTiling, p, bias=True, shape=(256, 256, 256))
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    assert (t.base_m, t.base_n, t.is_bias) == (128, 128, 1)


def test_batch_tiling_records_the_batches():
    """set_batch_info_for_normal(3, 2, 64, 128, 64): one matmul of 64x128x64, base clipped to (64, 128, 64)."""
    mm = BatchMatmulTiling("Ascend910B1")
    for setter in (mm.set_a_type, mm.set_b_type):
        assert setter(GM, ND, DataType.DT_FLOAT16, False) == 0
    mm.set_c_type(GM, ND, DataType.DT_FLOAT)
    assert mm.set_batch_info_for_normal(3, 2, 64, 128, 64) == 0
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    f = fields(t)
    assert (f["batch_m"], f["batch_n"], f["batch_num"], f["single_batch_m"], f["single_batch_n"]) == (3, 2, 3, 1, 1)
    assert (f["used_core_num"], f["base_m"], f["base_n"], f["base_k"]) == (1, 64, 128, 64)
    assert mm.get_core_num() == 1


def test_options_reach_the_tiling():
    mm = make(MultiCoreMatmulTiling, "Ascend910B1", shape=(512, 512, 512))
    mm.set_dim(8)
    assert mm.set_traverse(MatrixTraverse.FIRSTN) == 0
    assert mm.set_single_shape(256, 128, -1) == 0
    assert mm.set_fix_split(64, 128, -1) == 0
    assert mm.set_org_shape(600, 700, 800, 900) == 0
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0, mm.last_error
    assert (t.iterate_order, t.single_core_m, t.single_core_n, t.base_m, t.base_n) == (1, 256, 128, 64, 128)
    assert (t.m, t.n, t.k_a, t.k_b, t.used_core_num) == (600, 700, 800, 900, 2 * 4)
    mm.set_matmul_config_params(MatmulConfigParams(0, traverse=MatrixTraverse.FIRSTM))
    assert mm.mm_config_type == 0 and mm.traverse == MatrixTraverse.FIRSTM


def test_split_k_splits_k_over_cores():
    """M=N=128, K=8192, 16 cores (roofline: max(MACs / 4096, bytes read / 32) cycles).  Without split-K:
    4 x 4 blocks of 32 x 32 read 8192 * 64 * 2 / 32 = 32768 cycles, the least ((2, 8): 40960, (2, 2):
    65536).  With split-K, (1, 1, 16) reads 512 * 256 * 2 / 32 = 8192 cycles against (2, 2, 4)'s 16384 and
    (4, 4, 1)'s 32768 (each computes 2048): K/16 = 512 per core."""
    mm = make(MultiCoreMatmulTiling, "Ascend910B1", shape=(128, 128, 8192))
    mm.set_dim(16)
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    assert (t.used_core_num, t.single_core_m, t.single_core_n, t.single_core_k) == (16, 32, 32, 8192)
    mm.enable_multi_core_split_k(True)
    assert mm.get_tiling(t) == 0
    assert (t.used_core_num, t.single_core_m, t.single_core_n, t.single_core_k) == (16, 128, 128, 512)
    assert check_tcube_tiling(t, "Ascend910B1", "float16", "float16", "float32", split_k=True) == []
    assert any(p.startswith("shape: single_core_k") for p in
               check_tcube_tiling(t, "Ascend910B1", "float16", "float16", "float32"))


# ------------------------------------------------------------------------------------------ refusals


def test_refused_shapes_return_minus_one_with_a_reason(caplog):
    t = asc.adv.TCubeTiling(base_m=7)
    mm = MatmulApiTiling("Ascend910B1")
    with caplog.at_level(logging.WARNING, logger="npuemu.host"):
        assert mm.get_tiling(t) == -1
    assert "no shape" in mm.last_error and "MatmulApi Tiling: no shape" in caplog.text
    assert t.base_m == 7 and t.used_core_num == 0                    # untouched

    big = make(MatmulApiTiling, "Ascend910B1")
    assert big.set_fix_split(256, 256, 128) == 0      # 256*256*4 = 256 KiB of L0C > 128 KiB, whatever the db
    assert big.get_tiling(t) == -1 and "L0C" in big.last_error and "SetFixSplit" in big.last_error

    tiny = nst.make_platform("Ascend910B1", l1_size=512)   # one 16x16x16 fp16 block of A and B: 1 KiB
    assert make(MatmulApiTiling, tiny).get_tiling(t) == -1
    assert t.base_m == 7

    wrong = make(MatmulApiTiling, "Ascend910B1")
    wrong.set_a_type(GM, ND, DataType.DT_INT16)
    assert wrong.get_tiling(t) == -1 and "DT_INT16" in wrong.last_error
    mixed = make(MatmulApiTiling, "Ascend910B1")
    mixed.set_b_type(GM, ND, DataType.DT_FLOAT)
    assert mixed.get_tiling(t) == -1 and "same type" in mixed.last_error


def test_setters_refuse_what_cann_refuses():
    mm = MultiCoreMatmulTiling("Ascend910B1")
    assert mm.set_dim(0) == -1 and mm.set_dim(49) == -1 and mm.set_dim(48) == 0     # 48 AIV (MIX)
    assert mm.set_buffer_space(1 << 20) == -1 and "L1" in mm.last_error
    assert mm.set_buffer_space(-1, -1, -1) == 0 and mm.last_error is None
    assert mm.set_shape(0, 16, 16) == -1 and mm.set_shape(16, 16, 2**31) == -1
    assert mm.set_fix_split(-2) == -1 and mm.set_traverse(MatrixTraverse.NOSET) == -1
    assert mm.set_mad_type(MatrixMadType.MXMODE) == -1 and mm.set_mad_type(MatrixMadType.HF32) == 0
    mm = make(MultiCoreMatmulTiling, "Ascend910B1")
    assert mm.set_fix_split(100) == 0
    assert mm.get_tiling(asc.adv.TCubeTiling()) == -1 and "multiple of 16" in mm.last_error


def test_buffer_space_limits_the_tiling():
    """set_buffer_space(l1=96 KiB, l0c=32 KiB): baseM*baseN*4 <= 32 KiB and L1 holds what it stages."""
    mm = make(MatmulApiTiling, "Ascend910B1")
    assert mm.set_buffer_space(96 * 1024, 32 * 1024) == 0
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    assert t.base_m * t.base_n * 4 <= 32 * 1024
    assert check_tcube_tiling(t, "Ascend910B1", "float16", "float16", "float32", l1_size=96 * 1024,
                              l0c_size=32 * 1024, mdl=True) == []
    assert check_tcube_tiling(t, "Ascend910B1", "float16", "float16", "float32", l1_size=16 * 1024) != []


# ------------------------------------------------------------------------------------------ the checker


def legal_default(**overrides) -> asc.adv.TCubeTiling:
    values = dict(used_core_num=1, m=256, n=256, k_a=256, k_b=256, single_core_m=256, single_core_n=256,
                  single_core_k=256, base_m=128, base_n=256, base_k=64, depth_a1=8, depth_b1=8, step_m=1,
                  step_n=1, step_k_a=4, step_k_b=4, db_l0a=2, db_l0b=2, db_l0c=1)
    values.update(overrides)
    return asc.adv.TCubeTiling(**values)


def test_checker_names_each_broken_rule():
    """CANN's default base fills L0B (256*64*2*2 = 65536) and L0C (128*256*4 = 131072) exactly: legal."""
    assert check_tcube_tiling(legal_default(), "Ascend910B1", "float16", "float16", "float32") == []
    cases = {
        "L0B": legal_default(base_k=72, step_k_a=2, step_k_b=2, depth_a1=4, depth_b1=4),   # 256*72*2*2 > 64 KiB
        "alignment: base_k 72": legal_default(base_k=72, step_k_a=2, step_k_b=2, depth_a1=4, depth_b1=4),
        "L0C": legal_default(db_l0c=2),
        "depth": legal_default(depth_a1=6),
        "cores": legal_default(used_core_num=2),
        "L1": legal_default(step_k_a=8, step_k_b=8, depth_a1=16, depth_b1=16),     # 16*16K + 16*32K > 512K
        "shape: single_core_k": legal_default(single_core_k=128),
        "alignment: base_m 120": legal_default(base_m=120),
        "BiasTable": legal_default(is_bias=1, base_n=256),                          # 256*4 = 1024: fits...
    }
    for rule, tiling in cases.items():
        bad = check_tcube_tiling(tiling, "Ascend910B1", "float16", "float16", "float32",
                                 "float32" if rule != "BiasTable" else "int32")
        if rule == "BiasTable":
            assert bad == []                                                         # ...exactly
            continue
        assert any(p.startswith(rule) for p in bad), (rule, bad)
    small_bt = nst.make_platform("Ascend910B1", bt_size=512)
    assert any(p.startswith("BiasTable") for p in check_tcube_tiling(
        legal_default(is_bias=1), small_bt, "float16", "float16", "float32", "float32"))
    with pytest.raises(TilingError, match="depth"):
        validate_tcube_tiling(legal_default(depth_b1=3), "Ascend910B1", "float16", "float16", "float32")


def test_checker_applies_the_mdl_rules_and_transposed_l1_sizes():
    mdl = legal_default(step_m=2, depth_a1=16, step_k_a=4)      # 256/64 = 4 K blocks == stepKa: allowed
    assert check_tcube_tiling(mdl, "Ascend910B1", "float16", "float16", "float32", mdl=True) == []
    mdl = legal_default(step_m=2, depth_a1=8, step_k_a=2, step_k_b=2, depth_b1=4)
    assert any(p.startswith("MDL") for p in check_tcube_tiling(mdl, "Ascend910B1", "float16", "float16",
                                                               "float32", mdl=True))
    # int8 A transposed: a 16 x 64 block of A is stored 64 (K) x 16 (M) padded to 32 columns: twice the bytes
    t = legal_default(base_m=16, base_n=16, base_k=64, step_k_a=1, step_k_b=1, depth_a1=2, depth_b1=2)
    small = nst.make_platform("Ascend910B1", l1_size=2 * (16 * 64) + 2 * (64 * 32))
    assert check_tcube_tiling(t, small, "int8", "int8", "int32") == []
    assert any(p.startswith("L1") for p in check_tcube_tiling(t, small, "int8", "int8", "int32", a_trans=True))


def test_the_testing_toolkit_judges_host_tilings():
    """npuemu.testing.check_cube_tiling takes an asc.adv.TCubeTiling and uses this library's checker."""
    from npuemu.testing import check_cube_tiling
    types = dict(a_dtype="float16", b_dtype="float16", c_dtype="float32")
    assert check_cube_tiling(legal_default(), get_platform("Ascend910B1"), **types) == []
    found = check_cube_tiling(legal_default(depth_a1=5), get_platform("Ascend910B1"), **types)
    assert [v.invariant for v in found] == ["TCubeTiling legality"] and "depth" in found[0].detail


# ------------------------------------------------------------------------------------------ properties

DTYPES = st.sampled_from(["float16", "bfloat16", "float32", "int8"])
DIMS = st.one_of(st.integers(1, 4096), st.sampled_from([1, 15, 16, 17, 31, 33, 127, 128, 129, 255, 1000, 65536]))
PLATFORMS = nst.platforms(builtin=True, custom=True)


def independent_checks(t, p, a: str, bias: bool, shape, cores: int, l1: int, l0c: int, a_trans: bool = False,
                       b_trans: bool = False) -> None:
    """Capacities and coverage recomputed here from §3.6, without the library's checker."""
    m, n, k = shape
    size = SIZE[a]
    assert t.base_m * t.base_k * size * t.db_l0a <= p.l0a_size
    assert t.base_n * t.base_k * size * t.db_l0b <= p.l0b_size
    assert t.base_m * t.base_n * 4 * t.db_l0c <= l0c
    k_unit = 32 // size if (not a_trans and b_trans) else 16                  # C0 or 16 (§3.6)
    assert t.base_m % 16 == 0 and t.base_n % 16 == 0 and t.base_k % k_unit == 0
    assert not bias or t.base_n * 4 <= p.bt_size
    literal_l1 = (t.base_m * t.base_k * t.depth_a1 + t.base_n * t.base_k * t.depth_b1) * size + bias * t.base_n * 4
    assert literal_l1 <= l1
    assert t.depth_a1 in (t.step_m * t.step_k_a, 2 * t.step_m * t.step_k_a)
    assert t.depth_b1 in (t.step_n * t.step_k_b, 2 * t.step_n * t.step_k_b)
    # every element of C is computed by exactly one core: the row blocks and column blocks tile M and N
    rows, cols = math.ceil(m / t.single_core_m), math.ceil(n / t.single_core_n)
    assert (rows - 1) * t.single_core_m < m <= rows * t.single_core_m
    assert (cols - 1) * t.single_core_n < n <= cols * t.single_core_n
    assert t.single_core_k == k and t.used_core_num == rows * cols and 1 <= t.used_core_num <= cores


@profiles.settings(ci=80, thorough=1000)
@given(m=DIMS, n=DIMS, k=DIMS, a=DTYPES, a_trans=st.booleans(), b_trans=st.booleans(), bias=st.booleans(),
       platform=PLATFORMS, data=st.data())
def test_every_tiling_returned_is_legal_and_covers_c(m, n, k, a, a_trans, b_trans, bias, platform, data):
    cores = data.draw(st.integers(1, max(platform.aic_count, platform.aiv_count)), label="dim")
    mm = make(MultiCoreMatmulTiling, platform, a, a_trans=a_trans, b_trans=b_trans, bias=bias, shape=(m, n, k))
    assert mm.set_dim(cores) == 0
    t = asc.adv.TCubeTiling()
    ret = mm.get_tiling(t)
    if ret == -1:
        assert mm.last_error and t.used_core_num == 0
        return
    assert ret == 0 and mm.last_error is None
    assert check_tcube_tiling(t, platform, DT[a], DT[a], DT[OUT[a]], DT[OUT[a]] if bias else None, a_trans, b_trans,
                              core_num=cores, mdl=True) == []
    independent_checks(t, platform, a, bias, (m, n, k), cores, platform.l1_size, platform.l0c_size, a_trans,
                       b_trans)


@profiles.settings(ci=60, thorough=600)
@given(m=DIMS, n=DIMS, k=DIMS, a=DTYPES, bias=st.booleans(),
       l1=st.sampled_from([256, 1024, 2048, 8 * 1024, 48 * 1024, 200 * 1024]),
       l0c=st.sampled_from([512, 1024, 4096, 32 * 1024]), fix=st.sampled_from([-1, 16, 64, 256]))
def test_limited_buffers_give_legal_tilings_or_a_reason(m, n, k, a, bias, l1, l0c, fix):
    """Small buffer spaces and fixed bases: either a tiling within the limits, or -1 and a reason."""
    p = get_platform("Ascend910B1")
    mm = make(MatmulApiTiling, p, a, bias=bias, shape=(m, n, k))
    assert mm.set_buffer_space(l1, l0c) == 0 and mm.set_fix_split(fix, fix) == 0
    t = asc.adv.TCubeTiling()
    if mm.get_tiling(t) == -1:
        assert mm.last_error
        if fix == -1:       # refused only if the smallest base block (16 x 16 x baseK's unit) cannot fit
            c0 = 32 // SIZE[a]
            unit = max(16, c0)
            # A: 16 rows of M by unit of K; B: unit rows of K by 16 columns of N padded to C0 (int8: 32)
            smallest = (16 * unit + unit * max(16, c0)) * SIZE[a] + bias * 16 * 4
            assert l0c < 16 * 16 * 4 or l1 < smallest, mm.last_error
        else:
            assert "SetFixSplit" in mm.last_error, mm.last_error
        return
    assert check_tcube_tiling(t, p, a, a, OUT[a], OUT[a] if bias else None, l1_size=l1, l0c_size=l0c,
                              mdl=True, shape=(m, n, k)) == []
    independent_checks(t, p, a, bias, (m, n, k), 1, l1, l0c)
    assert fix == -1 or (t.base_m, t.base_n) == (fix, fix)


FREE_OR = lambda *values: st.sampled_from((-1, *values))      # noqa: E731 - -1: not set


@profiles.settings(ci=60, thorough=600)
@given(m=DIMS, n=DIMS, k=DIMS, a=DTYPES, a_trans=st.booleans(), b_trans=st.booleans(), bias=st.booleans(),
       nz=st.booleans(), c_ub=st.booleans(), first_n=st.booleans(), db=st.tuples(st.booleans(), st.booleans(),
                                                                                  st.booleans()),
       split=st.tuples(FREE_OR(32, 128), FREE_OR(64, 512), FREE_OR(32, 256), FREE_OR(16, 64), FREE_OR(16, 64),
                       FREE_OR(16, 32)),
       align=FREE_OR(16, 64, 128), platform=PLATFORMS, mdl=st.booleans(), data=st.data())
def test_options_give_legal_tilings_or_a_reason(m, n, k, a, a_trans, b_trans, bias, nz, c_ub, first_n, db, split,
                                                align, platform, mdl, data):
    """Any combination of the setters: 0 and a tiling that follows them and the rules, or -1 and a reason."""
    if nz:                                      # an NZ B has N in whole fractals and K in whole C0 rows
        n, k = -(-n // 16) * 16, -(-k // 32) * 32
    single = (data.draw(st.sampled_from([-1, m, min(m, -(-m // 32) * 16)]), label="single_m"),
              data.draw(st.sampled_from([-1, n, min(n, -(-n // 64) * 16)]), label="single_n"), -1)
    mm = make(MultiCoreMatmulTiling, platform, a, a_trans=a_trans, b_trans=b_trans, bias=bias, shape=(m, n, k))
    fmt = CubeFormat.NZ if nz else ND
    assert mm.set_b_type(GM, fmt, DT[a], b_trans) == 0
    assert mm.set_c_type(TPosition.VECCALC if c_ub else GM, ND, DT["float32" if a != "int8" else "int32"]) == 0
    assert mm.set_traverse(MatrixTraverse.FIRSTN if first_n else MatrixTraverse.FIRSTM) == 0
    assert mm.set_double_buffer(*db, False) == 0
    assert mm.set_split_range(*split) == 0 and mm.set_single_shape(*single) == 0
    assert mm.set_align_split(align, align, -1) == 0
    mm.set_matmul_config_params(1 if mdl else 0)
    t = asc.adv.TCubeTiling()
    ret = mm.get_tiling(t)
    event("refused: " + mm.last_error[:40] if ret == -1 else "tiled")
    if ret == -1:
        assert mm.last_error and t.used_core_num == 0
        return
    c = "float32" if a != "int8" else "int32"
    assert check_tcube_tiling(t, platform, a, a, c, OUT[a] if bias else None, a_trans, b_trans,
                              core_num=platform.aic_count, b_format=fmt, mdl=mdl,
                              c_in_ub=c_ub) == []
    assert t.iterate_order == int(first_n)
    assert single[0] == -1 or t.single_core_m == single[0]
    assert single[1] == -1 or t.single_core_n == single[1]
    assert split[0] == -1 or t.base_m <= max(16, split[0])
    assert split[1] == -1 or t.base_n <= max(16, split[1])
    assert (db[0] or t.depth_a1 == t.step_m * t.step_k_a) and (db[1] or t.depth_b1 == t.step_n * t.step_k_b)
    assert db[2] or t.db_l0c == 1


@profiles.settings(ci=40, thorough=400)
@given(m=DIMS, n=DIMS, k=st.integers(1, 1 << 16), a=DTYPES, cores=st.integers(1, 24))
def test_split_k_tilings_cover_m_n_and_k(m, n, k, a, cores):
    mm = make(MultiCoreMatmulTiling, "Ascend910B1", a, shape=(m, n, k))
    mm.set_dim(cores)
    mm.enable_multi_core_split_k(True)
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0, mm.last_error
    assert check_tcube_tiling(t, "Ascend910B1", a, a, OUT[a], split_k=True, core_num=cores) == []
    blocks = math.ceil(m / t.single_core_m) * math.ceil(n / t.single_core_n) * math.ceil(k / t.single_core_k)
    assert t.used_core_num == blocks <= cores
    assert (math.ceil(k / t.single_core_k) - 1) * t.single_core_k < k


@profiles.settings(ci=30, thorough=300)
@given(m=DIMS, n=DIMS, k=DIMS, a=DTYPES, cores=st.integers(1, 23))
def test_more_cores_never_make_the_busiest_core_slower(m, n, k, a, cores):
    """The split minimises the busiest core's estimated cycles (docs/matmul-tiling.md: on Ascend910B1,
    max(MACs / (4096 x the type's rate), bytes of A and B read / 32)); one more core can only lower it."""
    rate = {"float16": 1, "bfloat16": 1, "float32": 0.25, "int8": 2}[a]

    def cycles(dim: int) -> float:
        mm = make(MultiCoreMatmulTiling, "Ascend910B1", a, shape=(m, n, k))
        mm.set_dim(dim)
        t = asc.adv.TCubeTiling()
        assert mm.get_tiling(t) == 0
        sm, sn, sk = t.single_core_m, t.single_core_n, t.single_core_k
        return max(sm * sn * sk / (4096 * rate), sk * (sm + sn) * SIZE[a] / 32)
    assert cycles(cores + 1) <= cycles(cores)


MUTATIONS = {
    # rule the checker must name: how to break a legal tiling
    "alignment": lambda t: setattr(t, "base_m", t.base_m + 8),
    "depth": lambda t: setattr(t, "depth_a1", t.depth_a1 + 1),
    "cores": lambda t: setattr(t, "used_core_num", t.used_core_num + 1),
    "shape": lambda t: setattr(t, "single_core_m", t.m + 1),
    "L0C": lambda t: setattr(t, "db_l0c", 2) if 2 * t.base_m * t.base_n * 4 > 128 * 1024
    else setattr(t, "base_n", 1024 * 1024),
    "fields": lambda t: setattr(t, "step_k_b", 0),
}


@profiles.settings(ci=40, thorough=400)
@given(m=DIMS, n=DIMS, k=DIMS, a=DTYPES, cores=st.integers(1, 24), rule=st.sampled_from(sorted(MUTATIONS)))
def test_the_checker_catches_a_broken_tiling(m, n, k, a, cores, rule):
    """A legal tiling with one rule broken on purpose is reported under that rule's name."""
    mm = make(MultiCoreMatmulTiling, "Ascend910B1", a, shape=(m, n, k))
    mm.set_dim(cores)
    t = asc.adv.TCubeTiling()
    assert mm.get_tiling(t) == 0
    MUTATIONS[rule](t)
    bad = check_tcube_tiling(t, "Ascend910B1", a, a, OUT[a], core_num=cores)
    assert any(p.startswith(rule) for p in bad), (rule, bad)


# ------------------------------------------------------------------------------------------ pyasc


def test_pyasc_script_flow_through_the_served_module():
    """A pyasc host function (int8 matmul, C to UB as fp16) runs unchanged against asc.lib.host."""
    from npuemu.compat import pyasc as compat
    with compat.install():
        import asc as pasc
        import asc.lib.host as host
        from asc.runtime import config
        config.set_platform(config.Backend.Model, config.Platform.Ascend910B3)
        mm = host.MultiCoreMatmulTiling(host.get_ascendc_platform())
        mm.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_INT8, False)
        mm.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_INT8, False)
        mm.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT16)
        mm.set_dim(16)
        mm.set_org_shape(256, 256, 256)
        mm.set_shape(256, 256, 256)
        mm.set_traverse(host.MatrixTraverse.FIRSTM)
        mm.set_buffer_space(-1, -1, -1)
        tiling = pasc.adv.TCubeTiling()
        assert host.TCubeTiling is pasc.adv.TCubeTiling          # pyasc's docstrings spell it host.TCubeTiling
        assert mm.get_tiling(tiling) == 0
        assert mm.platform.name == "Ascend910B3" and 1 <= tiling.used_core_num <= 16
        assert check_tcube_tiling(tiling, "Ascend910B3", "int8", "int8", "float16", c_in_ub=True,
                                  core_num=16) == []


def test_platform_manager_answers_for_the_selected_platform():
    assert PlatformAscendCManager.get_instance("Ascend910B4").get_core_num_aic() == 20
    assert isinstance(get_ascendc_platform(), PlatformAscendC)
    with pytest.raises(TypeError):
        PlatformAscendCManager()


HOST_NAMES = [line.strip() for line in (ROOT / "tests" / "pyasc_surface" / "host_names.txt").read_text()
              .splitlines() if line.strip() and not line.startswith("#")]
INTERNAL = {"ProxyMeta", "ProxyBase"}          # pyasc's proxies over its C++ bindings


def test_every_pyasc_host_name_resolves_in_the_served_module():
    from npuemu.compat import pyasc as compat
    missing = []
    with compat.install():
        import asc.lib.host as host
        for entry in HOST_NAMES:
            owner_name, _, attr = entry.partition(".")
            if owner_name in INTERNAL:
                continue
            owner = getattr(host, owner_name, None)
            if owner is None:
                missing.append(entry)
            elif attr in ("name", "value") and isinstance(owner, type) and hasattr(owner, "__members__"):
                if not all(hasattr(member, attr) for member in owner):
                    missing.append(entry)
            elif attr and not hasattr(owner, attr):
                missing.append(entry)
        import asc.lib.host.wrappers as wrappers               # where pyasc defines them
        missing += [n for n in HOST_NAMES if "." not in n and n not in INTERNAL | {"get_ascendc_platform"}
                    and getattr(wrappers, n, None) is not getattr(host, n)]
    assert not missing, f"pyasc asc.lib.host names missing: {missing}"


def test_example_prints_the_tiling(capsys):
    example = runpy.run_path(str(ROOT / "examples" / "matmul_host_tiling.py"), run_name="matmul_host_tiling")
    example["main"]([])
    out = capsys.readouterr().out
    assert "get_tiling returned 0" in out and "legal: True" in out
    assert "single_core_m   176" in out and "base_k          64" in out        # the hand-computed 1024^3 case
    example["main"](["4096", "512", "2048", "--platform", "Ascend910B4", "--dim", "20", "--bias"])
    out = capsys.readouterr().out
    assert "on Ascend910B4, set_dim(20): get_tiling returned 0" in out and "legal: True" in out
