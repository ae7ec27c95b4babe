"""Property tests of the tiling functions: the invariants hold for Hypothesis-drawn shapes, dtypes and platforms.

Pure host code, no kernel launches.  Every bundled kernel is tiled through its
own host function (``capture_tilings`` stops it before the launch), so the
contexts carry the kernel's real UB budget; the tiling functions are also
tested directly over wider ranges (sizes up to 2**31, random custom
platforms down to a 1 KiB UB).  Three deliberately wrong tiling functions,
written the way a user would write one, must be caught with a message that
says what is wrong.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from npuemu.asc import Field, KnownTypes, Struct
from npuemu.host.tiling import TensorDesc, TilingContext, TilingError, TilingResult
from npuemu.kernels.catalog import KERNELS
from npuemu.platform import Platform, get_platform
from npuemu.testing import (BlockWork, TilingInvariantError, TilingPlan, assert_tiling, check_monotonic, profiles,
                            tile_loop)
from npuemu.testing import strategies as nst
from npuemu.testing.bundled import assert_bundled_tiling, capture_tilings
from npuemu.tiling.elementwise import add_example_tiling, elementwise_tiling
from npuemu.tiling.matmul import matmul_tiling
from npuemu.tiling.rows import row_tiling

CASES = [(k, d) for k in KERNELS for d in k.dtypes]
SMALL_UB = nst.custom_platforms(max_ub=64 * 1024)


def ub_fits_one_block(ctx: TilingContext) -> bool:
    """Whether one 32-byte block of every queue (double buffered) and scratch fits the UB at all."""
    tensors = (*ctx.inputs, *ctx.outputs)
    align = 32 // min(t.itemsize for t in tensors)
    per_element = 2 * sum(t.itemsize for t in tensors) + int(ctx.attr("scratch_bytes_per_element", 0))
    return per_element * align <= ctx.platform.ub_size - int(ctx.attr("ub_reserved_bytes", 0))


def refusal_is_justified(message: str) -> bool:
    """A tiling may refuse only when its smallest tile needs more UB than the platform has, or when the
    platform has no AI Core that can host the kernel type (a mix kernel needs two AIVs per AI Core)."""
    m = re.search(r"needs (\d+) bytes of UB(?:; \S+ has | \()(\d+)", message)
    if m is not None:
        return int(m[1]) > int(m[2])
    m = re.search(r"needs AI Cores with two AIV cores each; \S+ has (\d+) AIC and (\d+) AIV cores", message)
    return m is not None and (int(m[1]) == 0 or int(m[2]) // int(m[1]) < 2)


# ------------------------------------------------------------------------------ the bundled kernels


@pytest.mark.parametrize("kernel,dtype", CASES, ids=[f"{k.name}-{d}" for k, d in CASES])
@profiles.settings(ci=8, thorough=150)
@given(data=st.data(), platform=nst.platforms())
def test_bundled_kernel_tilings(kernel, dtype, data, platform):
    """What each bundled host function tiles, for its dtypes on built-in and random platforms."""
    if len(kernel.demo_shape) == 2:
        shape = data.draw(nst.row_shapes(max_rows=2000, max_cols=3000, max_size=1 << 20), label="shape")
    else:
        shape = data.draw(nst.shapes(max_dims=2, max_size=1 << 20), label="shape")
    inputs = [np.empty(a.shape, a.dtype) for a in kernel.make_inputs(np.random.default_rng(0), dtype, shape)]
    with capture_tilings() as tilings:
        try:
            kernel.run(*inputs, platform=platform)
        except TilingError as exc:
            assert refusal_is_justified(str(exc)), exc
            assume(False)                     # this platform cannot run the kernel at this shape
    assert tilings, f"{kernel.name} launched without tiling"
    for t in tilings:
        assert_bundled_tiling(t.tiling_fn, t.ctx, t.result)


# ------------------------------------------------------------------------- the tiling functions


@profiles.settings(ci=60, thorough=2000)
@given(ctx=nst.tiling_contexts(shapes=nst.shapes(max_dims=3, max_size=1 << 31), n_inputs=2,
                               dtypes=nst.dtypes(("float16", "bfloat16", "float32", "int8", "int32")),
                               attrs=st.fixed_dictionaries({
                                   "scratch_bytes_per_element": st.sampled_from([0, 8, 12]),
                                   "widen": st.booleans(),
                                   "ub_reserved_bytes": st.sampled_from([0, 0, 256])})))
def test_elementwise_tiling(ctx):
    if not ub_fits_one_block(ctx):
        with pytest.raises(TilingError, match="a tile of one 32-byte block needs"):
            elementwise_tiling(ctx)
        return
    assert_bundled_tiling(elementwise_tiling, ctx)


@profiles.settings(ci=30, thorough=1000)
@given(ctx=nst.tiling_contexts(shapes=nst.shapes(max_dims=1, max_size=1 << 24),
                               dtypes=nst.dtypes(("float32", "float16", "bfloat16")),
                               output_dtype=lambda d: "float32" if d != "float32" else "float16"))
def test_elementwise_tiling_of_casts(ctx):
    """Input and output dtypes differ: slices are aligned for the narrower one, tiles sized for both."""
    assume(ub_fits_one_block(ctx))
    assert_bundled_tiling(elementwise_tiling, ctx)


@profiles.settings(ci=30, thorough=1000)
@given(data=st.data(), platform=nst.platforms(), dtype=nst.dtypes(("float16", "float32")))
def test_elementwise_tiling_never_drops_cores_for_more_work(data, platform, dtype):
    small = data.draw(nst.sizes(1, 1 << 24), label="small")
    large = data.draw(nst.sizes(small, 1 << 24), label="large")
    contexts = [TilingContext((TensorDesc((n,), dtype),) * 2, (TensorDesc((n,), dtype),), platform)
                for n in (small, large)]
    assume(ub_fits_one_block(contexts[0]))
    assert check_monotonic(elementwise_tiling, contexts) == []


@profiles.settings(ci=40, thorough=1500)
@given(ctx=nst.tiling_contexts(shapes=nst.row_shapes(max_rows=1 << 20, max_cols=1 << 17, max_size=1 << 31),
                               dtypes=nst.dtypes(("float16", "bfloat16", "float32")),
                               attrs=st.fixed_dictionaries({
                                   "tile_bytes_per_element": st.sampled_from([4, 8]),
                                   "scratch_bytes_per_col": st.sampled_from([0, 8, 24]),
                                   "fixed_bytes": st.sampled_from([0, 96]),
                                   "split_cols": st.booleans()}),
                               output_shape=lambda s: s[:1]))
def test_row_tiling(ctx):
    try:
        result = row_tiling(ctx)
    except TilingError as exc:
        assert "bytes of UB" in str(exc)
        cols = ctx.input(0).shape[-1]
        per_block = 32 // ctx.input(0).itemsize
        per_col = ctx.attr("tile_bytes_per_element") + ctx.attr("scratch_bytes_per_col")
        room = ctx.platform.ub_size - ctx.attr("fixed_bytes")
        if ctx.attr("split_cols"):
            assert per_block * per_col > room                 # not even one block of columns fits
        else:
            assert -(-cols // per_block) * per_block * per_col > room    # a whole row does not fit
        return
    assert_bundled_tiling(row_tiling, ctx, result)


@profiles.settings(ci=30, thorough=800)
@given(ctx=nst.tiling_contexts(shapes=nst.shapes(min_dims=4, max_dims=4, max_size=1 << 30),
                               dtypes=nst.dtypes(("float32", "int32")), n_inputs=2))
def test_add_example_tiling(ctx):
    assert_bundled_tiling(add_example_tiling, ctx)


def test_add_example_gold_value():
    """ops-math's unit test: [32, 4, 4, 4] float32, 64 cores, UB 262144 -> tiling data 2048 32 10912, key 0."""
    p = nst.make_platform(aiv_count=64, ub_size=262144)
    ctx = TilingContext((TensorDesc((32, 4, 4, 4), "float32"),) * 2, (TensorDesc((32, 4, 4, 4), "float32"),), p)
    r = add_example_tiling(ctx)
    t = r.tiling_data
    assert (t.totalNum, t.blockFactor, t.ubFactor, r.tiling_key, r.workspace_sizes) == (2048, 32, 10912, 0, (0,))
    assert_bundled_tiling(add_example_tiling, ctx, r)


