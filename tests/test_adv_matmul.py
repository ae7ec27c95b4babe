"""asc.adv.Matmul on cube-only and MIX kernels: iterate_all with bias and tails, the iterate loop with transposed
inputs, input types and quantisation, batches and rounds of batches through the workspace, scalar inputs, and
the object's own checks (docs/matmul-api.md).  References: NumPy in float32 (half inputs with
small integers: the products and sums are exact, so results compare exactly).  A kernel's launches are at one
check level, mostly full, so each kernel specialisation compiles once (another level is another compilation);
tests/test_adv_matmul_examples.py and test_adv_matmul_config.py run the API at the default level."""
import numpy as np
import pytest

import npuemu
from npuemu import asc


def tiling(m, n, k, bm=32, bn=32, bk=32):
    """A valid single-core TCubeTiling for m x n x k (one core, base blocks bm x bn x bk)."""
    return asc.adv.TCubeTiling(used_core_num=1, m=m, n=n, k_a=k, k_b=k, single_core_m=m, single_core_n=n,
                               single_core_k=k, base_m=bm, base_n=bn, base_k=bk, depth_a1=1, depth_b1=1,
                               step_m=1, step_n=1, step_k_a=1, step_k_b=1)


@asc.jit(matmul_cube_only=True)
def mm_all(a: asc.GlobalAddress, b: asc.GlobalAddress, bias: asc.GlobalAddress, c: asc.GlobalAddress,
           t: asc.adv.TCubeTiling, use_bias: int, skip_b: int, c_len: int, end_first: int = 0, atomic: int = 0):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    biasg = asc.GlobalTensor()
    biasg.set_global_buffer(bias)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c, c_len)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype),
                        bias=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, biasg.dtype))
    asc.adv.register_matmul(pipe, mm, t)
    mm.set_tensor_a(ag)
    if skip_b == 0:
        mm.set_tensor_b(bg)
    if use_bias:
        mm.set_bias(biasg)
    if end_first:
        mm.end()
    mm.iterate_all(cg, en_atomic=atomic)
    mm.end()


def _data(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (m, k)).astype(np.float16)
    b = rng.integers(-4, 5, (k, n)).astype(np.float16)
    bias = rng.integers(-8, 9, n).astype(np.float32)
    return a, b, bias


def test_iterate_all_with_and_without_bias_and_tails():
    # tails in every dimension (48 = 32 + 16, 40 = 32 + 8, 70 = 2 * 32 + 6), then a K that is one base block
    for (m, n, k), use_bias in (((48, 40, 70), 1), ((48, 40, 70), 0), ((16, 64, 32), 1)):
        a, b, bias = _data(m, n, k)
        c = np.full((m, n), np.nan, np.float32)
        mm_all[1](a, b, bias, c, tiling(m, n, k), use_bias, 0, m * n, check="full")
        ref = a.astype(np.float32) @ b.astype(np.float32) + (bias if use_bias else 0)
        np.testing.assert_array_equal(c, ref)
    # en_atomic=1 adds C to what GM holds, 2 keeps the maximum
    c0 = np.arange(m * n, dtype=np.float32).reshape(m, n) - 100
    for atomic, combine in ((1, np.add), (2, np.maximum)):
        c = c0.copy()
        mm_all[1](a, b, bias, c, tiling(m, n, k), 1, 0, m * n, 0, atomic, check="full")
        np.testing.assert_array_equal(c, combine(c0, ref))


