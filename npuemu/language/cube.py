"""The cube (AIC) instructions: L1 -> L0A/L0B loads, ``mmad`` and ``fixpipe``.

Names, signatures and argument orders follow pyasc (``asc.language.basic.mm``,
``asc.language.basic.fixpipe`` and the parameter structs of
``asc.language.core.types``).  The semantics and the checks npuemu applies
are described in ``docs/cube.md`` and in ``npuemu/isa/cube_move.py``,
``npuemu/isa/mmad.py`` and ``npuemu/isa/fixpipe.py``.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, overload

from .builtin import append_doc, builtin, document_dtypes
from .core import GlobalTensor, LocalTensor
from .dtype import DataType, bfloat16, float16, float32, int8, int16, int32, uint8, uint16, uint32
from .params import REQUIRED, ParamStruct

__all__ = [
    "CO2Layout", "FixpipeConfig", "FixpipeParamsV220", "InitConstValueParams", "LoadData2DParams",
    "LoadData2DParamsV2", "LoadData2dTransposeParams", "LoadData2dTransposeParamsV2", "LoadData3DParamsV1",
    "LoadData3DParamsV2", "LoadData3DParamsV2Pro", "LoadDataRepeatParam", "MmadParams", "CFG_NZ",
    "CFG_ROW_MAJOR", "fixpipe", "init_const_value", "load_data", "load_data_with_sparse",
    "load_data_with_transpose", "mmad", "mmad_with_sparse", "set_fix_pipe_pre_quant_flag", "set_hf32_mode",
    "set_hf32_trans_mode", "set_load_data_boundary", "set_load_data_padding_value", "set_load_data_repeat",
    "set_mm_layout_transform",
]


class CO2Layout(IntEnum):
    """Output layout of ``fixpipe`` (``AscendC::CO2Layout``)."""

    NZ = 0
    ROW_MAJOR = 1
    COLUMN_MAJOR = 2


class LoadData2DParams(ParamStruct):
    """``load_data`` geometry: ``repeat_times`` 512-byte fractals from fractal ``start_index``.

    ``src_stride`` is the source step between repeats (start to start, in
    fractals); ``dst_gap`` the destination gap (end to start, in fractals);
    ``if_transpose`` transposes each 16 x 16 fractal (16-bit types only);
    ``sid`` and ``addr_mode`` are reserved.
    """

    _fields_ = (("start_index", 0, "u16"), ("repeat_times", 1, "u8"), ("src_stride", 0, "u16"),
                ("sid", 0, "u16"), ("dst_gap", 0, "u16"), ("if_transpose", False, "bool"),
                ("addr_mode", 0, "u8"))


class LoadData2DParamsV2(ParamStruct):
    """``load_data`` by fractal coordinates: ``m_step`` x ``k_step`` fractals from
    (``m_start_position``, ``k_start_position``); ``src_stride``/``dst_stride`` are the
    column heights (in fractals) of the source and destination fractal grids."""

    _fields_ = (("m_start_position", 0, "u32"), ("k_start_position", 0, "u32"), ("m_step", 0, "u16"),
                ("k_step", 0, "u16"), ("src_stride", 0, "i32"), ("dst_stride", 0, "u16"),
                ("if_transpose", False, "bool"), ("sid", 0, "u8"))


class LoadData2dTransposeParams(ParamStruct):
    """``load_data_with_transpose`` geometry (square blocks of two fractals for 8- and 32-bit types)."""

    _fields_ = (("start_index", 0, "u16"), ("repeat_times", 1, "u8"), ("src_stride", 0, "u16"),
                ("dst_gap", 0, "u16"), ("dst_frac_gap", 0, "u16"), ("addr_mode", 0, "u8"))


class LoadData2dTransposeParamsV2(ParamStruct):
    """``load_data_with_transpose`` with a source gap between the two fractals of an 8-/32-bit square
    (``src_frac_gap``); see ``docs/cube.md``."""

    _fields_ = (("start_index", 0, "u16"), ("repeat_times", 0, "u8"), ("src_stride", 0, "u16"),
                ("dst_gap", 0, "u16"), ("dst_frac_gap", 0, "u16"), ("src_frac_gap", 0, "u16"), ("addr_mode", 0, "u8"))


class LoadData3DParamsV1(ParamStruct):
    """Load3Dv1 (img2col) parameters; Load3Dv1 does not exist on Atlas A2/A3 (a compile-time error there)."""

    _fields_ = (("pad_list", (0, 0, 0, 0), "const"), ("l1_h", 1, "u16"), ("l1_w", 1, "u16"), ("c1_index", 0, "u16"),
                ("fetch_filter_w", 0, "u8"), ("fetch_filter_h", 0, "u8"), ("left_top_w", 0, "i16"),
                ("left_top_h", 0, "i16"), ("stride_w", 1, "u8"), ("stride_h", 1, "u8"), ("filter_w", 1, "u8"),
                ("filter_h", 1, "u8"), ("dilation_filter_w", 1, "u8"), ("dilation_filter_h", 1, "u8"),
                ("jump_stride", 1, "u8"), ("repeat_mode", 0, "u8"), ("repeat_time", 1, "u8"), ("c_size", 0, "u8"),
                ("pad_value", 0, "scalar"))


class LoadData3DParamsV2(ParamStruct):
    """Load3Dv2 (img2col) parameters: an ``m_extension`` x ``k_extension`` block, from
    (``m_start_pt``, ``k_start_pt``), of the image-to-column matrix of an L1 feature map.

    ``pad_list`` is (left, right, top, bottom) and must be a compile-time constant; ``l1_h`` x ``l1_w`` is
    the feature map's size, ``channel_size`` its channels; strides, filter size and dilation describe
    the convolution window; ``pad_value`` fills positions outside the feature map.
    """

    _fields_ = (("pad_list", (0, 0, 0, 0), "const"), ("l1_h", 1, "u16"), ("l1_w", 1, "u16"),
                ("channel_size", 1, "u16"), ("k_extension", 1, "u16"), ("m_extension", 1, "u16"),
                ("k_start_pt", 0, "u16"), ("m_start_pt", 0, "u16"), ("stride_w", 1, "u8"), ("stride_h", 1, "u8"),
                ("filter_w", 1, "u8"), ("filter_h", 1, "u8"), ("dilation_filter_w", 1, "u8"),
                ("dilation_filter_h", 1, "u8"), ("en_transpose", False, "bool"), ("pad_value", 0, "scalar"),
                ("filter_size_w", False, "bool"), ("filter_size_h", False, "bool"), ("f_matrix_ctrl", False, "bool"))


class LoadData3DParamsV2Pro(ParamStruct):
    """Load3Dv2 with packed configuration words (``ext_config``, ``filter_config``); not emulated."""

    _fields_ = (("channel_size", 0, "u16"), ("en_transpose", False, "bool"), ("en_small_k", False, "bool"),
                ("filter_size_w", False, "bool"), ("filter_size_h", False, "bool"), ("f_matrix_ctrl", False, "bool"),
                ("ext_config", 0, "u64"), ("filter_config", 0x10101010101, "u64"))


class LoadDataRepeatParam(ParamStruct):
    """Repeat control of Load3Dv2 (``set_load_data_repeat``): ``repeat_time`` iterations whose windows are
    ``repeat_stride`` x 16 rows (``repeat_mode`` 0, height) or x C0 columns (mode 1, width) apart."""

    _fields_ = (("repeat_time", 1, "u8"), ("repeat_stride", 0, "u16"), ("repeat_mode", 0, "u8"))


class InitConstValueParams(ParamStruct):
    """``init_const_value``: ``repeat_times`` x ``block_num`` blocks (32 B in L1, 512 B in L0A/L0B)."""

    _fields_ = (("repeat_times", 0, "u16"), ("block_num", 0, "u16"), ("dst_gap", 0, "u16"),
                ("init_value", 0, "scalar"))


class MmadParams(ParamStruct):
    """``mmad`` shape and accumulation control.

    ``MmadParams(m, n, k, unit_flag=0, cmatrix_source=False, cmatrix_init_val=True)``;
    the legacy form ``MmadParams(m, n, k, is_bias, fm_offset, en_ssparse,
    en_winograd_a, en_winograd_b)`` (eight positional arguments, or the legacy
    keywords) maps ``is_bias=True`` to accumulation into L0C.
    """

    _fields_ = (("m", 0, "u16"), ("n", 0, "u16"), ("k", 0, "u16"), ("unit_flag", 0, "u8"),
                ("cmatrix_source", False, "bool"), ("cmatrix_init_val", True, "bool"),
                ("is_bias", None, "const"), ("fm_offset", 0, "const"), ("en_ssparse", False, "const"),
                ("en_winograd_a", False, "const"), ("en_winograd_b", False, "const"))

    LEGACY = ("m", "n", "k", "is_bias", "fm_offset", "en_ssparse", "en_winograd_a", "en_winograd_b")

    @overload
    def __init__(self, m: int = 0, n: int = 0, k: int = 0, unit_flag: int = 0, cmatrix_source: bool = False,
                 cmatrix_init_val: bool = True) -> None: ...
    @overload
    def __init__(self, m: int = 0, n: int = 0, k: int = 0, is_bias: bool = False, fm_offset: int = 0,
                 en_ssparse: bool = False, en_winograd_a: bool = False, en_winograd_b: bool = False) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any):
        if len(args) > 6 or (set(kwargs) & set(self.LEGACY[3:])):
            kwargs.update(zip(self.LEGACY, args))
            args = ()
            kwargs["is_bias"] = bool(kwargs.get("is_bias"))
            kwargs["cmatrix_init_val"] = not kwargs["is_bias"]       # is_bias: C += A * B
        super().__init__(*args, **kwargs)


class FixpipeParamsV220(ParamStruct):
    """``fixpipe`` geometry and conversion (``AscendC::FixpipeParamsV220``).

    ``n_size``/``m_size`` elements of the L0C matrix; ``src_stride`` rows of 16
    elements between the starts of the L0C fractal columns (``m_size`` rounded
    up to 16); ``dst_stride`` the destination row length in elements for ND
    output, or the distance between NZ fractal columns in 32-byte blocks for NZ
    output; ``quant_pre`` a ``QuantModes``; ``deq_scalar`` the scalar scale
    (float32 bits in the low 32 bits); ``relu_en`` applies ReLU.
    """

    _fields_ = (("n_size", REQUIRED, "u16"), ("m_size", REQUIRED, "u16"), ("src_stride", REQUIRED, "u16"),
                ("dst_stride", REQUIRED, "u32"), ("quant_pre", 0, "enum"), ("deq_scalar", 0, "u64"),
                ("nd_num", 1, "u16"), ("src_nd_stride", 0, "u16"), ("dst_nd_stride", 0, "u32"),
                ("relu_en", False, "bool"), ("unit_flag", 0, "u8"), ("is_channel_split", False, "bool"))


class FixpipeConfig(ParamStruct):
    """``fixpipe`` output layout: ``FixpipeConfig(CO2Layout.ROW_MAJOR)`` (NZ -> ND) or ``CO2Layout.NZ``."""

    _fields_ = (("layout", CO2Layout.ROW_MAJOR, "const"),)

    @staticmethod
    def cfg_nz() -> "FixpipeConfig":
        """``CFG_NZ``: keep the NZ layout."""
        return FixpipeConfig(CO2Layout.NZ)

    @staticmethod
    def cfg_row_major() -> "FixpipeConfig":
        """``CFG_ROW_MAJOR``: convert NZ to ND (row-major) on the way out."""
        return FixpipeConfig(CO2Layout.ROW_MAJOR)


CFG_NZ = FixpipeConfig(CO2Layout.NZ)
CFG_ROW_MAJOR = FixpipeConfig(CO2Layout.ROW_MAJOR)


@overload
def load_data(dst: LocalTensor, src: LocalTensor, params: LoadData2DParams) -> None: ...
@overload
def load_data(dst: LocalTensor, src: LocalTensor, params: LoadData2DParamsV2) -> None: ...
@overload
def load_data(dst: LocalTensor, src: GlobalTensor, params: LoadData2DParams) -> None: ...
@overload
def load_data(dst: LocalTensor, src: LocalTensor, params: LoadData3DParamsV1) -> None: ...
@overload
def load_data(dst: LocalTensor, src: LocalTensor, params: LoadData3DParamsV2) -> None: ...
@overload
def load_data(dst: LocalTensor, src: LocalTensor, params: LoadData3DParamsV2Pro) -> None: ...
@builtin
def load_data(dst: LocalTensor, src: LocalTensor | GlobalTensor, *args: Any, **kwargs: Any) -> None:
    """Move 512-byte fractals L1 -> L0A/L0B (MTE1), or GM -> L1/L0A/L0B (MTE2) (``AscendC::LoadData``).

    Fractals are 16 x (32 B / sizeof(T)) on A1/A2 and (32 B / sizeof(T)) x 16 on
    B1/B2: 16 x 32 / 32 x 16 for 8-bit, 16 x 16 for 16-bit, 16 x 8 / 8 x 16 for
    32-bit types.  With ``LoadData2DParams`` each repeat copies one fractal
    (transposed when ``if_transpose``, 16-bit types and L1 -> L0 only).  L0A/L0B
    addresses must be 512-byte aligned.  With ``LoadData3DParamsV2`` it is
    img2col (Load3Dv2): A1 (a C1HWC0 feature map) -> A2 (ZZ fractals).
    """


@overload
def load_data_with_transpose(dst: LocalTensor, src: LocalTensor, params: LoadData2dTransposeParams) -> None: ...
@overload
def load_data_with_transpose(dst: LocalTensor, src: LocalTensor, params: LoadData2dTransposeParamsV2) -> None: ...
@builtin
def load_data_with_transpose(dst: LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Load with transposition L1 -> L0A/L0B (``AscendC::LoadDataWithTranspose``).

    16-bit types transpose one 16 x 16 fractal per repeat; 8-bit types two
    stacked 16 x 32 fractals (a 32 x 32 square) and 32-bit types two adjacent
    16 x 8 fractals (a 16 x 16 square), each split back into two fractals
    ``dst_frac_gap`` fractals apart.
    """