@st.composite
def matmul_contexts(draw):
    m, n, k = (draw(nst.sizes(1, 1 << 14), label=d) for d in "MNK")
    a_dtype = draw(st.sampled_from(["float16", "bfloat16", "float32", "int8"]))
    c_dtype = "int32" if a_dtype == "int8" else "float32"
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    a = TensorDesc((k, m) if trans_a else (m, k), a_dtype)
    b = TensorDesc((n, k) if trans_b else (k, n), a_dtype)
    inputs = (a, b) + ((TensorDesc((n,), "float32"),) if draw(st.booleans()) else ())
    platform = draw(nst.platforms())
    return TilingContext(inputs, (TensorDesc((m, n), c_dtype),), platform,
                         attrs=(("trans_a", trans_a), ("trans_b", trans_b)))


@profiles.settings(ci=30, thorough=1000)
@given(ctx=matmul_contexts())
def test_matmul_tiling(ctx):
    """A legal TCubeTiling on every platform, and one output block per used cube core, covering C exactly."""
    assert_bundled_tiling(matmul_tiling, ctx)


# -------------------------------------------------- deliberately wrong tiling functions, as a user writes them


class SplitTiling(Struct):
    """A user's tiling data: every block gets ``block_len`` elements, streamed in tiles of ``tile_len``."""

    total = Field(KnownTypes.uint32)
    block_len = Field(KnownTypes.uint32)
    tile_len = Field(KnownTypes.uint32)