def test_tiling_and_state_checks_name_the_call():
    m, n, k = 32, 32, 32
    a, b, bias = _data(m, n, k)
    c = np.zeros((m, n), np.float32)
    with pytest.raises(npuemu.AlignmentError, match="base_m = 24 is not a multiple of 16") as e:
        mm_all[1](a, b, bias, c, tiling(m, n, k, bm=24), 0, 0, m * n, check="full")
    assert "register_matmul" in str(e.value)
    with pytest.raises(npuemu.AlignmentError, match="base_k = 8 is not a multiple of C0 = 16"):
        mm_all[1](a, b, bias, c, tiling(m, n, k, bk=8), 0, 0, m * n, check="full")
    with pytest.raises(npuemu.CapacityError, match="does not fit L0C"):
        mm_all[1](a, b, bias, c, tiling(m, n, k, bm=256, bn=256), 0, 0, m * n, check="full")
    with pytest.raises(npuemu.CapacityError, match="does not fit L0A"):
        mm_all[1](a, b, bias, c, tiling(m, n, k, bm=512, bn=16, bk=128), 0, 0, m * n, check="full")
    with pytest.raises(npuemu.NullPointerError, match="without B: call set_tensor_b") as e:
        mm_all[1](a, b, bias, c, tiling(m, n, k), 0, 1, m * n, check="full")
    assert "iterate_all" in str(e.value)
    with pytest.raises(npuemu.NullPointerError, match="Matmul used before init"):
        mm_all[1](a, b, bias, c, tiling(m, n, k), 0, 0, m * n, 1, check="full")
    with pytest.raises(npuemu.BoundsError, match="writing C needs 1024 elements of the tensor, it has 1000"):
        mm_all[1](a, b, bias, c, tiling(m, n, k), 0, 0, 1000, check="full")


@asc.jit(matmul_cube_only=True)
def mm_iter(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: asc.adv.TCubeTiling,
            offs: asc.GlobalAddress, ta: asc.ConstExpr[bool], tb: asc.ConstExpr[bool]):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c, t.m * t.n)
    og = asc.GlobalTensor()
    og.set_global_buffer(offs)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype, ta),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype, tb),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, mm, t)
    mm.set_tensor_a(ag, ta)
    mm.set_tensor_b(bg, tb)
    with mm.iterate() as count:
        mm.get_tensor_c(cg)
        off = mm.get_offset_c()
        og.set_value(count, off.offset)
    asc.data_cache_clean_and_invalid(asc.CacheLine.ENTIRE_DATA_CACHE, og)
    mm.end()


def test_iterate_loop_transposed_inputs_half_output_and_tile_order():
    m, n, k = 48, 64, 48
    a, b, _ = _data(m, n, k, seed=1)
    for ta, tb in ((True, True),):
        c = np.zeros((m, n), np.float16)
        offs = np.full(8, -1, np.int32)
        mm_iter[1](np.ascontiguousarray(a.T) if ta else a, np.ascontiguousarray(b.T) if tb else b, c,
                   tiling(m, n, k), offs, ta, tb, check="full")
        np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
        # ORDER_M: tiles walk M first (2 tile rows of 32 and 16, 2 tile columns of 32)
        np.testing.assert_array_equal(offs[:4], [0, 32 * n, 32, 32 * n + 32])


def test_what_is_refused_at_compile_time():
    kinds = {"aiv": asc.KernelType.AIV_ONLY}

    @asc.jit(kernel_type=kinds["aiv"])
    def vector_only(a: asc.GlobalAddress):
        asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                       b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                       c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32))

    with pytest.raises(npuemu.UnsupportedSyntaxError, match="needs the cube"):
        vector_only[1](np.zeros(4, np.float32))

    @asc.jit(matmul_cube_only=True)
    def no_init(a: asc.GlobalAddress):
        ag = asc.GlobalTensor()
        ag.set_global_buffer(a)
        mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16),
                            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16))
        mm.set_sparse_index(ag)

    with pytest.raises(npuemu.UnsupportedSyntaxError, match="set_sparse_index is not emulated"):
        no_init[1](np.zeros(4, np.float16))

    @asc.jit(matmul_cube_only=True)
    def quant_vector(a: asc.GlobalAddress, q: asc.GlobalAddress, how: asc.ConstExpr[int]):
        ag = asc.GlobalTensor()
        ag.set_global_buffer(a)
        qg = asc.GlobalTensor()
        qg.set_global_buffer(q)
        c = asc.int32 if how == 0 else asc.float16
        mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8),
                            b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8, True),
                            c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, c))
        if how == 2:    # the round into a LocalTensor: a cube-only kernel has no UB
            mm.get_batch_tensor_c(asc.LocalTensor(asc.float16, asc.TPosition.A1, 0, 256), 1, 1)
        else:
            mm.set_quant_vector(qg)

    q = np.zeros(4, np.uint64)
    with pytest.raises(npuemu.KernelTypeError, match="dequantisation applies to int8 x int8 -> float16 C") as e:
        quant_vector[1](np.zeros(4, np.int8), q, 0)
    assert "mm.set_quant_vector(qg)" in str(e.value)
    with pytest.raises(npuemu.KernelTypeError, match="the tensor is int32, the MatmulType says uint64"):
        quant_vector[1](np.zeros(4, np.int8), np.zeros(4, np.int32), 1)
    with pytest.raises(npuemu.UnsupportedSyntaxError, match="a cube-only kernel uses the form returning"):
        quant_vector[1](np.zeros(4, np.int8), q, 2)


