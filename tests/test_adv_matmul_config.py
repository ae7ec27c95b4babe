"""The Matmul API's compile-time half: MatmulConfig factories, get_mm_config, get_matmul_api_tiling (and a
kernel taking its tiling from it), and pyasc's default kernel type for kernels using the API."""
import numpy as np
import pytest

from npuemu import asc
from npuemu.frontend.adv_matmul_kernel_type import uses_matmul_api
from npuemu.language.enums import (
    BatchMode,
    IterateOrder,
    MatmulConfigMode,
    ScheduleType,
)

adv = asc.adv


def test_config_factories_set_the_fields_of_their_mode():
    norm = adv.get_normal_config(iterate_order=IterateOrder.ORDER_N, en_unit_flag=False)
    assert norm.do_norm and not norm.do_multi_data_load and norm.iterate_order == IterateOrder.ORDER_N
    assert not norm.en_unit_flag
    mdl = adv.get_mdl_config(do_mte2_preload=2)
    assert not mdl.do_norm and mdl.do_multi_data_load and mdl.do_mte2_preload == 2
    basic = adv.get_basic_config(128, 256, 64)
    assert basic.do_basic_block and (basic.basic_m, basic.basic_n, basic.basic_k) == (128, 256, 64)
    sb = adv.get_special_basic_config(64, 64, 32, 128, 128, 256, 2, 2)
    assert sb.do_special_basic_block and sb.single_core_k == 256 and sb.step_n == 2
    assert adv.get_special_mdl_config().do_special_mdl
    ib = adv.get_ib_share_norm_config(is_double_cache=True)
    assert ib.do_ib_share_norm and ib.enable_double_cache == 1
    mm = adv.get_mm_config(MatmulConfigMode.CONFIG_MDL, adv.MatmulShapeParams(64, 64, 128, 32, 32, 64),
                           adv.MatmulBatchParams(is_b_batch=True, batch_mode=BatchMode.BATCH_LARGE_THAN_L1),
                           adv.MatmulFuncParams(schedule_type=ScheduleType.OUTER_PRODUCT))
    assert mm.do_multi_data_load and mm.basic_k == 64 and mm.single_core_k == 128 and mm.is_n_batch
    assert mm.batch_mode == BatchMode.BATCH_LARGE_THAN_L1 and mm.schedule_type == ScheduleType.OUTER_PRODUCT
    assert adv.get_mm_config().do_norm
    with pytest.raises(TypeError):
        adv.get_mm_config(MatmulConfigMode.CONFIG_NORM, 3.5)


def test_static_tiling_from_a_basic_configuration():
    a = adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
    c = adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)
    cfg = adv.get_special_basic_config(32, 32, 32, 64, 32, 96, 1, 1)
    for t in (adv.get_matmul_api_tiling(cfg, 512 * 1024, a, a, c), adv.get_matmul_api_tiling(cfg, a, a, c, None)):
        assert (t.single_core_m, t.single_core_n, t.single_core_k) == (64, 32, 96)
        assert (t.base_m, t.base_n, t.base_k, t.is_bias) == (32, 32, 32, 0)
    with pytest.raises(ValueError, match="basic_m"):
        adv.get_matmul_api_tiling(adv.get_normal_config(), 0, a, a, c)


A16 = adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float16)
C32 = adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, asc.float32)
CFG = adv.get_special_basic_config(32, 32, 32, 64, 32, 96, 1, 1)


@asc.jit(matmul_cube_only=True)
def static_tiled(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress):
    ag = asc.GlobalTensor()
    ag.set_global_buffer(a)
    bg = asc.GlobalTensor()
    bg.set_global_buffer(b)
    cg = asc.GlobalTensor()
    cg.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(A16, A16, C32, None, CFG)
    asc.adv.register_matmul(pipe, mm, asc.adv.get_matmul_api_tiling(CFG, 512 * 1024, A16, A16, C32))
    mm.set_tensor_a(ag)
    mm.set_tensor_b(bg)
    mm.iterate_all(cg)
    mm.end()


def test_kernel_with_a_compile_time_tiling():
    rng = np.random.default_rng(9)
    a = rng.integers(-4, 5, (64, 96)).astype(np.float16)
    b = rng.integers(-4, 5, (96, 32)).astype(np.float16)
    c = np.zeros((64, 32), np.float32)
    static_tiled[1](a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.float32) @ b.astype(np.float32))
    assert static_tiled.binaries()[0].kernel_type == asc.KernelType.AIC_ONLY     # matmul_cube_only wins


@asc.jit
def _helper_registers(pipe: asc.TPipe, mm: object, t: asc.adv.TCubeTiling):
    asc.adv.register_matmul(pipe, mm, t)


@asc.jit
def _via_helper(t: asc.adv.TCubeTiling):
    _helper_registers(asc.TPipe(), None, t)


@asc.jit
def _no_matmul(x: asc.GlobalAddress):
    asc.get_block_idx()


def test_kernels_using_the_api_default_to_mix_aic_1_2():
    assert uses_matmul_api(static_tiled.fn) and uses_matmul_api(_via_helper.fn)
    assert not uses_matmul_api(_no_matmul.fn)