@builtin
def set_load_data_padding_value(pad_value: int | float) -> None:
    """Set the value Load3D writes where the window leaves the feature map (``AscendC::SetLoadDataPaddingValue``).

    ``load_data`` with ``LoadData3DParamsV2`` sets it from its own ``pad_value`` first.
    """


@builtin
def set_load_data_boundary(boundary: int) -> None:
    """Set the L1 boundary of Load3Dv2 in bytes (``AscendC::SetLoadDataBoundary``).

    Reads at or past ``boundary`` bytes from the start of L1 wrap around to its start; 0 (the default)
    means no boundary, else it is at least 1024.
    """


@builtin
def set_load_data_repeat(repeat_params: LoadDataRepeatParam) -> None:
    """Set the repeat of later Load3Dv2 instructions (``AscendC::SetLoadDataRepeat``)."""


@builtin
def load_data_with_sparse(dst: LocalTensor, src: LocalTensor, idx: LocalTensor, params: LoadData2DParams) -> None:
    """Load densified 4:2-sparse int8 B fractals B1 -> B2 with their 2-bit indices (``AscendC::LoadDataWithSparse``).

    Each repeat moves one 512-byte fractal and 128 index bytes of ``idx`` (uint8, B1); see ``docs/cube.md``.
    """


@builtin
def mmad_with_sparse(dst: LocalTensor, fm: LocalTensor, filter: LocalTensor, params: MmadParams) -> None:  # noqa: A002
    """C (CO1, int32) [+]= A (A2, int8) x the 4:2-sparse B loaded by ``load_data_with_sparse`` (``AscendC::MmadWithSparse``).

    ``k`` counts A's K (a multiple of 4); B holds ``k / 2`` dense rows.  Data types: int8 x int8 -> int32.
    """


