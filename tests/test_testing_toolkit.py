"""npuemu.testing itself: invariant checkers, kernel assertions, strategies and the pytest plugin.

The property tests of the bundled kernels (test_property_*.py) use these
pieces; here each piece is checked on hand-made inputs whose right answer is
known, including the messages a user reads when something is wrong.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import npuemu.asc as asc
from npuemu.platform import Platform, get_platform
from npuemu.testing import (BlockWork, KernelMismatchError, TilingInvariantError, TilingPlan, Tolerance,
                            UnwrittenOutputError, assert_arrays_match, assert_kernel_matches, assert_plan,
                            check_block_schedule, check_deterministic, check_monotonic, check_plan, compare_arrays,
                            plan_from_block_factor, plan_from_former_tail, profiles, ulp_distance)
from npuemu.testing import strategies as nst

pytest_plugins = ("pytester",)


# ------------------------------------------------------------------------------ tiling invariants


def spec_example(**changes) -> TilingPlan:
    """superkernel-binaries-tiling.md §3.5(b): 1999 halves on 8 cores, 5 x 256 + 3 x 240, tiles of 128."""
    fields = dict(elem_bytes=2, core_count=8, ub_size=192 * 1024, ub_bytes_per_element=12, tile_len=128)
    fields.update(changes)
    return plan_from_former_tail(1999, 5, 256, 3, 240, **fields)


def messages(plan: TilingPlan) -> list[str]:
    return [str(v) for v in check_plan(plan)]


def test_the_documented_tail_core_split_is_sound():
    plan = spec_example()
    assert plan.padded_total == 2000 and plan.block_dim == 8
    assert check_plan(plan) == []
    assert [b.offset for b in plan.blocks] == [0, 256, 512, 768, 1024, 1280, 1520, 1760]


def blocks(*spans, tile=None):
    return [BlockWork(off, n, tile, *(((-(-n // tile)), n - (-(-n // tile) - 1) * tile) if tile else (None, None)))
            for off, n in spans]


@pytest.mark.parametrize("plan,expected", [
    (TilingPlan(total=100, elem_bytes=4, block_dim=2, core_count=4, blocks=blocks((0, 40), (48, 52))),
     "[exact coverage] elements [40, 48) are not covered (block 0 ends at 40, block 1 starts at 48)"),
    (TilingPlan(total=100, elem_bytes=4, block_dim=2, core_count=4, blocks=blocks((0, 56), (48, 52))),
     "[exact coverage] block 1: starts at element 48, inside block 0's slice (which ends at 56): 8 elements "
     "covered twice"),
    (TilingPlan(total=100, elem_bytes=4, block_dim=2, core_count=4, blocks=blocks((0, 48), (48, 48))),
     "[exact coverage] elements [96, 100) are not covered: the last slice (block 1) ends at 96, the tensor has "
     "100 elements"),
    (TilingPlan(total=100, elem_bytes=4, block_dim=2, core_count=4, blocks=blocks((0, 56), (56, 56))),
     "[exact coverage] block 1: reads and writes past the end: the slices reach element 112, the tensor has 100"),
    (TilingPlan(total=64, elem_bytes=4, block_dim=9, core_count=8, blocks=blocks(*[(8 * i, 8) for i in range(8)],
                                                                              (64, 0))),
     "[core bound] block_dim 9 exceeds the 8 AIV cores of the platform"),
    (TilingPlan(total=64, elem_bytes=4, block_dim=3, core_count=8, blocks=blocks((0, 32), (32, 32))),
     "[core bound] the plan describes 2 blocks but block_dim is 3"),
    (TilingPlan(total=64, elem_bytes=4, block_dim=3, core_count=8, blocks=blocks((0, 32), (32, 32), (64, 0))),
     "[no empty core] block 2: gets 0 elements; every launched block needs at least one"),
    (TilingPlan(total=100, elem_bytes=4, block_dim=2, core_count=8, blocks=blocks((0, 50), (50, 50))),
     "[alignment] block 1: starts at element 50 = byte 200, not a multiple of 32"),
    (TilingPlan(total=96, elem_bytes=2, block_dim=1, core_count=8, blocks=blocks((0, 96), tile=40)),
     "[alignment] block 0: a tile of 40 elements is 80 bytes, not a multiple of 32"),
    (TilingPlan(total=8192, elem_bytes=4, block_dim=2, core_count=8, blocks=blocks((0, 4096), (4096, 4096),
                                                                                  tile=2048),
                ub_size=32 * 1024, ub_bytes_per_element=24, ub_extra_bytes=64),
     "[UB capacity] blocks 0-1: a tile of 2048 elements needs 2048 x 24 + 64 = 49216 bytes of UB, the platform "
     "has 32768"),
    (TilingPlan(total=1000, elem_bytes=4, block_dim=1, core_count=8, align_bytes=None,
                blocks=[BlockWork(0, 1000, tile_len=256, loops=3, last_tile_len=256)]),
     "[loop/tail consistency] block 0: 3 tiles (2 x 256 + last 256) cover 768 of the slice's 1000 elements: "
     "232 are never processed"),
    (TilingPlan(total=1000, elem_bytes=4, block_dim=1, core_count=8, align_bytes=None,
                blocks=[BlockWork(0, 1000, tile_len=256, loops=4, last_tile_len=0)]),
     "[loop/tail consistency] block 0: the last tile has 0 elements, outside (0, 256]"),
    (TilingPlan(total=96, elem_bytes=4, block_dim=3, core_count=8, balance="even",
                blocks=blocks((0, 16), (16, 40), (56, 40))),
     "[balance] slices range from 16 to 40 elements; a tail-core split keeps them within one unit of 8"),
    (TilingPlan(total=96, elem_bytes=4, block_dim=3, core_count=8, balance="last-short", align_bytes=None,
                blocks=blocks((0, 40), (40, 24), (64, 32))),
     "[balance] block 1: has 24 elements; every block but the last has 40"),
])
def test_each_invariant_names_what_is_wrong(plan, expected):
    found = messages(plan)
    assert expected in found, "\n".join(found)


def test_assert_plan_lists_every_violation_with_the_subject():
    plan = TilingPlan(total=1000, elem_bytes=2, block_dim=9, core_count=8, label="my_tiling",
                      blocks=blocks(*[(100 * i, 100) for i in range(9)], tile=100))
    with pytest.raises(TilingInvariantError) as err:
        assert_plan(plan)
    text = str(err.value)
    assert text.startswith("tiling violates exact coverage, core bound, alignment (my_tiling: 1000 elements of "
                           "2 bytes over block_dim=9 (8 AIV cores))")
    assert {v.invariant for v in err.value.violations} == {"exact coverage", "core bound", "alignment"}
    assert "[exact coverage] elements [900, 1000) are not covered" in text
    assert "[alignment] blocks 0-8: a tile of 100 elements is 200 bytes, not a multiple of 32" in text
    assert "[alignment] block 1: starts at element 100 = byte 200, not a multiple of 32" in text


def test_long_reports_are_cut():
    plan = TilingPlan(total=10_000, elem_bytes=4, block_dim=50, core_count=64, align_bytes=32,
                      blocks=blocks(*[(i * 200 + 1, 199) for i in range(50)]))
    text = str(pytest.raises(TilingInvariantError, assert_plan, plan).value)
    assert "... and" in text and len(text.splitlines()) == 1 + 12 + 1


def test_block_factor_plans_match_the_add_example_kernel():
    # ops-math add_example: [32, 4, 4, 4] float32 on 64 cores -> blockFactor 32, all 64 cores
    plan = plan_from_block_factor(2048, 32, 64, elem_bytes=4, core_count=64, align_bytes=None, tile_len=10912)
    assert check_plan(plan) == []
    short = plan_from_block_factor(2049, 33, 63, elem_bytes=4, core_count=64, align_bytes=None)
    assert short.blocks[-1].length == 2049 - 62 * 33 and check_plan(short) == []


def test_the_too_small_former_length_variant_is_caught():
    """The spec's cautionary formula: formerLength = ceil(floor(T'/n)/A)*A leaves 1 element on 8 cores empty."""
    total, n, a = 1, 8, 4
    padded = -(-total // a) * a
    former = -(-(padded // n) // a) * a            # = 0
    plan = plan_from_former_tail(total, 0, former, n, 0, elem_bytes=8, core_count=n)
    found = messages(plan)
    assert any(m.startswith("[no empty core] blocks 0-7: gets 0 elements") for m in found)
    assert any(m.startswith("[exact coverage] elements [0, 1) are not covered") for m in found)


def test_nondeterministic_tiling_is_reported():
    from npuemu.asc import Field, KnownTypes, Struct
    from npuemu.host.tiling import TilingResult

    class Data(Struct):
        tile = Field(KnownTypes.int32, 0)

    calls = iter(range(100))

    def flaky(ctx):
        return TilingResult(block_dim=1, tiling_data=Data(tile=128 + 32 * (next(calls) % 2)))

    (v,) = check_deterministic(flaky, object())
    assert v.invariant == "determinism"
    assert "differ in tiling_data" in v.detail and ("128" in v.detail or "byte 0" in v.detail)


def test_fewer_blocks_for_more_work_is_reported():
    """The first bundled tiling: 47 blocks of 8 floats use 47 cores, 49 blocks only 25 (2 blocks each)."""
    from npuemu.host.tiling import TensorDesc, TilingContext, TilingResult

    def ceil_blocks_per_core(ctx):
        blocks = -(-ctx.inputs[0].size // 8)
        per_core = -(-blocks // ctx.platform.aiv_count)
        return TilingResult(block_dim=-(-blocks // per_core), tiling_data=None)

    p = get_platform("Ascend910B1")
    contexts = [TilingContext((TensorDesc((n,), "float32"),), (), p) for n in (8 * 47, 8 * 48, 8 * 49)]
    (v,) = check_monotonic(ceil_blocks_per_core, contexts[::2])
    assert v.detail == ("376 elements launch 47 blocks but 392 launch only 25 (fewer blocks for more work, with 48 "
                        "cores available)")
    assert check_monotonic(ceil_blocks_per_core, contexts[1:]) == []      # from 48 = all cores, a drop is allowed


# ---------------------------------------------------------------------------------------- matmul


def test_row_major_and_serpentine_schedules_cover_the_output():
    assert check_block_schedule(1000, 700, 128, 256, 20, core_count=24) == []

    def serpentine(t, loops_n=3):               # odd tile rows run right to left, as catlass's swizzle does
        row, col = divmod(t, loops_n)
        return row, (loops_n - 1 - col) if row % 2 else col
    assert check_block_schedule(1000, 700, 128, 256, 7, serpentine) == []


def test_broken_schedules_are_reported():
    def collide(t):
        return divmod(t // 2 * 2, 3)
    found = [str(v) for v in check_block_schedule(512, 768, 128, 256, 4, collide)]
    assert "[matmul coverage] block_coord maps tasks 0 and 1 to the same tile (0, 0): not a bijection" in found

    found = [str(v) for v in check_block_schedule(512, 768, 128, 256, 4, tasks_of=lambda b: range(b, 11, 4))]
    assert "[matmul coverage] 1 of 12 tasks are run by no block (first: task 11)" in found

    found = [str(v) for v in check_block_schedule(512, 768, 128, 256, 30, core_count=24)]
    assert "[matmul coverage] block_dim 30 is outside [1, 24] cores" in found

    found = [str(v) for v in check_block_schedule(500, 700, 128, 256, 4, actual_shape=lambda c: (128, 256))]
    assert "[matmul coverage] tile column 0: actual block rows add up to 512, M is 500" in found


def test_cube_tiling_checks_wrap_the_framework_checker():
    matmul = pytest.importorskip("npuemu.tiling.matmul")
    from npuemu.testing import check_cube_tiling
    from npuemu.host.run import make_context
    p = get_platform("Ascend910B1")
    ctx = make_context([np.zeros((300, 200), np.float16), np.zeros((200, 500), np.float16)],
                       [np.zeros((300, 500), np.float32)], platform=p)
    result = matmul.matmul_tiling(ctx)
    cfg = result.extra["config"]
    assert check_cube_tiling(result.tiling_data, p, cfg=cfg) == []

    t = result.tiling_data
    t.baseM, t.usedCoreNum = 120, t.usedCoreNum + 1
    found = [str(v) for v in check_cube_tiling(t, p, cfg=cfg)]
    assert "[TCubeTiling legality] baseM 120 is not a multiple of 16" in found
    assert any(m.startswith(f"[matmul coverage] usedCoreNum {t.usedCoreNum} but ceil(M/singleCoreM)") for m in found)
    assert not any("legality] usedCoreNum" in m for m in found)         # reported once, as coverage


def test_cube_tiling_checks_fail_loudly_without_the_checker(monkeypatch):
    """No checker to import must be an error, never an empty (passing) list of violations."""
    from npuemu.errors import NpuemuError
    from npuemu.host.run import make_context
    from npuemu.testing import check_cube_tiling
    from npuemu.tiling.matmul import matmul_tiling
    p = get_platform("Ascend910B1")
    ctx = make_context([np.zeros((64, 32), np.float16), np.zeros((32, 48), np.float16)],
                       [np.zeros((64, 48), np.float32)], platform=p)
    t = matmul_tiling(ctx).tiling_data
    t.baseM = 120                                                          # illegal: not a multiple of 16
    monkeypatch.setitem(sys.modules, "npuemu.tiling.matmul", None)         # the checker cannot be imported
    with pytest.raises(NpuemuError, match="npuemu.tiling.matmul.check_tcube_tiling"):
        check_cube_tiling(t, p)
    assert [v.invariant for v in check_cube_tiling(t, p, check=lambda t, p: ["too big"])] == ["TCubeTiling legality"]


# ------------------------------------------------------------------------------------ comparing


def test_report_gives_multi_dim_index_values_bits_and_ulps():
    expected = np.arange(12, dtype=np.float16).reshape(3, 4)
    got = expected.copy()
    got[1, 2] = np.nextafter(got[1, 2], np.float16(100))
    got[2, 3] = 99
    text = compare_arrays(got, expected)
    assert text.splitlines() == [
        "output (float16, shape (3, 4)) does not match the reference (bit-exact): 2 of 12 elements differ",
        "  first at index (1, 2): got 6.004 (0x4601), expected 6.0 (0x4600), 1 ulp apart (abs error 0.00390625)",
        "  worst at index (2, 3): got 99.0 (0x5630), expected 11.0 (0x4980), 3248 ulp apart (abs error 88)",
    ]
    assert compare_arrays(got, expected, Tolerance(ulps=1)).splitlines()[0].endswith("1 of 12 elements differ")
    assert compare_arrays(got, expected, Tolerance(ulps=4000)) is None
    assert compare_arrays(got, expected, Tolerance(rtol=0.0, atol=100)) is None



def test_the_report_shown_in_the_docs():
    """First bad index in memory order, the worst one, values, bits, ulps, then up to eight more positions."""
    expected = np.full((3, 1000), 6, np.float16)
    expected[2, 999] = 11
    got = expected.copy()
    got[1, 500:504] = got[2, 993:999] = np.float16(6.00390625)          # the next float16 after 6
    got[2, 999] = 99
    with pytest.raises(KernelMismatchError) as err:
        assert_arrays_match(got, expected, label="scale_kernel[1]")
    lines = str(err.value).splitlines()
    assert lines == [
        "scale_kernel[1] output 0 (float16, shape (3, 1000)) does not match the reference (bit-exact): "
        "11 of 3000 elements differ",
        "  first at index (1, 500): got 6.004 (0x4601), expected 6.0 (0x4600), 1 ulp apart (abs error 0.00390625)",
        "  worst at index (2, 999): got 99.0 (0x5630), expected 11.0 (0x4980), 3248 ulp apart (abs error 88)",
        "  also at (1, 501), (1, 502), (1, 503), (2, 993), (2, 994), (2, 995), (2, 996), (2, 997), ...",
    ]
    assert "\n".join(lines) in (ROOT / "docs" / "testing.md").read_text()

def test_exact_comparison_rules():
    f = np.float32
    assert compare_arrays(f([np.nan, 1]), f([np.nan, 1])) is None                # NaN meets NaN
    assert "zeros of opposite sign" in compare_arrays(f([-0.0]), f([0.0]))       # the sign of zero counts
    assert compare_arrays(f([np.inf]), f([np.inf]), Tolerance(rtol=1)) is None
    assert compare_arrays(f([np.inf]), f([3e38]), Tolerance(rtol=1)) is not None  # inf only matches inf
    assert compare_arrays(f([np.nan]), f([1]), Tolerance(atol=1e9)) is not None
    ints = compare_arrays(np.int32([5, 7]), np.int32([5, 9]))
    assert "got 7, expected 9 (difference -2)" in ints
    assert compare_arrays(np.int32([5, 7]), np.int32([5, 9]), Tolerance(atol=2)) is None
    assert compare_arrays(f([1, 2]), f([1, 2, 3])) == "output: got shape (2,), the reference has shape (3,)"
    assert compare_arrays(f([1]), np.float64([1])) == "output: got dtype float32, the reference has dtype float64"


def test_bfloat16_reports_and_ulps():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    a = np.array([1.0, 2.0], bf16)
    b = np.array([1.0, 2.015625], bf16)
    assert ulp_distance(a, b).tolist() == [0.0, 1.0]
    assert "got 2 (0x4000), expected 2.01562 (0x4001), 1 ulp apart" in compare_arrays(a, b)


@given(st.floats(width=32, allow_nan=False, allow_infinity=False), st.integers(-3, 3))
def test_ulp_distance_counts_representable_steps(x, steps):
    a = b = np.float32(x)
    with np.errstate(over="ignore"):            # stepping past the largest float32 gives inf: assumed away
        for _ in range(abs(steps)):
            b = np.nextafter(b, np.float32(np.inf if steps > 0 else -np.inf))
    assume(np.isfinite(b))
    assert ulp_distance(np.array([a]), np.array([b]))[0] == abs(steps)     # across zero too: -0 and +0 are one


# ------------------------------------------------------------------------------- running kernels


@asc.jit
def scale_kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int, factor: float):
    """``y[:n] = x[:n] * factor`` on one core (``n`` a multiple of 8)."""
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y, n)
    pipe = asc.TPipe()
    qi = asc.TQue(asc.TPosition.VECIN, 1)
    qo = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(qi, 1, n * 4)
    pipe.init_buffer(qo, 1, n * 4)
    t = qi.alloc_tensor(x.dtype)
    asc.data_copy(t, xg, n)
    qi.enque(t)
    t = qi.deque(x.dtype)
    o = qo.alloc_tensor(y.dtype)
    asc.muls(o, t, factor, n)
    qo.enque(o)
    qi.free_tensor(t)
    o = qo.deque(y.dtype)
    asc.data_copy(yg, o, n)
    qo.free_tensor(o)


def test_a_launched_kernel_is_compared_on_its_output_argument(npuemu_rng):
    x = npuemu_rng.standard_normal(256).astype(np.float32)
    y = np.zeros_like(x)
    out = assert_kernel_matches(scale_kernel[1], lambda a: a * np.float32(0.5), (x, y, 256, 0.5))
    assert out is y and np.array_equal(y, x * np.float32(0.5))
    assert_kernel_matches(scale_kernel, lambda a: a * np.float32(0.5), (x, y, 256, 0.5), core_num=1, outputs=1)


def test_a_wrong_result_is_reported_with_the_kernel_name(npuemu_rng):
    x = npuemu_rng.standard_normal(64).astype(np.float32)
    with pytest.raises(KernelMismatchError) as err:
        assert_kernel_matches(scale_kernel[1], lambda a: a * np.float32(0.25), (x, np.empty_like(x), 64, 0.5))
    first = str(err.value).splitlines()[0]
    assert first.startswith("scale_kernel[1] output 0 (float32, shape (64,)) does not match the reference "
                            "(bit-exact): ")


def test_elements_the_kernel_never_writes_are_caught(npuemu_rng):
    x = npuemu_rng.standard_normal(72).astype(np.float32)
    y = x * np.float32(2)                         # already right: only poisoning reveals the skipped tail
    with pytest.raises(UnwrittenOutputError) as err:
        assert_kernel_matches(scale_kernel[1], lambda a: a * np.float32(2), (x, y, 64, 2.0))
    text = str(err.value)
    assert "8 of 72 elements were never written: first at index 64, still holding the fill 0xffffffff" in text
    y = x * np.float32(2)
    assert_kernel_matches(scale_kernel[1], lambda a: a * np.float32(2), (x, y, 64, 2.0), poison=False)


def test_host_functions_and_tolerances_by_dtype():
    def halve(a):
        return (a / 2).astype(a.dtype)

    def rough(a):
        return (a / 2 + a * 1e-3).astype(a.dtype)
    x16 = np.linspace(1, 2, 50, dtype=np.float16)
    assert_kernel_matches(halve, halve, (x16,))
    with pytest.raises(KernelMismatchError):
        assert_kernel_matches(rough, halve, (x16,))
    assert_kernel_matches(rough, halve, (x16,), ulps={"float16": 4, "float32": 1})
    assert_kernel_matches(rough, halve, (x16,), tolerance={"float16": Tolerance(rtol=3e-3)})
    with pytest.raises(KernelMismatchError, match="2 outputs, the reference returned 3"):
        assert_kernel_matches(lambda a: (a, a), lambda a: (a, a, a), (x16,))


# ---------------------------------------------------------------------------------------- strategies


@given(nst.sizes(1, 5000, elem_bytes=2))
def test_sizes_stay_in_range(n):
    assert 1 <= n <= 5000


def test_sizes_favour_the_edges():
    from hypothesis import find
    for wanted in (1, 15, 16, 17, 4093, 767, 769):
        assert find(nst.sizes(1, 5000, elem_bytes=2), lambda n, w=wanted: n == w) == wanted


@given(nst.shapes(max_dims=4, max_size=4096))
def test_shapes_respect_the_size_limit(shape):
    assert 1 <= len(shape) <= 4 and all(s >= 1 for s in shape) and int(np.prod(shape)) <= 4096


@given(nst.custom_platforms(max_aiv=16, max_ub=64 * 1024))
def test_custom_platforms_are_valid_profiles(p):
    assert 1 <= p.aiv_count <= 16 and 1 <= p.aic_count <= p.aiv_count
    assert 1024 <= p.ub_size <= 64 * 1024 and p.ub_size % 32 == 0
    fields = dict(aiv_count=p.aiv_count, aic_count=p.aic_count, ub_size=p.ub_size, l1_size=p.l1_size,
                  l0a_size=p.l0a_size, l0b_size=p.l0b_size, l0c_size=p.l0c_size)
    assert Platform.custom(p.name, **fields) == p                   # what Platform.custom would accept and build
    assert nst.make_platform(**fields).name == p.name               # same fields, same name (same cache key)


@given(nst.tiling_contexts(n_inputs=2, output_shape=lambda s: s[:1], platforms=nst.platforms(custom=False)))
def test_tiling_contexts(ctx):
    assert len(ctx.inputs) == 2 and ctx.inputs[0] == ctx.inputs[1]
    assert ctx.outputs[0].shape == ctx.inputs[0].shape[:1]
    assert ctx.platform.name in {p.name for p in nst.builtin_platforms()}


def test_settings_follow_the_selected_profile(monkeypatch):
    monkeypatch.setattr(profiles, "_selected", None)
    monkeypatch.delenv(profiles.ENV, raising=False)
    assert profiles.settings(ci=7, thorough=70).max_examples == 7
    monkeypatch.setenv(profiles.ENV, "npuemu-thorough")
    assert profiles.settings(ci=7, thorough=70).max_examples == 70
    assert profiles.settings().max_examples == profiles.DEFAULT_EXAMPLES["thorough"]
    with pytest.raises(ValueError, match="unknown npuemu Hypothesis profile 'fast'"):
        profiles.select("fast")


# ------------------------------------------------------------------------------------------ plugin


@pytest.fixture
def isolated(pytester, monkeypatch):
    """pytester runs in this process: keep its profile choice and platform selection from leaking out."""
    from hypothesis import settings
    from npuemu import platform as platform_mod
    monkeypatch.setattr(profiles, "_selected", profiles._selected)
    monkeypatch.setattr(platform_mod, "_selected", platform_mod._selected)
    monkeypatch.delenv(profiles.ENV, raising=False)
    monkeypatch.delenv("NPUEMU_PLATFORM", raising=False)
    current = settings._current_profile
    yield pytester
    settings.load_profile(current)


def test_platform_fixture_default_one_and_all(isolated):
    isolated.makepyfile("""
        from npuemu.platform import default_platform

        def test_platform(npuemu_platform):
            assert default_platform() is npuemu_platform     # launches without platform= use it
            print("PLATFORM", npuemu_platform.name)
    """)
    one = isolated.runpytest_inprocess("-s", "-q")
    one.assert_outcomes(passed=1)
    assert "PLATFORM Ascend910B1" in one.stdout.str()
    picked = isolated.runpytest_inprocess("-s", "-q", "--npuemu-platform=Ascend910B4")
    assert "PLATFORM Ascend910B4" in picked.stdout.str()
    every = isolated.runpytest_inprocess("--npuemu-all-platforms", "-v")
    names = nst.builtin_platforms()
    every.assert_outcomes(passed=len(names))
    every.stdout.fnmatch_lines([f"*test_platform?{p.name}? PASSED*" for p in names])


def test_platform_marker_and_explicit_parametrisation(isolated):
    isolated.makepyfile("""
        import pytest

        @pytest.mark.npuemu_platforms("Ascend910B1", "Ascend910B3")
        def test_marked(npuemu_platform):
            assert npuemu_platform.aiv_count in (40, 48)

        @pytest.mark.parametrize("npuemu_platform", ["Ascend910B4"], indirect=True)
        def test_explicit(npuemu_platform):
            assert npuemu_platform.name == "Ascend910B4"
    """)
    isolated.runpytest_inprocess("-q", "--npuemu-all-platforms").assert_outcomes(passed=3)


def test_rng_seed_is_reported_and_reusable(isolated):
    isolated.makepyfile("""
        def test_draw(npuemu_rng):
            print("DRAW", npuemu_rng.integers(1 << 30))
            assert False
    """)
    first = isolated.runpytest_inprocess("-q")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*npuemu_rng seed: * (rerun this test with --npuemu-seed=*)"])
    seed = first.stdout.str().split("--npuemu-seed=")[1].split(")")[0]
    draw = [line for line in first.stdout.lines if line.startswith("DRAW")]
    again = isolated.runpytest_inprocess("-q", f"--npuemu-seed={seed}")
    assert [line for line in again.stdout.lines if line.startswith("DRAW")] == draw
    fresh = isolated.runpytest_inprocess("-q", "--npuemu-seed=random")
    fresh.assert_outcomes(failed=1)


def test_hypothesis_profile_option_and_check_level(isolated):
    isolated.makepyfile("""
        from hypothesis import settings

        def test_profile(npuemu_check_level):
            assert settings.default.max_examples == 500
            assert settings.default.deadline is None
            assert npuemu_check_level == "off"
    """)
    isolated.runpytest_inprocess("-q", "--npuemu-hypothesis=thorough", "--npuemu-check=off").assert_outcomes(
        passed=1)
    header = isolated.runpytest_inprocess("--npuemu-hypothesis=thorough", "--npuemu-check=off")
    header.stdout.fnmatch_lines(["npuemu: platform *; Hypothesis profile npuemu-thorough"])


def test_hypothesis_profiles_from_the_environment(isolated, monkeypatch):
    isolated.makepyfile("""
        import os
        from hypothesis import settings

        def test_profile():
            want = {"ci": 20, "thorough": 500}[os.environ["WANT"]]
            assert settings.default.max_examples == want and settings.default.deadline is None
    """)
    monkeypatch.setenv(profiles.ENV, "thorough")
    monkeypatch.setenv("WANT", "thorough")
    isolated.runpytest_inprocess("-q").assert_outcomes(passed=1)
    monkeypatch.setattr(profiles, "_selected", None)
    monkeypatch.setenv(profiles.ENV, "ci")
    monkeypatch.setenv("WANT", "ci")
    isolated.runpytest_inprocess("-q").assert_outcomes(passed=1)


# ------------------------------------------------------------------------------ the documented example

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "property_test_my_tiling.py"


def test_docs_show_the_example_file_unchanged():
    docs = (ROOT / "docs" / "testing.md").read_text()
    block = re.search(r"<!-- example: examples/property_test_my_tiling.py -->\n```python\n(.*?)```", docs, re.S)
    assert block is not None, "docs/testing.md lost the example block"
    assert block[1] == EXAMPLE.read_text()


def test_the_example_property_tests_pass():
    """What a user runs: pytest on the example file (tiling properties, then the kernel against NumPy).

    NPUEMU_DEBUG=1 runs the kernel's generated code without compiling it (identical results, see
    tests/test_kernels.py), so a cold kernel cache does not add four compilations to the suite.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["NPUEMU_DEBUG"] = "1"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "2 passed" in run.stdout
