"""Tiling structs of pyasc's high-level API (``asc.language.adv.tiling``).

Each is the C layout of the CANN struct of the same name: the host tiling
library (``asc.lib.host``) fills one in and the kernel receives it as tiling
data.  Every field is an int32 (``reciprocal_of_h_length`` a float32), listed
in CANN's order, and zero unless set: the host library sets what it computes.
"""
from __future__ import annotations

from .dtype import KnownTypes as KT
from .struct import Field, Struct

__all__ = ["TCubeTiling", "MatmulApiStaticTiling", "SoftmaxTiling", "RmsNormTiling"]


class TCubeTiling(Struct):
    """The matmul tiling (CANN ``TCubeTiling``): shapes, per-core and base blocks, L1 depths, steps."""

    used_core_num = Field(dtype=KT.int32, default=0)
    m = Field(dtype=KT.int32, default=0)
    n = Field(dtype=KT.int32, default=0)
    k_a = Field(dtype=KT.int32, default=0)
    k_b = Field(dtype=KT.int32, default=0)
    single_core_m = Field(dtype=KT.int32, default=0)
    single_core_n = Field(dtype=KT.int32, default=0)
    single_core_k = Field(dtype=KT.int32, default=0)
    base_m = Field(dtype=KT.int32, default=0)
    base_n = Field(dtype=KT.int32, default=0)
    base_k = Field(dtype=KT.int32, default=0)
    depth_a1 = Field(dtype=KT.int32, default=0)
    depth_b1 = Field(dtype=KT.int32, default=0)
    step_m = Field(dtype=KT.int32, default=0)
    step_n = Field(dtype=KT.int32, default=0)
    is_bias = Field(dtype=KT.int32, default=0)
    trans_length = Field(dtype=KT.int32, default=0)
    iterate_order = Field(dtype=KT.int32, default=0)
    share_mode = Field(dtype=KT.int32, default=0)
    share_l1_size = Field(dtype=KT.int32, default=0)
    share_l0c_size = Field(dtype=KT.int32, default=0)
    share_ub_size = Field(dtype=KT.int32, default=0)
    batch_m = Field(dtype=KT.int32, default=0)
    batch_n = Field(dtype=KT.int32, default=0)
    single_batch_m = Field(dtype=KT.int32, default=0)
    single_batch_n = Field(dtype=KT.int32, default=0)
    step_k_a = Field(dtype=KT.int32, default=0)
    step_k_b = Field(dtype=KT.int32, default=0)
    depth_a_l1_cache_ub = Field(dtype=KT.int32, default=0)
    depth_b_l1_cache_ub = Field(dtype=KT.int32, default=0)
    db_l0a = Field(dtype=KT.int32, default=0)
    db_l0b = Field(dtype=KT.int32, default=0)
    db_l0c = Field(dtype=KT.int32, default=0)
    a_layout_info_b = Field(dtype=KT.int32, default=0)
    a_layout_info_s = Field(dtype=KT.int32, default=0)
    a_layout_info_n = Field(dtype=KT.int32, default=0)
    a_layout_info_g = Field(dtype=KT.int32, default=0)
    a_layout_info_d = Field(dtype=KT.int32, default=0)
    b_layout_info_b = Field(dtype=KT.int32, default=0)
    b_layout_info_s = Field(dtype=KT.int32, default=0)
    b_layout_info_n = Field(dtype=KT.int32, default=0)
    b_layout_info_g = Field(dtype=KT.int32, default=0)
    b_layout_info_d = Field(dtype=KT.int32, default=0)
    c_layout_info_b = Field(dtype=KT.int32, default=0)
    c_layout_info_s1 = Field(dtype=KT.int32, default=0)
    c_layout_info_n = Field(dtype=KT.int32, default=0)
    c_layout_info_g = Field(dtype=KT.int32, default=0)
    c_layout_info_s2 = Field(dtype=KT.int32, default=0)
    batch_num = Field(dtype=KT.int32, default=0)