@builtin
def init_const_value(dst: LocalTensor, init_const_value_params: InitConstValueParams) -> None:
    """Fill an A1/B1/A2/B2 tensor with ``init_value`` (``AscendC::InitConstValue``)."""


@overload
def mmad(dst: LocalTensor, fm: LocalTensor, filter: LocalTensor, params: MmadParams) -> None: ...  # noqa: A002
@overload
def mmad(dst: LocalTensor, fm: LocalTensor, filter: LocalTensor, bias: LocalTensor,  # noqa: A002
         params: MmadParams) -> None: ...
@builtin
def mmad(dst: LocalTensor, fm: LocalTensor, filter: LocalTensor, *args: Any, **kwargs: Any) -> None:  # noqa: A002
    """C (CO1, NZ) = A (A2, ZZ) x B (B2, ZN) [+ C or bias] (``AscendC::Mmad``).

    The bias is in C2 (a row of n values added to every row) or CO1 (an NZ
    matrix).  m, n, k are in [0, 4095]; any of them 0 makes the instruction a
    no-op; m = 1 reads A as a plain (ND) vector (GEMV).
    """


@builtin
def set_hf32_mode(hf32_mode: bool) -> None:
    """Round float32 L0A/L0B data to HF32 before ``mmad`` multiplies it (``AscendC::SetHF32Mode``)."""