def split_plan(ctx: TilingContext, result: TilingResult) -> TilingPlan:
    """How the user's kernel reads SplitTiling: block i covers [i*block_len, ...), clipped to the tensor."""
    t = result.tiling_data
    blocks = []
    for i in range(result.block_dim):
        off = i * t.block_len
        n = min(t.block_len, t.total - off)
        blocks.append(BlockWork(off, n, t.tile_len, *tile_loop(n, t.tile_len)) if n > 0 else BlockWork(off, n))
    x = ctx.input(0)
    return TilingPlan(total=x.size, elem_bytes=x.itemsize, block_dim=result.block_dim, blocks=blocks,
                      core_count=ctx.platform.aiv_count, ub_size=ctx.platform.ub_size,
                      ub_bytes_per_element=2 * 3 * x.itemsize, align_bytes=None, balance="last-short")


def floor_split(ctx: TilingContext) -> TilingResult:
    """Wrong: ``total // cores`` per block leaves the remainder (the tail) to nobody."""
    n = ctx.input(0).size
    cores = min(ctx.platform.aiv_count, n)
    return TilingResult(block_dim=cores, tiling_data=SplitTiling(total=n, block_len=n // cores, tile_len=256))


def fixed_tile(ctx: TilingContext) -> TilingResult:
    """Wrong: 16 KiB tiles per tensor whatever the UB (3 queues x 2 buffers = 96 KiB)."""
    x = ctx.input(0)
    cores = min(ctx.platform.aiv_count, x.size)
    block_len = -(-x.size // cores)
    return TilingResult(block_dim=-(-x.size // block_len),
                        tiling_data=SplitTiling(total=x.size, block_len=block_len, tile_len=16384 // x.itemsize))


def one_block_per_chunk(ctx: TilingContext) -> TilingResult:
    """Wrong: one block per 256 elements, however many cores there are."""
    n = ctx.input(0).size
    return TilingResult(block_dim=-(-n // 256), tiling_data=SplitTiling(total=n, block_len=256, tile_len=256))


WRONG = [
    (floor_split, nst.platforms(custom=False),
     r"\[exact coverage\] elements \[\d+, \d+\) are not covered: the last slice \(block \d+\) ends at \d+, "
     r"the tensor has \d+ elements"),
    (fixed_tile, nst.platforms(),
     r"\[UB capacity\] blocks? [\d, -]+: a tile of \d+ elements needs \d+ x \d+ = \d+ bytes of UB, the platform "
     r"has \d+"),
    (one_block_per_chunk, nst.platforms(min_ub=8 * 1024),
     r"\[core bound\] block_dim \d+ exceeds the \d+ AIV cores of the platform"),
]


@pytest.mark.parametrize("tiling_fn,platforms,message", WRONG, ids=[w[0].__name__ for w in WRONG])
def test_wrong_tiling_functions_are_caught(tiling_fn, platforms, message):
    """A property test of each wrong function fails, and the error says what is wrong (after shrinking)."""
    @settings(max_examples=300, database=None, derandomize=True, deadline=None, report_multiple_bugs=False,
              suppress_health_check=[HealthCheck.too_slow])
    @given(ctx=nst.tiling_contexts(shapes=nst.shapes(max_dims=1, max_size=1 << 16), platforms=platforms,
                                   dtypes=nst.dtypes(("float16", "float32")), n_inputs=2))
    def property_test(ctx):
        assert_tiling(tiling_fn, ctx, split_plan)

    with pytest.raises(TilingInvariantError) as err:
        property_test()
    text = str(err.value)
    assert text.startswith("tiling violates ") and f"({tiling_fn.__name__} on " in text
    assert re.search(message, text), text


def test_the_wrong_functions_are_right_somewhere():
    """Each fails only on some inputs, so the invariants (not the harness) are what catches them."""
    p = nst.make_platform(aiv_count=8)

    def ctx(n):
        return TilingContext((TensorDesc((n,), "float32"),) * 2, (TensorDesc((n,), "float32"),), p)
    for fn in (floor_split, fixed_tile, one_block_per_chunk):
        assert_tiling(fn, ctx(8 * 256), split_plan)


# ------------------------------------------- the worked example of docs/testing.md (examples/), got wrong

ROOT = Path(__file__).resolve().parent.parent


def load_example():
    """examples/property_test_my_tiling.py as a module (tests/test_testing_toolkit.py runs it with pytest)."""
    path = ROOT / "examples" / "property_test_my_tiling.py"
    spec = importlib.util.spec_from_file_location("property_test_my_tiling", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXAMPLE = load_example()
MyTiling = EXAMPLE.MyTiling


def ex_floor_split(ctx: TilingContext) -> TilingResult:
    """my_tiling with ``n // cores`` (rounded down to 32 bytes) per block: the tail is left to nobody."""
    x = ctx.input(0)
    n, per = x.size, 32 // x.itemsize
    cores = ctx.platform.aiv_count
    block_len = n // cores // per * per or per
    return TilingResult(block_dim=min(cores, -(-n // block_len)),
                        tiling_data=MyTiling(total=n, block_len=block_len, tile_len=min(block_len, 4096)))


def ex_fixed_tile(ctx: TilingContext) -> TilingResult:
    """my_tiling with a 16 KiB tile per tensor whatever the UB."""
    x = ctx.input(0)
    n, s = x.size, x.itemsize
    per = 32 // s
    block_len = -(-(-(-n // per)) // ctx.platform.aiv_count) * per
    return TilingResult(block_dim=-(-n // block_len),
                        tiling_data=MyTiling(total=n, block_len=block_len, tile_len=min(block_len, 16384 // s)))


def ex_fixed_block(ctx: TilingContext) -> TilingResult:
    """my_tiling with one block per 256 bytes of work, however many cores there are."""
    x = ctx.input(0)
    block_len = 256 // x.itemsize
    return TilingResult(block_dim=-(-x.size // block_len),
                        tiling_data=MyTiling(total=x.size, block_len=block_len, tile_len=block_len))


ex_floor_split.__name__, ex_fixed_tile.__name__, ex_fixed_block.__name__ = "floor_split", "fixed_tile", "fixed_block"


def vector_ctx(n: int, dtype: str, platform) -> TilingContext:
    return TilingContext((TensorDesc((n,), dtype),) * 2, (TensorDesc((n,), dtype),), get_platform(platform))


TINY = Platform.custom("tiny-7core", aiv_count=7, ub_size=64 * 1024)      # docs/platforms.md's custom part

DOCUMENTED = [
    (ex_floor_split, vector_ctx(1999, "float16", "Ascend910B1"), [
        "tiling violates exact coverage (floor_split on Ascend910B1 (48 AIV, 24 AIC, UB 196608 bytes), inputs "
        "float16[1999], float16[1999])",
        "  [exact coverage] elements [1536, 1999) are not covered: the last slice (block 47) ends at 1536, the "
        "tensor has 1999 elements"]),
    (ex_fixed_tile, vector_ctx(1 << 20, "float32", TINY), [
        "tiling violates UB capacity (fixed_tile on tiny-7core (7 AIV, 24 AIC, UB 65536 bytes), inputs "
        "float32[1048576], float32[1048576])",
        "  [UB capacity] blocks 0-6: a tile of 4096 elements needs 4096 x 24 = 98304 bytes of UB, the platform "
        "has 65536"]),
    (ex_fixed_block, vector_ctx(1 << 20, "float16", TINY), [
        "tiling violates core bound (fixed_block on tiny-7core (7 AIV, 24 AIC, UB 65536 bytes), inputs "
        "float16[1048576], float16[1048576])",
        "  [core bound] block_dim 8192 exceeds the 7 AIV cores of the platform"]),
]


def shown_in_docs(lines: list[str]) -> bool:
    """Whether docs/testing.md shows these lines one after the other (code blocks may be indented)."""
    doc = [line.strip() for line in (ROOT / "docs" / "testing.md").read_text().splitlines()]
    want = [line.strip() for line in lines]
    return any(doc[i:i + len(want)] == want for i in range(len(doc)))


@pytest.mark.parametrize("tiling_fn,ctx,expected", DOCUMENTED, ids=[d[0].__name__ for d in DOCUMENTED])
def test_documented_mistakes_give_the_documented_messages(tiling_fn, ctx, expected):
    """The three wrong versions of the example's tiling, on inputs worked out by hand, and docs/testing.md."""
    with pytest.raises(TilingInvariantError) as err:
        assert_tiling(tiling_fn, ctx, EXAMPLE.my_plan)
    assert str(err.value).splitlines() == expected
    assert shown_in_docs(expected)
    # 1999 = 48 x 32 + 463: 48 blocks of 32 halves; 16 KiB float32 tiles x 2 buffers x 3 tensors = 96 KiB;
    # 2 MiB of float16 in 256-byte blocks = 8192 blocks
    assert_tiling(EXAMPLE.my_tiling, ctx, EXAMPLE.my_plan)          # the right version passes on the same input


def test_the_example_split_is_not_monotonic():
    """Hand-computed: on 40 cores, 2737 float32 (343 blocks of 8) -> 9 blocks per core -> ceil(2737/72) = 39
    launched; 4161 (521 blocks) -> 14 per core -> ceil(4161/112) = 38."""
    contexts = [vector_ctx(n, "float32", "Ascend910B3") for n in (2737, 4161)]
    assert [EXAMPLE.my_tiling(c).block_dim for c in contexts] == [39, 38]
    (v,) = check_monotonic(EXAMPLE.my_tiling, contexts)
    text = ("[monotonicity] 2737 elements launch 39 blocks but 4161 launch only 38 (fewer blocks for more work, "
            "with 40 cores available)")
    assert str(v) == text and shown_in_docs([text])
    assert check_monotonic(elementwise_tiling, contexts) == []        # the tail-core split is
    # ops-math's add_example too (as docs/testing.md says): 73 -> ceil(73/48) = 2 per core -> 37 blocks;
    # 97 -> 3 per core -> 33 blocks
    b1 = get_platform("Ascend910B1")
    examples = [TilingContext((TensorDesc((n, 1, 1, 1), "float32"),) * 2, (TensorDesc((n, 1, 1, 1), "float32"),), b1)
                for n in (73, 97)]
    assert [add_example_tiling(c).block_dim for c in examples] == [37, 33]
    assert [v.invariant for v in check_monotonic(add_example_tiling, examples)] == ["monotonicity"]