def test_dtype_combination_refused_at_compile_time():
    @asc.jit(matmul_cube_only=True)
    def bad(a: asc.GlobalAddress):
        asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32),
                       b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32),
                       c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16))

    with pytest.raises(npuemu.KernelTypeError, match="float16 is not an output of float32 inputs"):
        bad[1](np.zeros(4, np.float32))


@asc.jit(matmul_cube_only=True)
def mm_types(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: asc.adv.TCubeTiling,
             ta: asc.ConstExpr[bool], tb: asc.ConstExpr[bool], deq: int, hf32: int, fa: asc.ConstExpr,
             fb: asc.ConstExpr, qv: asc.GlobalAddress, use_qv: int):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, fa, ag.dtype, ta),
                        b=asc.adv.MatmulType(asc.TPosition.GM, fb, bg.dtype, tb),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, mm, t)
    mm.set_tensor_a(ag, ta)
    mm.set_tensor_b(bg, tb)
    mm.set_quant_scalar(deq)
    if ag.dtype == asc.int8 and cg.dtype == asc.float16:
        qg = asc.GlobalTensor()
        qg.set_global_buffer(qv)
        if use_qv != 0:
            mm.set_quant_vector(qg)
    mm.set_hf32(hf32 != 0, 0)
    while mm.iterate():
        mm.get_tensor_c(cg)
    mm.end()


ND, NZ = asc.CubeFormat.ND, asc.CubeFormat.NZ
NOQV = np.zeros(4, np.uint64)     # mm_types' quant vector when it is not used
NOWS = np.zeros(16, np.float16)   # mm_mix's iterate_n_batch workspace when it is not used