@builtin
def set_hf32_trans_mode(trans_mode: bool) -> None:
    """HF32 rounding: False rounds to nearest even, True rounds half away from zero."""


@builtin
def set_mm_layout_transform(mm_layout_mode: bool) -> None:
    """Which of M and N ``mmad`` walks first (``SetMMLayoutTransform``): True N then M, False M then N.

    The order changes when each output element is produced, not its value,
    so npuemu checks the argument and computes ``mmad`` as before.
    """


@overload
def fixpipe(dst: GlobalTensor | LocalTensor, src: LocalTensor, params: FixpipeParamsV220,
            config: FixpipeConfig = FixpipeConfig.cfg_row_major) -> None: ...
@overload
def fixpipe(dst: GlobalTensor | LocalTensor, src: LocalTensor, cbuf_workspace: LocalTensor, params: FixpipeParamsV220,
            config: FixpipeConfig = FixpipeConfig.cfg_row_major) -> None: ...
@builtin
def fixpipe(dst: GlobalTensor | LocalTensor, src: LocalTensor, *args: Any, **kwargs: Any) -> None:
    """Move a matrix out of L0C to GM or L1 (``AscendC::Fixpipe``), converting on the way.

    ``fixpipe(dst, src, FixpipeParamsV220, config=FixpipeConfig.cfg_row_major)``
    or ``fixpipe(dst, src, cbuf_workspace, FixpipeParamsV220, config)`` where
    ``cbuf_workspace`` (uint64, L1) holds per-channel scales for the vector
    quantisation modes.  NZ -> ND conversion (GM only), quantisation
    (``QuantModes``) and ReLU happen on the fly.
    """


