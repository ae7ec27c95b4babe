"""The tiling framework: tiling functions, TCubeTiling legality, tiling keys, the tiling cache, run_op."""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import KernelTypeError, LaunchError
from npuemu.host import (TensorDesc, TilingCache, TilingContext, TilingError, TilingResult, make_context, run_op,
                         run_tiling)
from npuemu.host.tiling_cache import launch_key
from npuemu.kernels.catalog import KERNELS, compare
from npuemu.language.struct import ArrayField, Field, Struct
from npuemu.options import Options
from npuemu.platform import Platform, get_platform
from npuemu.tiling.elementwise import (AddExampleTilingData, ElementwiseTiling, add_example_tiling,
                                       elementwise_tiling, tail_core_split, tail_tile_split)
from npuemu.tiling.matmul import MatmulConfig, TCubeTiling, check_tcube_tiling, matmul_tiling
from npuemu.testing.bundled import assert_bundled_tiling, record_tilings
from npuemu.tiling.rows import row_tiling

B1 = get_platform("Ascend910B1")
# 7 AIVs on 3 AI Cores (two each, one with a third): mix kernels still find AI Cores with two AIVs
SEVEN = Platform.custom("test-tiling-7core-64k", aiv_count=7, aic_count=3, ub_size=64 * 1024)


def _ctx(shape, dtype="float16", n_in=2, platform=B1, **kw) -> TilingContext:
    t = TensorDesc(tuple(shape), dtype)
    return make_context([t] * n_in, [t], platform=platform, **kw)


# ---------------------------------------------------------------------------- elementwise (§3.5 (b), (c))


def test_tail_core_split_worked_example():
    """1999 half elements on 8 cores: T' = 2000, 125 blocks: 5 cores of 256 and 3 of 240."""
    assert tail_core_split(1999, 16, 8) == (5, 3, 256, 240)
    r = elementwise_tiling(_ctx((1999,), core_num=8))
    t = r.tiling_data
    assert r.block_dim == 8 and r.tiling_key == 0 and r.workspace_sizes == (0,)
    assert (t.former_num, t.tail_num, t.former_length, t.tail_length) == (5, 3, 256, 240)
    # each slice fits one tile: no full tiles, a last tile of the whole slice
    assert (t.former_tile_num, t.former_tile_length, t.former_last_tile_length) == (0, 0, 256)
    assert (t.tail_tile_num, t.tail_tile_length, t.tail_last_tile_length) == (0, 0, 240)
    assert t.to_bytes() == ElementwiseTiling.from_bytes(t.to_bytes()).to_bytes()


def test_tail_tile_split_cases():
    assert tail_tile_split(256, 16, 32) == (0, 0, 256)          # fewer blocks than a tile
    assert tail_tile_split(1024, 16, 32) == (2, 512, 0)         # whole tiles
    assert tail_tile_split(1040, 16, 32) == (2, 512, 16)        # two tiles and a tail tile