def nz(x: np.ndarray, c0: int) -> np.ndarray:
    """An ND matrix in NZ layout (column blocks of c0 elements, rows padded to 16), as stored in GM."""
    r, c = x.shape
    p = np.zeros((-(-r // 16) * 16, -(-c // c0) * c0), x.dtype)
    p[:r, :c] = x
    return np.ascontiguousarray(p.reshape(p.shape[0], -1, c0).transpose(1, 0, 2))


def test_float32_bfloat16_int8_inputs():
    from cube_helpers import bf16_bits
    m, n, k = 40, 48, 72
    rng = np.random.default_rng(2)
    a = rng.integers(-8, 8, (m, k))
    b = rng.integers(-8, 8, (k, n))
    ref = (a @ b).astype(np.float32)
    # float32 (base_k a multiple of 8), B as is: float32 C, exact for small integers
    c = np.zeros((m, n), np.float32)
    mm_types[1](a.astype(np.float32), b.astype(np.float32), c, tiling(m, n, k, bk=16), False, False, 0, 0, ND, ND,
                NOQV, 0, check="full")
    np.testing.assert_array_equal(c, ref)
    # float32 in HF32 mode: inputs rounded to 11 mantissa bits (to nearest even) before the products
    from cube_helpers import hf32_ref
    af, bf = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    mm_types[1](af, bf, c, tiling(m, n, k, bk=16), False, False, 0, 1, ND, ND, NOQV, 0, check="full")
    want = hf32_ref(af, False).astype(np.float64) @ hf32_ref(bf, False).astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=0, atol=1e-5 * np.sqrt(k) * np.abs(want).max())
    assert np.abs(c - af.astype(np.float64) @ bf.astype(np.float64)).max() > 1e-4   # the rounding shows
    # bfloat16, both transposed: float32 C
    c = np.zeros((m, n), np.float32)
    mm_types[1](npuemu.gm_buffer(bf16_bits(a.T.astype(np.float32)), asc.bfloat16),
                npuemu.gm_buffer(bf16_bits(b.T.astype(np.float32)), asc.bfloat16), c, tiling(m, n, k), True, True, 0, 0,
                ND, ND, NOQV, 0)
    np.testing.assert_array_equal(c, ref)
    # int8 with B given as [N, K]: int32 C, exact (base_k a multiple of 32)
    c = np.zeros((m, n), np.int32)
    mm_types[1](a.astype(np.int8), np.ascontiguousarray(b.T).astype(np.int8), c, tiling(m, n, k, bk=64), False,
                True, 0, 0, ND, ND, NOQV, 0, check="full")
    np.testing.assert_array_equal(c, a @ b)
    # int8 -> float16 C through the quantisation scale of set_quant_scalar (0.5: exact)
    h = np.zeros((m, n), np.float16)
    mm_types[1](a.astype(np.int8), np.ascontiguousarray(b.T).astype(np.int8), h, tiling(m, n, k, bk=64), False,
                True, int(np.float32(0.5).view(np.uint32)), 0, ND, ND, NOQV, 0, check="full")
    np.testing.assert_array_equal(h, ((a @ b) * 0.5).astype(np.float16))
    # set_quant_vector: one quantisation word per column of C (tiles of 32 and 16 columns); the fixpipe keeps
    # 10 mantissa bits of each scale (the low 13 bits cleared) and rounds the product to float16
    scales = rng.uniform(0.01, 0.3, n).astype(np.float32)
    words = scales.view(np.uint32).astype(np.uint64)
    mm_types[1](a.astype(np.int8), np.ascontiguousarray(b.T).astype(np.int8), h, tiling(m, n, k, bk=64), False,
                True, int(np.float32(0.5).view(np.uint32)), 0, ND, ND, words, 1, check="full")
    kept = (scales.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    np.testing.assert_array_equal(h, ((a @ b).astype(np.float32) * kept).astype(np.float16))
    assert not np.array_equal(h, ((a @ b).astype(np.float32) * scales).astype(np.float16))
    # a quant vector shorter than N: the copy of the second tile's words is out of bounds
    with pytest.raises(npuemu.BoundsError) as e:
        mm_types[1](a.astype(np.int8), np.ascontiguousarray(b.T).astype(np.int8), h, tiling(m, n, k, bk=64),
                    False, True, 0, 0, ND, ND, words[:36], 1, check="full")
    assert "get_tensor_c" in str(e.value)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def mm_mix(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, t: asc.adv.TCubeTiling,
           ws: asc.GlobalAddress, nws: asc.GlobalAddress, skip_b: int, batch: int = 0, rounds: int = 0,
           broken: int = 0):
    rows = asc.get_block_idx() * t.single_core_m * max(batch, 1) * max(rounds, 1)   # each vector core: its rows
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a + rows * t.k_a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c + rows * t.n)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, ag.dtype),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, ws, mm, t)
    mm.set_tensor_a(ag)
    if skip_b == 0:
        mm.set_tensor_b(bg)
    if rounds > 0:  # `rounds` rounds of `batch` matrices of A against one B each, through this core's workspace
        per = batch * t.single_core_m * t.n
        wg = asc.GlobalTensor()
        wg.set_global_buffer(nws + asc.get_block_idx() * rounds * per, rounds * per)
        if broken != 1:
            mm.set_workspace(wg)
        mm.iterate_n_batch(rounds, batch, 1, False)
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf, per * 2)
        ub = buf.get(asc.float16)
        for r in range(rounds):
            if r % 2 == 0:      # into UB, or as the GlobalTensor in the workspace
                mm.get_batch_tensor_c(ub, batch, 1)
            else:
                g = mm.get_batch_tensor_c(batch, 1)
                asc.pipe_barrier(asc.PipeID.PIPE_ALL)
                asc.data_copy(ub, g, per)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(cg[r * per:], ub, per)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
        if broken == 2:
            mm.get_batch_tensor_c(batch, 1)
    elif rounds < 0:  # get_tensor_c(): the tile in the workspace (each core's block is one tile)
        tile = t.base_m * t.base_n
        tg = asc.GlobalTensor()
        tg.set_global_buffer(nws + asc.get_block_idx() * tile, tile)
        if broken != 1:
            mm.set_workspace(tg)
        tbuf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(tbuf, tile * 2)
        tub = tbuf.get(asc.float16)
        while mm.iterate():
            tc = mm.get_tensor_c()
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(tub, tc, tile)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(cg, tub, tile)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    elif batch > 0:   # `batch` matrices of the block's shape back to back in A and C, one B for all
        mm.iterate_batch(cg, batch, 1, False)
    else:
        mm.iterate_all(cg)