@builtin
def set_fix_pipe_pre_quant_flag(config: int) -> None:
    """Set the scalar quantisation parameter of later CO1 transfers (``AscendC::SetFixpipePreQuantFlag``)."""


# the data types of the cube instructions on Atlas A2/A3; the rules check them, the docstrings list them
_MOVED = (int8, uint8, int16, uint16, float16, bfloat16, int32, uint32, float32)
DTYPES: dict[Any, tuple[DataType, ...]] = {
    load_data: _MOVED, load_data_with_transpose: _MOVED, load_data_with_sparse: (int8,),
    init_const_value: (float16, int16, uint16, bfloat16, float32, int32, uint32),
}
# mmad: (fm, filter) -> the type of the product in L0C
# Load3Dv2 on Atlas A2/A3 (documented): A1 -> A2 for these; int4 is not emulated
LOAD3D_TYPES = (int8, uint8, float16, bfloat16, int32, uint32, float32)
MMAD_TYPES = {(int8, int8): int32, (float16, float16): float32, (bfloat16, bfloat16): float32,
              (float32, float32): float32}
document_dtypes(DTYPES)
append_doc(mmad, "Data types (Atlas A2/A3): " +
           ", ".join(f"{a.name} x {b.name} -> {c.name}" for (a, b), c in MMAD_TYPES.items()) + ".")