def test_the_floor_variant_of_the_split_leaves_cores_empty():
    """The spec's caution: formerLength = ceil(floor(T'/n)/A)*A gives 0 for total 1, n 8, A 4; (b) does not."""
    total, n, a = 1, 8, 4
    t_prime = -(-total // a) * a
    floor_variant = -(-(t_prime // n) // a) * a
    assert floor_variant == 0
    former_num, tail_num, former_length, tail_length = tail_core_split(total, a, n)
    assert former_num + tail_num == 1 and max(former_length, tail_length) == 4


@pytest.mark.parametrize("itemsize", [1, 2, 4])
def test_elementwise_split_invariants(itemsize):
    """Coverage, 32-byte alignment, balance, no empty core, for every total up to 600 and up to 9 cores."""
    a = 32 // itemsize
    for cores in range(1, 10):
        for total in range(1, 601):
            fn, tn, fl, tl = tail_core_split(total, a, cores)
            n = fn + tn
            assert 1 <= n <= cores and 0 <= fn < max(n, 1) + 1
            assert fl % a == 0 and tl % a == 0 and tl > 0 and fl - tl in (0, a)
            offsets = [fl * i if i < fn else fl * fn + tl * (i - fn) for i in range(n)]
            lengths = [fl if i < fn else tl for i in range(n)]
            assert offsets == [sum(lengths[:i]) for i in range(n)]
            assert sum(lengths) == -(-total // a) * a               # covers the 32-byte rounded length
            assert offsets[-1] < total                              # the last core starts inside the tensor


@pytest.mark.parametrize("platform", [B1, SEVEN], ids=lambda p: p.name)
@pytest.mark.parametrize("total", [1, 7, 1999, 4096, 12345, 1 << 20])
def test_elementwise_tiling_fits_ub_and_covers_every_core_slice(platform, total):
    for dtype, scratch in (("float32", 0), ("float16", 8), ("bfloat16", 12)):
        ctx = _ctx((total,), dtype, platform=platform, attrs={"scratch_bytes_per_element": scratch})
        r = run_tiling(elementwise_tiling, ctx, cache=None)
        t = r.tiling_data
        assert 1 <= r.block_dim <= platform.aiv_count
        size = TensorDesc((1,), dtype).itemsize
        for length, num, tile, last in ((t.former_length, t.former_tile_num, t.former_tile_length,
                                         t.former_last_tile_length),
                                        (t.tail_length, t.tail_tile_num, t.tail_tile_length, t.tail_last_tile_length)):
            assert num * tile + last == length
            assert (tile * size) % 32 == 0 and (last * size) % 32 == 0
            per_element = 2 * 3 * size + scratch                    # 3 double-buffered queues + scratch
            assert max(tile, last) * per_element <= platform.ub_size


def test_elementwise_tiling_errors():
    with pytest.raises(TilingError, match="one size"):
        elementwise_tiling(make_context([TensorDesc((4,), "float32")], [TensorDesc((5,), "float32")]))
    tiny = Platform.custom("test-tiling-1k-ub", ub_size=1024)
    with pytest.raises(TilingError, match="UB"):
        elementwise_tiling(_ctx((100,), "float32", platform=tiny, attrs={"scratch_bytes_per_element": 128}))


def test_add_example_gold_value():
    """ops-math add_example UT: [32,4,4,4] float32, 64 cores, UB 262144 -> "2048 32 10912", key 0."""
    p = Platform.custom("test-tiling-add-example", aiv_count=64, aic_count=32, ub_size=262144)
    r = add_example_tiling(_ctx((32, 4, 4, 4), "float32", platform=p))
    t = r.tiling_data
    assert f"{t.totalNum} {t.blockFactor} {t.ubFactor}" == "2048 32 10912"
    assert (r.tiling_key, r.block_dim, r.workspace_sizes) == (0, 64, (0,))
    assert AddExampleTilingData.sizeof() == 24
    assert add_example_tiling(_ctx((2, 3, 4, 5), "int32", platform=p)).tiling_key == 1
    with pytest.raises(TilingError, match="4-D"):
        add_example_tiling(_ctx((2048,), "float32", platform=p))


# ---------------------------------------------------------------------------- rows


def test_row_tiling_splits_rows_over_cores_and_columns_into_tiles():
    r = row_tiling(_ctx((33, 200), "float32", n_in=1))
    t = r.tiling_data
    assert r.block_dim == 33 and (t.former_num, t.former_rows, t.tail_rows) == (0, 1, 1)
    r = row_tiling(_ctx((100, 200), "float32", n_in=1, platform=SEVEN))
    t = r.tiling_data
    assert r.block_dim == 7 and (t.former_num, t.former_rows, t.tail_rows) == (2, 15, 14)
    assert 2 * 15 + 5 * 14 == 100
    assert (t.cols_padded, t.col_tile_len, t.col_tile_num) == (200, 200, 1) and t.tile_rows >= 1
    # a row wider than UB: split into column tiles when the kernel can, a clear error otherwise
    narrow = Platform.custom("test-tiling-4k-ub", ub_size=4096)
    wide = _ctx((3, 1000), "float32", n_in=1, platform=narrow,
                attrs={"tile_bytes_per_element": 8, "scratch_bytes_per_col": 4, "split_cols": True})
    t = row_tiling(wide).tiling_data
    assert t.col_tile_num == -(-1000 // t.col_tile_len) > 1 and t.col_tile_len % 8 == 0 and t.tile_rows == 1
    assert t.col_tile_len * 12 <= 4096
    with pytest.raises(TilingError, match="column tiles"):
        row_tiling(_ctx((3, 1000), "float32", n_in=1, platform=narrow, attrs={"tile_bytes_per_element": 8}))


def test_reduce_sum_splits_wide_rows_into_column_tiles(rng):
    from npuemu.kernels import reduce_sum
    narrow = Platform.custom("test-tiling-6k-ub", ub_size=6 * 1024)
    x = rng.standard_normal((5, 1000)).astype(np.float32)
    out = reduce_sum.reduce_sum(x, platform=narrow)
    ok, err = compare(out, reduce_sum.reference(x), KERNELS[8].tol("float32"))
    assert KERNELS[8].name == "reduce_sum" and ok, err


# ---------------------------------------------------------------------------- matmul (§3.6)


@pytest.mark.parametrize("platform", [B1, SEVEN, get_platform("Ascend910B4")], ids=lambda p: p.name)
@pytest.mark.parametrize("m, n, k, dtype", [
    (1, 1, 1, "float16"), (1024, 1024, 1024, "float16"), (33, 4000, 77, "float32"), (4096, 128, 8192, "int8"),
    (512, 512, 512, "bfloat16"), (7, 9, 100000, "float32")])
def test_matmul_tiling_is_legal(platform, m, n, k, dtype):
    out = "int32" if dtype == "int8" else "float32"
    ctx = make_context([TensorDesc((m, k), dtype), TensorDesc((k, n), dtype)], [TensorDesc((m, n), out)],
                       platform=platform)
    r = matmul_tiling(ctx)
    t = r.tiling_data
    assert check_tcube_tiling(t, platform, r.extra["config"]) == []
    assert r.block_dim == t.usedCoreNum <= platform.aic_count
    assert t.usedCoreNum == -(-m // t.singleCoreM) * -(-n // t.singleCoreN)
    assert TCubeTiling.sizeof() == 200                                   # 50 int32 fields


def test_matmul_tiling_with_bias_transposes_and_core_cap():
    ctx = make_context([TensorDesc((256, 512), "float16"), TensorDesc((384, 256), "float16"),
                        TensorDesc((384,), "float32")], [TensorDesc((512, 384), "float32")],
                       attrs={"trans_a": True, "trans_b": True}, core_num=4)
    r = matmul_tiling(ctx)
    t = r.tiling_data
    assert (t.M, t.N, t.Ka, t.isBias) == (512, 384, 256, 1) and t.usedCoreNum <= 4
    assert check_tcube_tiling(t, B1, r.extra["config"]) == []


def _good() -> TCubeTiling:
    """A legal tiling: 256 x 512 x 128 float16 on 4 cores of Ascend910B1."""
    return TCubeTiling(usedCoreNum=4, M=256, N=512, Ka=128, Kb=128, singleCoreM=128, singleCoreN=256,
                       singleCoreK=128, baseM=128, baseN=256, baseK=64, depthA1=4, depthB1=4, stepM=1, stepN=1,
                       stepKa=2, stepKb=2)


@pytest.mark.parametrize("change, cfg, expected", [
    ({"baseM": 512}, {}, "L0A"),                                    # 512*64*2*2 = 128 KiB
    ({"baseK": 128}, {}, "L0B"),                                    # 256*128*2*2 = 128 KiB (L0A: exactly 64 KiB)
    ({"dbL0C": 2}, {}, "L0C"),                                      # 128*256*4*2 = 256 KiB
    ({"isBias": 1, "baseN": 512, "singleCoreN": 512, "usedCoreNum": 2}, {}, "BiasTable"),
    ({"depthA1": 3}, {}, "depthA1"),
    ({"depthB1": 16, "stepKb": 8}, {}, "L1 use"),
    ({"baseM": 120}, {}, "baseM 120 is not a multiple of 16"),
    ({"baseN": 248}, {}, "baseN 248"),
    ({"baseK": 24}, {}, "baseK 24 is not a multiple of 16"),
    ({"baseK": 40}, {"a_dtype": "int8", "b_dtype": "int8", "trans_b": True}, "multiple of 32"),
    ({"M": 250, "singleCoreM": 125}, {"a_format": "NZ"}, "NZ input: M 250"),
    ({"singleCoreK": 64}, {}, "singleCoreK 64 != K 128"),
    ({"singleCoreM": 512}, {}, "singleCoreM 512 > M 256"),
    ({"usedCoreNum": 3}, {}, "usedCoreNum 3 != ceil(M/singleCoreM)"),
    ({"singleCoreM": 8, "singleCoreN": 16, "usedCoreNum": 1024}, {}, "usedCoreNum 1024 > 24 cube cores"),
    ({"dbL0A": 3}, {}, "dbL0A = 3 must be 1 or 2"),
    ({"iterateOrder": 2}, {}, "iterateOrder"),
    ({"Kb": 64}, {}, "Ka (128) and Kb (64) differ"),
    ({"stepM": 2, "depthA1": 4, "stepKa": 1}, {"mdl": True}, "MDL: Ka/baseK > stepKa needs stepM == 1"),
    ({"stepKa": 2, "stepKb": 1, "depthB1": 2, "Ka": 448, "Kb": 448, "singleCoreK": 448}, {"mdl": True},
     "must divide one another"),
    ({"baseM": 0}, {}, "baseM = 0 must be positive"),
])
def test_check_tcube_tiling_reports_each_violation(change, cfg, expected):
    assert check_tcube_tiling(_good(), B1) == []
    t = _good()
    for k, v in change.items():
        setattr(t, k, v)
    problems = check_tcube_tiling(t, B1, **cfg)
    assert any(expected in p for p in problems), problems


def test_check_tcube_tiling_split_k_and_unassigned():
    t = _good()
    t.singleCoreK, t.usedCoreNum = 64, 8
    assert check_tcube_tiling(t, B1, split_k=True) == []
    assert "fields never assigned" in check_tcube_tiling(TCubeTiling(M=1), B1)[0]
    assert check_tcube_tiling(_good(), B1, MatmulConfig(a_dtype="float32", b_dtype="float32")) != []


# ---------------------------------------------------------------------------- tiling keys


@asc.jit
def keyed(z: asc.GlobalAddress, t: ElementwiseTiling):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    if asc.tiling_key_is(0):
        zg.set_value(0, 10)
    if asc.tiling_key_is(7):
        zg.set_value(0, 70)
    if asc.tiling_key_is(7):                  # a key may be tested more than once
        zg.set_value(1, 71)


@asc.jit
def unkeyed(z: asc.GlobalAddress, t: ElementwiseTiling):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, 8)
    zg.set_value(0, t.tail_num)


def _data() -> ElementwiseTiling:
    return elementwise_tiling(_ctx((64,), "float32")).tiling_data


def test_tiling_key_selects_the_branch(mode):
    z = np.zeros(8, np.int32)
    keyed[1](z, _data(), tiling_key=0, **mode)
    assert z[:2].tolist() == [10, 0]
    keyed[1](z, _data(), tiling_key=7, **mode)
    assert z[:2].tolist() == [70, 71]


def test_a_key_without_a_branch_is_a_launch_error():
    z = np.zeros(8, np.int32)
    with pytest.raises(LaunchError, match=r"tiling key 3 has no branch.*supported tiling keys: 0, 7"):
        keyed[1](z, _data(), tiling_key=3)
    with pytest.raises(LaunchError, match="launch it with tiling_key="):
        keyed[1](z, _data())
    with pytest.raises(LaunchError, match="non-negative"):
        Options(tiling_key=-1)


def test_kernels_without_key_branches_share_one_binary():
    z = np.zeros(8, np.int32)
    for key in (None, 0, 5, 123):
        unkeyed[1](z, _data(), tiling_key=key)
    assert z[0] == _data().tail_num == 8 and len(unkeyed.binaries()) == 1


def test_tiling_key_is_needs_a_constant_non_negative_key():
    z = np.zeros(8, np.int32)

    @asc.jit
    def runtime_key(z: asc.GlobalAddress, k: int):
        if asc.tiling_key_is(k):
            pass
    with pytest.raises(KernelTypeError, match="constant integer key"):
        runtime_key[1](z, 1, tiling_key=1)

    @asc.jit
    def negative_key(z: asc.GlobalAddress):
        if asc.tiling_key_is(-1):
            pass
    with pytest.raises(KernelTypeError, match="non-negative"):
        negative_key[1](z, tiling_key=1)


# ---------------------------------------------------------------------------- tiling cache (ATB ring buffer)


def test_cache_replaces_in_ring_order_and_counts():
    cache = TilingCache(capacity=3)
    results = {k: TilingResult(1, _data(), tiling_key=i) for i, k in enumerate("abcde")}
    for k in "abc":
        assert cache.lookup(k) is None
        cache.insert(k, results[k])
    assert cache.keys() == ["a", "b", "c"] and (cache.hits, cache.misses) == (0, 3)
    assert cache.lookup("a").tiling_key == 0                  # a hit does not protect "a" (FIFO, not LRU)
    cache.insert("d", results["d"])
    assert cache.keys() == ["d", "b", "c"]
    cache.insert("e", results["e"])
    assert cache.keys() == ["d", "e", "c"]
    assert cache.lookup("a") is None and cache.lookup("c").tiling_key == 2
    assert cache.stats() == {"hits": 2, "misses": 4, "size": 3, "capacity": 3}
    cache.clear()
    assert len(cache) == 0 and (cache.hits, cache.misses) == (0, 0)


def test_cache_lookup_starts_at_the_last_hit():
    cache = TilingCache(capacity=4)
    for k in "abcd":
        cache.insert(k, TilingResult(1, _data()))
    assert cache.lookup("c") is not None and cache._hit_pos == 2
    assert cache.lookup("a") is not None and cache._hit_pos == 0     # wrapped around to [0, hit_pos)


def test_cache_capacity_is_clamped_like_atb(monkeypatch):
    assert TilingCache(0).capacity == 1 and TilingCache(5000).capacity == 1024
    monkeypatch.setenv("NPUEMU_TILING_CACHE_SIZE", "7")
    assert TilingCache().capacity == 7
    monkeypatch.delenv("NPUEMU_TILING_CACHE_SIZE")
    assert TilingCache().capacity == 5


def test_cache_keys_on_the_launch_parameters():
    calls = []

    def counting(ctx):
        calls.append(ctx)
        return elementwise_tiling(ctx)
    cache = TilingCache(capacity=8)
    for shape, dtype, attrs, platform in [((64,), "float32", {}, B1), ((64,), "float32", {}, B1),
                                          ((65,), "float32", {}, B1), ((64,), "float16", {}, B1),
                                          ((64,), "float32", {"widen": True}, B1), ((64,), "float32", {}, SEVEN),
                                          ((64,), "float32", {"widen": True}, B1)]:
        run_tiling(counting, _ctx(shape, dtype, attrs=attrs, platform=platform), cache)
    assert len(calls) == 5 and (cache.hits, cache.misses) == (2, 5)
    a, b = _ctx((64,), "float32"), _ctx((64,), "float32", core_num=3)
    assert launch_key(counting, a) != launch_key(counting, b)
    # the cache keeps its own copy: changing the result of a miss does not change the next hit
    fresh = _ctx((99,), "float32")
    first = run_tiling(elementwise_tiling, fresh, cache)
    first.tiling_data.tail_num = 999
    assert run_tiling(elementwise_tiling, fresh, cache).tiling_data.tail_num != 999


# ---------------------------------------------------------------------------- results and run_op


class Big(Struct):
    blob = ArrayField(asc.uint8, 5000, default=0)


class Half(Struct):
    n = Field(asc.int32)


@pytest.mark.parametrize("result, message", [
    (TilingResult(0, Half(n=1)), "block_dim"),
    (TilingResult(70000, Half(n=1)), "block_dim"),
    (TilingResult(1, Half(n=1), tiling_key=-2), "tiling_key"),
    (TilingResult(1, Half()), "never assigned"),
    (TilingResult(1, Big()), "5000 bytes; the capacity is 4096"),
    (TilingResult(1, {"n": 1}), "Struct"),
    (TilingResult(1, Half(n=1), workspace_sizes=(-1,)), "workspace_sizes"),
    (TilingResult(1, Half(n=1), schedule_mode=2), "schedule_mode"),
])
def test_tiling_result_check(result, message):
    with pytest.raises(TilingError, match=message):
        result.check(_ctx((8,)))


def test_capacity_comes_from_the_context():
    TilingResult(1, Big()).check(_ctx((8,), tiling_data_capacity=8192))


class WsTiling(Struct):
    n = Field(asc.int32)


def ws_tiling(ctx: TilingContext) -> TilingResult:
    return TilingResult(block_dim=2, tiling_data=WsTiling(n=ctx.input(0).size), workspace_sizes=(64, 64))


@asc.jit
def through_workspace(x: asc.GlobalAddress, z: asc.GlobalAddress, workspace: asc.GlobalAddress, t: WsTiling):
    """Copy x to z through the user workspace: each core stages its half."""
    half = t.n // 2
    base = asc.get_block_idx() * half
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + base, half)
    wg = asc.GlobalTensor()
    wg.set_global_buffer(asc.get_user_workspace(workspace) + base, half)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + base, half)
    for i in range(half):
        wg.set_value(i, xg.get_value(i))
    for i in range(half):
        zg.set_value(i, wg.get_value(i))


def test_run_op_allocates_system_plus_user_workspace():
    small_ws = Platform.custom("test-tiling-small-sysws", system_workspace_size=1024)
    x = np.arange(128, dtype=np.uint8)
    z = np.zeros_like(x)
    r = run_op(through_workspace, ws_tiling, (x,), (z,), platform=small_ws, cache=None)
    assert np.array_equal(z, x)
    assert r.workspace_size(small_ws) == 1024 + 128 and r.user_workspace_size == 128


def test_run_op_errors():
    x = np.zeros(16, np.int32)
    with pytest.raises(LaunchError, match="no 'workspace' parameter"):
        run_op(unkeyed, lambda ctx: ws_tiling(_ctx((8,))), (), (x,), cache=None)

    def batch(ctx):
        return TilingResult(block_dim=49, tiling_data=_data(), schedule_mode=1)
    with pytest.raises(LaunchError, match="schedule mode 1"):
        run_op(unkeyed, batch, (), (x,), cache=None)

    def not_a_result(ctx):
        return 3
    with pytest.raises(LaunchError, match="not a TilingResult"):
        run_op(unkeyed, not_a_result, (), (x,), cache=None)


def test_run_op_uses_the_cache():
    cache = TilingCache(capacity=2)
    x = np.zeros(64, np.int32)
    for _ in range(3):
        r = run_op(unkeyed, elementwise_tiling, (), (x,), cache=cache)
    assert (cache.hits, cache.misses) == (2, 1) and x[0] == r.tiling_data.tail_num


# ---------------------------------------------------------------------------- bundled kernels on a custom part


@pytest.mark.parametrize("kernel", KERNELS, ids=[k.name for k in KERNELS])
def test_bundled_kernels_on_a_7_core_64k_ub_part(kernel, rng):
    """The tiling reads the profile: at most 7 blocks, tiles sized for 64 KiB of UB, exact results.

    Debug mode: the same generated code as a compiled launch (tests/test_kernels.py checks that), without
    compiling every kernel once more for this profile.
    """
    dtype = kernel.dtypes[0]
    for shape in (kernel.test_shapes[2], kernel.test_shapes[-1]):
        inputs = kernel.make_inputs(rng, dtype, shape)
        with record_tilings() as tilings:
            out = kernel.run(*inputs, platform=SEVEN, debug=True)
        ok, err = compare(out, kernel.reference(*inputs), kernel.tol(dtype))
        assert ok, f"{kernel.name} {shape}: {err}"
        assert tilings and all(t.ctx.platform is SEVEN for t in tilings)
        for t in tilings:
            assert_bundled_tiling(t.tiling_fn, t.ctx, t.result)        # core bound and UB capacity included
        if shape == kernel.test_shapes[2] and tilings[0].tiling_fn in (elementwise_tiling, row_tiling):
            # 4096 elements (512 blocks of 32 bytes) or 33 rows: enough work for every one of the 7 vector cores
            assert [t.result.block_dim for t in tilings] == [7] * len(tilings)