class MatmulApiStaticTiling(Struct):
    """Compile-time matmul tiling (``get_matmul_api_tiling``): TCubeTiling's fields without the batch split."""

    used_core_num = Field(dtype=KT.int32, default=0)
    m = Field(dtype=KT.int32, default=0)
    n = Field(dtype=KT.int32, default=0)
    k_a = Field(dtype=KT.int32, default=0)
    k_b = Field(dtype=KT.int32, default=0)
    single_core_m = Field(dtype=KT.int32, default=0)
    single_core_n = Field(dtype=KT.int32, default=0)
    single_core_k = Field(dtype=KT.int32, default=0)
    base_m = Field(dtype=KT.int32, default=0)
    base_n = Field(dtype=KT.int32, default=0)
    base_k = Field(dtype=KT.int32, default=0)
    depth_a1 = Field(dtype=KT.int32, default=0)
    depth_b1 = Field(dtype=KT.int32, default=0)
    step_m = Field(dtype=KT.int32, default=0)
    step_n = Field(dtype=KT.int32, default=0)
    is_bias = Field(dtype=KT.int32, default=0)
    trans_length = Field(dtype=KT.int32, default=0)
    iterate_order = Field(dtype=KT.int32, default=0)
    share_mode = Field(dtype=KT.int32, default=0)
    share_l1_size = Field(dtype=KT.int32, default=0)
    share_l0c_size = Field(dtype=KT.int32, default=0)
    share_ub_size = Field(dtype=KT.int32, default=0)
    step_k_a = Field(dtype=KT.int32, default=0)
    step_k_b = Field(dtype=KT.int32, default=0)
    depth_a_l1_cache_ub = Field(dtype=KT.int32, default=0)
    depth_b_l1_cache_ub = Field(dtype=KT.int32, default=0)
    db_l0a = Field(dtype=KT.int32, default=0)
    db_l0b = Field(dtype=KT.int32, default=0)
    db_l0c = Field(dtype=KT.int32, default=0)
    a_layout_info_b = Field(dtype=KT.int32, default=0)
    a_layout_info_s = Field(dtype=KT.int32, default=0)
    a_layout_info_n = Field(dtype=KT.int32, default=0)
    a_layout_info_g = Field(dtype=KT.int32, default=0)
    a_layout_info_d = Field(dtype=KT.int32, default=0)
    b_layout_info_b = Field(dtype=KT.int32, default=0)
    b_layout_info_s = Field(dtype=KT.int32, default=0)
    b_layout_info_n = Field(dtype=KT.int32, default=0)
    b_layout_info_g = Field(dtype=KT.int32, default=0)
    b_layout_info_d = Field(dtype=KT.int32, default=0)
    c_layout_info_b = Field(dtype=KT.int32, default=0)
    c_layout_info_s1 = Field(dtype=KT.int32, default=0)
    c_layout_info_n = Field(dtype=KT.int32, default=0)
    c_layout_info_g = Field(dtype=KT.int32, default=0)
    c_layout_info_s2 = Field(dtype=KT.int32, default=0)
    batch_num = Field(dtype=KT.int32, default=0)
    mx_type_para = Field(dtype=KT.int32, default=0)


class SoftmaxTiling(Struct):
    """The split of a softmax over rows and columns (CANN ``SoftMaxTiling``)."""

    src_m = Field(dtype=KT.int32, default=0)
    src_k = Field(dtype=KT.int32, default=0)
    src_size = Field(dtype=KT.int32, default=0)
    out_max_m = Field(dtype=KT.int32, default=0)
    out_max_k = Field(dtype=KT.int32, default=0)
    out_max_size = Field(dtype=KT.int32, default=0)
    split_m = Field(dtype=KT.int32, default=0)
    split_k = Field(dtype=KT.int32, default=0)
    split_size = Field(dtype=KT.int32, default=0)
    reduce_m = Field(dtype=KT.int32, default=0)
    reduce_k = Field(dtype=KT.int32, default=0)
    reduce_size = Field(dtype=KT.int32, default=0)
    range_m = Field(dtype=KT.int32, default=0)
    tail_m = Field(dtype=KT.int32, default=0)
    tail_split_size = Field(dtype=KT.int32, default=0)
    tail_reduce_size = Field(dtype=KT.int32, default=0)


class RmsNormTiling(Struct):
    """The split of an RmsNorm over B, S and H (CANN ``RmsNormTiling``)."""

    b_length = Field(dtype=KT.int32, default=0)
    s_length = Field(dtype=KT.int32, default=0)
    h_length = Field(dtype=KT.int32, default=0)
    original_h_length = Field(dtype=KT.int32, default=0)
    reciprocal_of_h_length = Field(dtype=KT.float32, default=0)
    main_bsh_length = Field(dtype=KT.int32, default=0)
    main_bs_length = Field(dtype=KT.int32, default=0)
    main_bs_length_align = Field(dtype=KT.int32, default=0)
    loop_round = Field(dtype=KT.int32, default=0)
    input_tail_pos = Field(dtype=KT.int32, default=0)
    tail_bsh_length = Field(dtype=KT.int32, default=0)
    tail_bs_length = Field(dtype=KT.int32, default=0)