def test_mix_iterate_all_and_its_checks():
    """Two AI Cores (four vector cores, each a 16-row block); the objects end when their cores finish."""
    m, n, k = 64, 32, 48
    a, b, _ = _data(m, n, k, seed=4)
    t = asc.adv.TCubeTiling(used_core_num=4, m=m, n=n, k_a=k, k_b=k, single_core_m=16, single_core_n=n,
                            single_core_k=k, base_m=16, base_n=32, base_k=16, depth_a1=1, depth_b1=1)
    ws = np.zeros(4 * (512 + 128 * 1024), np.uint8)
    c = np.zeros((m, n), np.float16)
    mm_mix[2](a, b, c, t, ws, NOWS, 0, check="full")
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
    # iterate_batch: each vector core computes two 8 x 32 matrices (its 16 rows) against one B
    t2 = asc.adv.TCubeTiling(used_core_num=4, m=m, n=n, k_a=k, k_b=k, single_core_m=8, single_core_n=n,
                             single_core_k=k, base_m=16, base_n=32, base_k=16, depth_a1=1, depth_b1=1)
    c = np.zeros((m, n), np.float16)
    mm_mix[2](a, b, c, t2, ws, NOWS, 0, 2, check="full")
    np.testing.assert_array_equal(c, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16))
    # get_tensor_c() returns the tile in the workspace of set_workspace; the vector cores copy it to C
    nws = np.zeros(4 * 16 * n, np.float16)
    c = np.zeros((m, n), np.float16)
    mm_mix[2](a, b, c, t, ws, nws, 0, 0, -1, check="full")
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(c, want)
    np.testing.assert_array_equal(nws.reshape(m, n), want)
    with pytest.raises(npuemu.NullPointerError, match=r"get_tensor_c\(\) without a workspace") as e:
        mm_mix[2](a, b, c, t, ws, nws, 0, 0, -1, 1, check="full")
    assert "tc = mm.get_tensor_c()" in str(e.value)
    # iterate_n_batch: two rounds of two 4 x 32 matrices per vector core, round r against B[r]; the rounds
    # fetched into UB (round 0) and as the workspace's GlobalTensor (round 1), then copied to C
    t3 = asc.adv.TCubeTiling(used_core_num=4, m=m, n=n, k_a=k, k_b=k, single_core_m=4, single_core_n=n,
                             single_core_k=k, base_m=16, base_n=32, base_k=16, depth_a1=1, depth_b1=1)
    b2 = np.stack([b, -b])
    nws = np.zeros(4 * 2 * 2 * 4 * n, np.float16)
    c = np.zeros((m, n), np.float16)
    mm_mix[2](a, b2, c, t3, ws, nws, 0, 2, 2, check="full")
    want = np.concatenate([a[q * 8:(q + 1) * 8].astype(np.float32) @ b2[q % 2].astype(np.float32)
                           for q in range(m // 8)]).astype(np.float16)
    np.testing.assert_array_equal(c, want)
    np.testing.assert_array_equal(nws.reshape(m, n), want)      # the workspace holds every round
    with pytest.raises(npuemu.NullPointerError, match="iterate_n_batch without a workspace") as e:
        mm_mix[2](a, b2, c, t3, ws, nws, 0, 2, 2, 1, check="full")
    assert "mm.iterate_n_batch(" in str(e.value)
    with pytest.raises(npuemu.NullPointerError, match="computed 2 round.s. and 2 were fetched") as e:
        mm_mix[2](a, b2, c, t3, ws, nws, 0, 2, 2, 2, check="full")
    assert "mm.get_batch_tensor_c(batch, 1)" in str(e.value)
    with pytest.raises(npuemu.NullPointerError, match="without B") as e:
        mm_mix[2](a, b, c, t, ws, NOWS, 1, check="full")
    assert "AIV" in str(e.value) and "iterate_all" in str(e.value)
    with pytest.raises(npuemu.BoundsError, match="the workspace needs 526336 bytes"):
        mm_mix[2](a, b, c, t, ws[:1000], NOWS, 0, check="full")


def test_nz_inputs():
    m, n, k = 40, 48, 56
    a, b, _ = _data(m, n, k, seed=6)
    c = np.zeros((m, n), np.float32)
    mm_types[1](nz(a, 16), nz(b, 16), c, tiling(m, n, k), False, False, 0, 0, NZ, NZ, NOQV, 0, check="full")
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))


@asc.jit(matmul_cube_only=True)
def mm_scalar_a(b: asc.GlobalAddress, c: asc.GlobalAddress, t: asc.adv.TCubeTiling, value: float,
                ta: asc.ConstExpr[bool] = False, tb: asc.ConstExpr[bool] = False):
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype, ta),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, bg.dtype, tb),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, cg.dtype))
    asc.adv.register_matmul(pipe, mm, t)
    mm.set_tensor_a(value)
    mm.set_tensor_b(bg, tb)
    mm.iterate_all(cg)


