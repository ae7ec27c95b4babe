"""Host tiling of asc.adv's softmax and rmsnorm (npuemu.host.adv_tiling) against hand-computed values.

Each expected value is worked out from CANN's formulas (docs/adv-api.md) in the comment beside it.
"""
from __future__ import annotations

import numpy as np
import pytest

import npuemu.asc as asc
from npuemu.errors import TilingError
from npuemu.host import adv_tiling as at


def test_softmax_tmp_sizes():
    # [16, 64] float32: one row is 8 (block) + 64 + 64 = 136 floats = 544 bytes
    assert at.get_softmax_min_tmp_size([16, 64], 4) == 544
    assert at.get_softmax_max_tmp_size([16, 64], 4) == 16 * 544
    # [2, 10, 32] float16 flattens to [20, 32]: 16 + 32 + 64 = 112 floats
    assert at.get_softmax_min_tmp_size([2, 10, 32], 2) == 448
    assert at.get_softmax_max_tmp_size([2, 10, 32], 2) == 20 * 448


def test_softmax_tiling_splits_rows_by_the_scratch():
    t = at.softmax_tiling_func([16, 64], 4, 4 * 544)           # 4 rows fit; 4 <= 8 so no rounding
    assert (t.src_m, t.src_k, t.src_size, t.out_max_k, t.out_max_size) == (16, 64, 1024, 8, 128)
    assert (t.split_m, t.split_size, t.reduce_k, t.reduce_size, t.range_m, t.tail_m) == (4, 256, 8, 32, 4, 0)
    t = at.softmax_tiling_func([2, 10, 32], 2, 10 * 448)       # 10 rows fit, rounded down to 8; 20 = 2 * 8 + 4
    assert (t.split_m, t.reduce_k, t.range_m, t.tail_m, t.tail_split_size, t.tail_reduce_size) == (8, 16, 2, 4,
                                                                                                    128, 64)
    assert isinstance(t, asc.adv.SoftmaxTiling)


def test_softmax_tiling_basic_block_shapes():
    # [64, 128] float32: 200 floats a row; 40 rows fit -> 40 -> a divisor of 64 that is a multiple of 8: 32
    assert at.softmax_tiling_func([64, 128], 4, 40 * 800).split_m == 32
    # [256, 128], everything fits: 256 -> halved while split_m * k >= 16384: 128 -> 64
    t = at.softmax_tiling_func([256, 128], 4, 256 * 800)
    assert (t.split_m, t.range_m, t.tail_m) == (64, 4, 0)


def test_softmax_tiling_refuses_bad_arguments():
    with pytest.raises(TilingError, match="32-byte aligned"):
        at.softmax_tiling_func([4, 12], 2, 4096)
    with pytest.raises(TilingError, match="dtype_size"):
        at.get_softmax_min_tmp_size([4, 16], 8)


def test_rmsnorm_tmp_sizes():
    # [2, 8, 64]: float32 max (1024 + round_up(16, 8)) * 4, min (64 + 8) * 4
    assert at.get_rms_norm_max_min_tmp_size([2, 8, 64], 4) == (4160, 288)
    # float16: max (2048 + round_up(16, 16)) * 4, min (128 + 8) * 4
    assert at.get_rms_norm_max_min_tmp_size([2, 8, 64], 2) == (8256, 544)
    with pytest.raises(TilingError, match="basic block"):
        at.get_rms_norm_max_min_tmp_size([1, 3, 64], 4, is_basic_block=True)


def test_rmsnorm_tiling_info():
    # 4096 bytes = 1024 floats: 15 rows need 15 * 64 + 16 = 976, 16 rows 1040 -> 15 rows a round
    t = at.get_rms_norm_tiling_info([2, 8, 64], [2, 8, 60], 4096, 4)
    assert (t.b_length, t.s_length, t.h_length, t.original_h_length) == (2, 8, 64, 60)
    assert t.reciprocal_of_h_length == np.float32(1 / 60)
    assert (t.main_bsh_length, t.main_bs_length, t.main_bs_length_align, t.loop_round) == (960, 15, 16, 1)
    assert (t.input_tail_pos, t.tail_bsh_length, t.tail_bs_length) == (960, 64, 1)
    # float16 doubles the per-row need: 1024 >= bs * 128 + round_up(bs, 8) up to bs = 7
    t = at.get_rms_norm_tiling_info([1, 16, 64], [1, 16, 64], 4096, 2)
    assert (t.main_bs_length, t.loop_round, t.tail_bs_length) == (7, 2, 2)


def test_rmsnorm_tiling_refuses_bad_arguments():
    with pytest.raises(TilingError, match="minimum"):
        at.get_rms_norm_tiling_info([2, 8, 64], [2, 8, 64], 200, 4)
    with pytest.raises(TilingError, match="32-byte aligned"):
        at.get_rms_norm_tiling_info([2, 8, 12], [2, 8, 12], 4096, 4)
    with pytest.raises(TilingError, match="does not match"):
        at.get_rms_norm_tiling_info([2, 8, 64], [2, 8, 80], 4096, 4)


def test_math_tmp_sizes():
    # acos: factor 6 (float16) / 2 (float32); 1024 elements
    assert at.get_math_max_min_tmp_size("acos", [1024], 2) == (6 * 2048, 6 * 256)
    assert at.get_math_max_min_tmp_size("acos", [1024], 4) == (2 * 4096, 2 * 256)
    # cos with is_reuse_source on float32: factor 2 instead of 3; a small shape stays at one repeat
    assert at.get_math_max_min_tmp_size("cos", [16], 4, is_reuse_source=True) == (512, 512)
    # acosh: max(P * n, 256) * type_size;  sin: P * n * type_size;  exp: float32 scratch
    assert at.get_math_max_min_tmp_size("acosh", [1000], 2) == (2 * 1000 * 2, 512)
    assert at.get_math_max_min_tmp_size("sin", [1000], 2) == (8 * 1000 * 2, 2048)
    assert at.get_math_max_min_tmp_size("exp", [1000], 2) == (4 * 4000, 1024)
    assert at.get_math_max_min_tmp_size("log", [1000], 4) == (0, 0)
    assert at.get_math_max_min_tmp_size("power", [1000], 4) == (4 * 4000 + 256, 1280)
    assert at.get_math_max_min_tmp_size("xor", [1000], 2) == (2000, 256)
    with pytest.raises(TilingError, match="not an asc.adv math routine"):
        at.get_math_max_min_tmp_size("softplus", [8], 4)
