"""Compile-time descriptions of a high-level Matmul: ``MatmulType``, ``MatmulConfig`` and its factories.

pyasc's ``asc.language.adv.types`` and the configuration half of
``asc.language.adv.matmul`` (Ascend C ``MatmulType``, ``MatmulConfig``,
``GetNormalConfig`` ... ``GetMMConfig``, ``GetMatmulApiTiling``).  All of
them are plain values the kernel builds from constants: the frontend runs
them at compile time and the Matmul object keeps them in its static type.
See docs/matmul-api.md.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .adv_tiling import MatmulApiStaticTiling
from .dtype import DataType
from .enums import (
    BatchMode,
    BatchOutMode,
    CubeFormat,
    IterateMode,
    IterateOrder,
    LayoutMode,
    MatmulConfigMode,
    ScheduleType,
    TPosition,
)

__all__ = [
    "MatmulBatchParams",
    "MatmulConfig",
    "MatmulFuncParams",
    "MatmulQuantParams",
    "MatmulShapeParams",
    "MatmulType",
    "check_type",
    "get_basic_config",
    "get_ib_share_norm_config",
    "get_matmul_api_tiling",
    "get_mdl_config",
    "get_mm_config",
    "get_normal_config",
    "get_special_basic_config",
    "get_special_mdl_config",
]


@dataclass(frozen=True)
class MatmulType:
    """Where one Matmul operand lives, its format (ND/NZ), data type, whether it is stored transposed."""

    position: TPosition
    format: CubeFormat
    dtype: DataType
    is_trans: bool = False
    layout: LayoutMode = LayoutMode.NONE


def check_type(target_type: Any, type_union: list, msg: str) -> None:
    """Raise ``TypeError(msg)`` unless ``target_type`` is one of ``type_union`` (pyasc's helper)."""
    if not any(target_type is t or target_type == t for t in type_union):
        raise TypeError(msg)


@dataclass(frozen=True)
class MatmulConfig:
    """The Matmul template configuration (Ascend C ``MatmulConfig``); every field as in CANN.

    npuemu computes the same result for every configuration: the fields
    select how the device schedules the work, not what it computes.
    """

    do_norm: bool = True
    do_basic_block: bool = False
    do_multi_data_load: bool = False
    basic_m: int = 0
    basic_n: int = 0
    basic_k: int = 0
    intrinsics_check: bool = False
    is_n_batch: bool = False
    en_vec_nd2nz: bool = False
    do_special_basic_block: bool = False
    do_mte2_preload: int = 0
    single_core_m: int = 0
    single_core_n: int = 0
    single_core_k: int = 0
    step_m: int = 0
    step_n: int = 0
    base_mn: int = 0
    single_core_mn: int = 0
    en_unit_flag: bool = True
    is_per_tensor: bool = False
    has_anti_quant_offset: bool = False
    do_ib_share_norm: bool = False
    do_special_mdl: bool = False
    enable_init: bool = True
    batch_mode: BatchMode = BatchMode.BATCH_LESS_THAN_L1
    enable_end: bool = True
    enable_get_tensor_c: bool = True
    enable_set_org_shape: bool = True
    enable_set_bias: bool = True
    enable_set_tail: bool = True
    enable_quant_vector: bool = True
    enable_set_define_data: bool = True
    iterate_mode: IterateMode = IterateMode.ITERATE_MODE_DEFAULT
    enable_reuse: bool = True
    enable_ub_reuse: bool = False
    enable_l1_cache_ub: bool = False
    intra_block_part_sum: bool = False
    iterate_order: IterateOrder = IterateOrder.UNDEF
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    enable_double_cache: int = 0
    is_bias_batch: bool = True
    enable_static_pad_zeros: bool = False
    is_partial_output: bool = False
    enable_mix_dual_master: bool = False
    is_a2b2_shared: bool = False
    is_enable_channel_split: bool = False
    enable_kdim_reorder_load: bool = False
    is_co1_shared: bool = False
    shared_co1_buffer_size: int = 64 * 1024
    batch_out_mode: BatchOutMode = BatchOutMode.SINGLE_BATCH


def get_normal_config(intrinsics_limit: bool = False, batch_loop: bool = False, is_vec_nd2_nz: bool = False,
                      bmm_mode: BatchMode = BatchMode.BATCH_LESS_THAN_L1, is_msg_reuse: bool = True,
                      iterate_order: IterateOrder = IterateOrder.ORDER_M,
                      schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT,
                      en_unit_flag: bool = True) -> MatmulConfig:
    """The NORM configuration (``CFG_NORM``): the default."""
    return MatmulConfig(intrinsics_check=intrinsics_limit, is_n_batch=batch_loop, en_vec_nd2nz=is_vec_nd2_nz,
                        batch_mode=bmm_mode, enable_reuse=is_msg_reuse, iterate_order=iterate_order,
                        schedule_type=schedule_type, en_unit_flag=en_unit_flag)


def get_mdl_config(intrinsics_limit: bool = False, batch_loop: bool = False, do_mte2_preload: int = 0,
                   is_vec_nd2_nz: bool = False, is_per_tensor: bool = False, has_anti_quant_offset: bool = False,
                   en_unit_flag: bool = False, is_msg_reuse: bool = True, enable_ub_reuse: bool = True,
                   enable_l1_cache_ub: bool = False, enable_mix_dual_master: bool = False,
                   enable_kdim_reorder_load: bool = False) -> MatmulConfig:
    """The MDL configuration (``CFG_MDL``): several base blocks moved to L1 at once."""
    return MatmulConfig(do_norm=False, do_multi_data_load=True, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, do_mte2_preload=do_mte2_preload, en_vec_nd2nz=is_vec_nd2_nz,
                        is_per_tensor=is_per_tensor, has_anti_quant_offset=has_anti_quant_offset,
                        en_unit_flag=en_unit_flag, enable_reuse=is_msg_reuse, enable_ub_reuse=enable_ub_reuse,
                        enable_l1_cache_ub=enable_l1_cache_ub, enable_mix_dual_master=enable_mix_dual_master,
                        enable_kdim_reorder_load=enable_kdim_reorder_load)


def get_special_mdl_config(intrinsics_limit: bool = False, batch_loop: bool = False, do_mte2_pre_load: int = 0,
                           is_vec_nd2_nz: bool = False, is_per_tensor: bool = False,
                           has_anti_quant_offset: bool = False) -> MatmulConfig:
    """The SPECIALMDL configuration."""
    return MatmulConfig(do_norm=False, do_special_mdl=True, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, do_mte2_preload=do_mte2_pre_load, en_vec_nd2nz=is_vec_nd2_nz,
                        is_per_tensor=is_per_tensor, has_anti_quant_offset=has_anti_quant_offset)


def get_basic_config(basic_m: int, basic_n: int, basic_k: int, intrinsics_limit: bool = False,
                     batch_loop: bool = False, bmm_mode: BatchMode = BatchMode.BATCH_LESS_THAN_L1) -> MatmulConfig:
    """The BASIC_BLOCK configuration: fixed base block ``basic_m x basic_n x basic_k``."""
    return MatmulConfig(do_norm=False, do_basic_block=True, basic_m=basic_m, basic_n=basic_n, basic_k=basic_k,
                        intrinsics_check=intrinsics_limit, is_n_batch=batch_loop, batch_mode=bmm_mode)


def get_special_basic_config(basic_m: int, basic_n: int, basic_k: int, single_core_m: int, single_core_n: int,
                             single_core_k: int, step_m: int, step_n: int, intrinsics_limit: bool = False,
                             batch_loop: bool = False,
                             bmm_mode: BatchMode = BatchMode.BATCH_LESS_THAN_L1) -> MatmulConfig:
    """The SPECIAL_BASIC_BLOCK configuration: fixed base block and per-core shape."""
    return MatmulConfig(do_norm=False, do_special_basic_block=True, basic_m=basic_m, basic_n=basic_n,
                        basic_k=basic_k, single_core_m=single_core_m, single_core_n=single_core_n,
                        single_core_k=single_core_k, step_m=step_m, step_n=step_n,
                        intrinsics_check=intrinsics_limit, is_n_batch=batch_loop, batch_mode=bmm_mode)


def get_ib_share_norm_config(intrinsics_limit: bool = False, batch_loop: bool = False, is_vec_nd2_nz: bool = False,
                             bmm_mode: BatchMode = BatchMode.BATCH_LESS_THAN_L1, is_double_cache: bool = False,
                             en_unit_flag: bool = True) -> MatmulConfig:
    """The IBSHARE configuration: A or B shared in L1 by the cores of an AI Core."""
    return MatmulConfig(do_norm=False, do_ib_share_norm=True, intrinsics_check=intrinsics_limit,
                        is_n_batch=batch_loop, en_vec_nd2nz=is_vec_nd2_nz, batch_mode=bmm_mode,
                        enable_double_cache=int(is_double_cache), en_unit_flag=en_unit_flag)


@dataclass(frozen=True)
class MatmulShapeParams:
    """Shape part of ``get_mm_config``."""

    single_core_m: int = 0
    single_core_n: int = 0
    single_core_k: int = 0
    basic_m: int = 0
    basic_n: int = 0
    basic_k: int = 0


@dataclass(frozen=True)
class MatmulQuantParams:
    """Quantisation part of ``get_mm_config``."""

    is_per_tensor: bool = False
    has_anti_quant_offset: bool = False


@dataclass(frozen=True)
class MatmulBatchParams:
    """Batch part of ``get_mm_config``."""

    is_b_batch: bool = False
    batch_mode: BatchMode = BatchMode.BATCH_LESS_THAN_L1
    is_bias_batch: bool = False


@dataclass(frozen=True)
class MatmulFuncParams:
    """Function switches of ``get_mm_config``."""

    intrinsics_limit: bool = False
    en_vec_nd2_nz: bool = False
    enable_double_cache: bool = False
    enable_l1_cache: bool = False
    do_mte2_pre_load: int = 0
    iterate_order: IterateOrder = IterateOrder.ORDER_M
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    enable_reuse: bool = True
    enable_ub_reuse: bool = False
    is_partial_output: bool = False
    is_a2_b2_shared: bool = False
    is_enable_channel_split: bool = False
    enable_kdim_reorder_load: bool = False


_MODES = {MatmulConfigMode.CONFIG_NORM: get_normal_config, MatmulConfigMode.CONFIG_MDL: get_mdl_config,
          MatmulConfigMode.CONFIG_SPECIALMDL: get_special_mdl_config,
          MatmulConfigMode.CONFIG_IBSHARE: get_ib_share_norm_config}


def get_mm_config(*args: Any, **kwargs: Any) -> MatmulConfig:
    """A configuration from a mode (``MatmulConfigMode``, default NORM) and parameter groups in any order
    (``MatmulShapeParams``, ``MatmulQuantParams``, ``MatmulBatchParams``, ``MatmulFuncParams``)."""
    mode = kwargs.pop("config_mode", MatmulConfigMode.CONFIG_NORM)
    groups = list(args) + list(kwargs.values())
    if groups and isinstance(groups[0], (MatmulConfigMode, int)) and not isinstance(groups[0], bool):
        mode = MatmulConfigMode(groups.pop(0))
    cfg = _MODES[MatmulConfigMode(mode)]()
    changes: dict[str, Any] = {}
    for g in groups:
        if isinstance(g, MatmulShapeParams):
            changes.update(dataclasses.asdict(g))
        elif isinstance(g, MatmulQuantParams):
            changes.update(is_per_tensor=g.is_per_tensor, has_anti_quant_offset=g.has_anti_quant_offset)
        elif isinstance(g, MatmulBatchParams):
            changes.update(is_n_batch=g.is_b_batch, batch_mode=BatchMode(g.batch_mode),
                           is_bias_batch=g.is_bias_batch)
        elif isinstance(g, MatmulFuncParams):
            changes.update(intrinsics_check=g.intrinsics_limit, en_vec_nd2nz=g.en_vec_nd2_nz,
                           enable_double_cache=int(g.enable_double_cache), enable_l1_cache_ub=g.enable_l1_cache,
                           do_mte2_preload=g.do_mte2_pre_load, iterate_order=IterateOrder(g.iterate_order),
                           schedule_type=ScheduleType(g.schedule_type), enable_reuse=g.enable_reuse,
                           enable_ub_reuse=g.enable_ub_reuse, is_partial_output=g.is_partial_output,
                           is_a2b2_shared=g.is_a2_b2_shared, is_enable_channel_split=g.is_enable_channel_split,
                           enable_kdim_reorder_load=g.enable_kdim_reorder_load)
        else:
            raise TypeError(f"get_mm_config: unexpected argument {g!r}")
    return dataclasses.replace(cfg, **changes)


def get_matmul_api_tiling(mm_cfg: MatmulConfig, l1_size: Any = None, a_type: MatmulType | None = None,
                          b_type: MatmulType | None = None, c_type: MatmulType | None = None,
                          bias_type: MatmulType | None = None) -> MatmulApiStaticTiling:
    """A compile-time tiling from a configuration with fixed shapes (``get_basic_config`` /
    ``get_special_basic_config`` / ``get_mm_config`` with ``MatmulShapeParams``).

    Both pyasc forms are accepted: ``(cfg, l1_size, a, b, c, bias)`` and ``(cfg, a, b, c, bias, l1_size)``.
    """
    if isinstance(l1_size, MatmulType):       # the (cfg, a, b, c, bias, l1_size) form
        l1_size, a_type, b_type, c_type, bias_type = bias_type, l1_size, a_type, b_type, c_type
    if not (mm_cfg.basic_m and mm_cfg.basic_n and mm_cfg.basic_k):
        raise ValueError("get_matmul_api_tiling needs a configuration with basic_m, basic_n and basic_k "
                         "(get_basic_config, get_special_basic_config or get_mm_config with MatmulShapeParams)")
    if a_type is None or b_type is None or c_type is None:
        raise ValueError("get_matmul_api_tiling needs the A, B and C MatmulTypes")
    sm = mm_cfg.single_core_m or mm_cfg.basic_m
    sn = mm_cfg.single_core_n or mm_cfg.basic_n
    sk = mm_cfg.single_core_k or mm_cfg.basic_k
    return MatmulApiStaticTiling(
        used_core_num=1, m=sm, n=sn, k_a=sk, k_b=sk, single_core_m=sm, single_core_n=sn, single_core_k=sk,
        base_m=mm_cfg.basic_m, base_n=mm_cfg.basic_n, base_k=mm_cfg.basic_k, depth_a1=1, depth_b1=1,
        step_m=mm_cfg.step_m or 1, step_n=mm_cfg.step_n or 1, is_bias=int(bias_type is not None),
        iterate_order=int(mm_cfg.iterate_order == IterateOrder.ORDER_N), step_k_a=1, step_k_b=1,
        db_l0a=1, db_l0b=1, db_l0c=1)