def test_scalar_a():
    m, n, k = 24, 32, 40
    _, b, _ = _data(m, n, k, seed=8)
    c = np.zeros((m, n), np.float32)
    mm_scalar_a[1](b, c, tiling(m, n, k), 1.5, check="full")
    np.testing.assert_array_equal(c, np.full((m, k), 1.5, np.float32) @ b.astype(np.float32))
    # A declared transposed (the scalar form fills L1 for either layout), B given as [N, K]
    mm_scalar_a[1](np.ascontiguousarray(b.T), c, tiling(m, n, k), -2.0, True, True)
    np.testing.assert_array_equal(c, np.full((m, k), -2, np.float32) @ b.astype(np.float32))
    # int8 (B given as [N, K]): int32 C; -3 is the byte 0xFD in every element of A
    b8 = np.random.default_rng(9).integers(-8, 8, (64, n))
    c = np.zeros((m, n), np.int32)
    mm_scalar_a[1](np.ascontiguousarray(b8.T).astype(np.int8), c, tiling(m, n, 64, bk=64), -3.0, False, True,
                   check="full")
    np.testing.assert_array_equal(c, np.full((m, 64), -3) @ b8)


@asc.jit(kernel_type=asc.KernelType.MIX_AIC_1_2)
def mm_mix_quant(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress, q: asc.GlobalAddress,
                 t: asc.adv.TCubeTiling, ws: asc.GlobalAddress):
    rows = asc.get_block_idx() * t.single_core_m
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a + rows * t.k_a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c + rows * t.n)
    qg = asc.GlobalTensor()
    qg.set_global_buffer(q)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(a=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8),
                        b=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.int8, True),
                        c=asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16))
    asc.adv.register_matmul(pipe, ws, mm, t)
    mm.set_tensor_a(ag)
    mm.set_tensor_b(bg, True)
    mm.set_quant_vector(qg)
    mm.iterate_all(cg)


def test_mix_quant_vector():
    """The per-channel words reach the cube through the vector cores' requests (two tiles of columns)."""
    m, n, k = 64, 48, 64
    rng = np.random.default_rng(0)
    a = rng.integers(-8, 8, (m, k))
    b = rng.integers(-8, 8, (k, n))
    scales = rng.uniform(0.01, 0.3, n).astype(np.float32)
    t = asc.adv.TCubeTiling(used_core_num=4, m=m, n=n, k_a=k, k_b=k, single_core_m=16, single_core_n=n,
                            single_core_k=k, base_m=16, base_n=32, base_k=64, depth_a1=1, depth_b1=1)
    ws = np.zeros(4 * (512 + 128 * 1024), np.uint8)
    c = np.zeros((m, n), np.float16)
    words = scales.view(np.uint32).astype(np.uint64)
    mm_mix_quant[2](a.astype(np.int8), np.ascontiguousarray(b.T).astype(np.int8), c, words, t, ws, check="full")
    kept = (scales.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    np.testing.assert_array_equal(c, ((a @ b).astype(np.float32) * kept).astype(np.float16))
