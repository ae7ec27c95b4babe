"""Checks shared by the cube instructions (``cube_move``, ``mmad``, ``fixpipe``).

Fault codes 990-999 of the cube range (900-999; ``cube_move`` uses 900-929,
``mmad`` 930-959, ``fixpipe`` 960-989).
"""
from __future__ import annotations

from numba import njit

from .. import errors
from . import state as S
from .fault import Fault, Message, register

F_NOT_AIC = 990
F_ALIGN = 991
F_PARAM = 992
F_EXTENT = 993

FRACTAL = 512           # bytes in an L0A/L0B fractal (and an L1 NZ fractal)
C0_BYTES = 32           # bytes in one fractal row (C0_SIZE)

# operand roles named by F_EXTENT / F_ALIGN (their ``c`` argument)
ROLES = ("destination", "source", "left matrix (fm)", "right matrix (filter)", "bias", "quantisation scales")
DST, SRC, FM, FILTER, BIAS, SCALES = range(6)

# parameter fields named by F_PARAM (its ``c`` argument)
FIELDS = (
    "nd_num", "n_value", "d_value", "src_nd_matrix_stride", "src_d_value", "dst_nz_c0_stride",
    "dst_nz_n_stride", "dst_nz_matrix_stride",                                  # 0-7  Nd2NzParams
    "start_index", "repeat_times", "src_stride", "dst_gap", "addr_mode",        # 8-12 LoadData2DParams
    "m_start_position", "k_start_position", "m_step", "k_step", "dst_stride",   # 13-17 LoadData2DParamsV2
    "dst_frac_gap",                                                             # 18 transpose params
    "block_num",                                                                # 19 InitConstValueParams
    "m", "n", "k", "unit_flag",                                                 # 20-23 MmadParams
    "n_size", "m_size", "fixpipe src_stride", "fixpipe dst_stride", "nd_num", "src_nd_stride",
    "dst_nd_stride",                                                            # 24-30 FixpipeParamsV220
    "block_count", "block_len",                                                 # 31-32 DataCopyParams
    "src_n_stride", "dst_d_stride", "dst_nd_matrix_stride",                     # 33-35 Nz2NdParamsFull
    "l1_h", "l1_w", "channel_size", "k_extension", "m_extension", "k_start_pt", "m_start_pt", "stride_w",
    "stride_h", "filter_w", "filter_h", "dilation_filter_w", "dilation_filter_h",  # 36-48 LoadData3DParamsV2
    "repeat_time", "repeat_stride", "repeat_mode",                              # 49-51 LoadDataRepeatParam
    "boundary", "pad_list",                                                     # 52-53 set_load_data_boundary
)


def _role(c: int) -> str:
    return ROLES[c] if 0 <= c < len(ROLES) else "operand"


register({
    F_NOT_AIC: (errors.PositionError,
                lambda a, b, c, env: "cube instructions run only on AIC cores; this is an AIV core (guard the "
                                     "cube part with `if asc.ascend_is_aic():` or launch an AIC kernel type)"),
    F_ALIGN: (errors.AlignmentError,
              lambda a, b, c, env: Message(f"the {_role(c)} starts at byte {a} of {env.hardware(b >> 16)}, which "
                                           f"is not {b & 0xFFFF}-byte aligned", buffer=env.hardware(b >> 16))),
    F_PARAM: (errors.ParamRangeError,
              lambda a, b, c, env: f"{FIELDS[c] if 0 <= c < len(FIELDS) else 'field'} = {a} is outside its "
                                   f"range [{b >> 32}, {b & 0xFFFFFFFF}]"),
    F_EXTENT: (errors.BoundsError,
               lambda a, b, c, env: f"the instruction reaches byte {a} of the {_role(c)} tensor, which holds only "
                                    f"{b} bytes"),
})


@njit(cache=True, inline="always")
def check_aic(st, loc):
    if st[S.CORE_TYPE] != 1:
        raise Fault(F_NOT_AIC, loc, 0, 0, 0)


@njit(cache=True, inline="always")
def check_align(st, addr, hw, align, role, loc):
    """``addr`` (absolute in lm) is ``align``-aligned within memory ``hw``."""
    rel = addr - st[S.SEG_BASE + hw]
    if rel % align != 0:
        raise Fault(F_ALIGN, loc, rel, (hw << 16) | align, role)


@njit(cache=True, inline="always")
def check_param(value, lo, hi, field, loc):
    if value < lo or value > hi:
        raise Fault(F_PARAM, loc, value, (lo << 32) | hi, field)


@njit(cache=True, inline="always")
def check_extent(end, have, role, loc):
    """An access ending at byte ``end`` (exclusive) fits in an operand of ``have`` bytes."""
    if end > have:
        raise Fault(F_EXTENT, loc, end, have, role)
