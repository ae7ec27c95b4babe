"""AIPP image preprocessing (Ascend C ``SetAippFunctions`` / ``LoadImageToLocal``).

* ``set_aipp_functions(src0[, src1], input_format, config)``: remember the
  source image in GM (``src1``: the UV plane of a YUV420SP image), its
  :class:`AippInputFormat` and the :class:`AippParams` preprocessing
  configuration in the core's AIPP registers.
* ``load_image_to_local(dst, LoadImageToLocalParams(...))``: move a crop of
  that image into L1 (TPosition A1/B1) while swapping channels, converting
  the colour space and the data type, padding the borders and padding each
  pixel's channels to C0.

What npuemu computes, and what it refuses, is recorded in
:mod:`npuemu.isa.aipp`.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, overload

from .builtin import builtin
from .core import GlobalTensor, LocalTensor
from .params import ParamStruct

__all__ = ["AippInputFormat", "AippPaddingParams", "AippSwapParams", "AippSingleLineParams",
           "AippDataTypeConvParams", "AippChannelPaddingParams", "AippColorSpaceConvParams", "AippParams",
           "LoadImageToLocalParams", "set_aipp_functions", "load_image_to_local"]


class AippInputFormat(IntEnum):
    """Source image formats (``AscendC::AippInputFormat``), all uint8 pixels."""

    YUV420SP_U8 = 0
    XRGB8888_U8 = 1
    RGB888_U8 = 4
    YUV400_U8 = 9


class AippPaddingParams(ParamStruct):
    """Border padding: ``padding_mode`` 0 (constant, left/right only) .. 3; constant values per channel."""

    _fields_ = (("padding_mode", 0, "u32"), ("padding_value_ch0", 0, "scalar"), ("padding_value_ch1", 0, "scalar"),
                ("padding_value_ch2", 0, "scalar"), ("padding_value_ch3", 0, "scalar"))


class AippSwapParams(ParamStruct):
    """Channel swaps: R/B (RGB888, XRGB8888), U/V (YUV420SP), X to the back (XRGB8888: XRGB -> RGBX)."""

    _fields_ = (("is_swap_rb", False, "bool"), ("is_swap_uv", False, "bool"), ("is_swap_ax", False, "bool"))


class AippSingleLineParams(ParamStruct):
    """``is_single_line_copy``: read one line of the source (``vert_size`` is then ignored)."""

    _fields_ = (("is_single_line_copy", False, "bool"),)


class AippDataTypeConvParams(ParamStruct):
    """uint8 -> int8 (``x - mean``, saturated) or -> float16 (``(x - mean - min) * var``) per channel."""

    _fields_ = (("dtc_mean_ch0", 0, "u8"), ("dtc_mean_ch1", 0, "u8"), ("dtc_mean_ch2", 0, "u8"),
                ("dtc_min_ch0", 0.0, "scalar"), ("dtc_min_ch1", 0.0, "scalar"), ("dtc_min_ch2", 0.0, "scalar"),
                ("dtc_var_ch0", 1.0, "scalar"), ("dtc_var_ch1", 1.0, "scalar"), ("dtc_var_ch2", 1.0, "scalar"),
                ("dtc_round_mode", 0, "u32"))


class AippChannelPaddingParams(ParamStruct):
    """Channel padding: mode 0 to 32 bytes (32 int8 / 16 float16 channels), mode 1 to 4 channels."""

    _fields_ = (("c_padding_mode", 0, "u32"), ("c_padding_value", 0, "scalar"))


class AippColorSpaceConvParams(ParamStruct):
    """Colour-space conversion: a 3 x 3 int16 matrix (in 1/256) and uint8 input/output biases."""

    _fields_ = (("is_enable_csc", False, "bool"),
                *((f"csc_matrix_r{r}_c{c}", 0, "i16") for r in range(3) for c in range(3)),
                *((f"csc_bias_in_{i}", 0, "u8") for i in range(3)),
                *((f"csc_bias_out_{i}", 0, "u8") for i in range(3)))


class AippParams(ParamStruct):
    """The AIPP configuration (``AscendC::AippParams<U>``): ``dtype`` is the output type U (int8 or float16)."""

    _fields_ = (("dtype", None, "dtype"), ("padding_params", None, "struct"), ("swap_params", None, "struct"),
                ("single_line_params", None, "struct"), ("dtc_params", None, "struct"),
                ("c_padding_params", None, "struct"), ("csc_params", None, "struct"))

    SUBSTRUCTS = {"padding_params": AippPaddingParams, "swap_params": AippSwapParams,
                  "single_line_params": AippSingleLineParams, "dtc_params": AippDataTypeConvParams,
                  "c_padding_params": AippChannelPaddingParams, "csc_params": AippColorSpaceConvParams}

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        for name, cls in self.SUBSTRUCTS.items():       # an omitted part is its defaults, as in pyasc
            if getattr(self, name) is None:
                setattr(self, name, cls())


class LoadImageToLocalParams(ParamStruct):
    """Crop and border sizes of ``load_image_to_local`` (pixels; ``sid`` is reserved)."""

    _fields_ = (("horiz_size", 2, "u16"), ("vert_size", 2, "u16"), ("horiz_start_pos", 0, "u16"),
                ("vert_start_pos", 0, "u16"), ("src_horiz_size", 2, "u16"), ("top_pad_size", 0, "u8"),
                ("bot_pad_size", 0, "u8"), ("left_pad_size", 0, "u16"), ("right_pad_size", 0, "u16"),
                ("sid", 0, "u8"))


@overload
def set_aipp_functions(src0: GlobalTensor, input_format: AippInputFormat, config: AippParams) -> None: ...
@overload
def set_aipp_functions(src0: GlobalTensor, src1: GlobalTensor, input_format: AippInputFormat,
                       config: AippParams) -> None: ...
@builtin
def set_aipp_functions(*args: Any, **kwargs: Any) -> None:
    """Set the AIPP source image(s), format and preprocessing (``AscendC::SetAippFunctions``).

    ``src1`` (the interleaved UV plane) is required for YUV420SP and not taken otherwise.
    """


@builtin
def load_image_to_local(dst: LocalTensor, load_data_params: LoadImageToLocalParams) -> None:
    """Move the configured image's crop GM -> L1 (A1/B1) with the AIPP preprocessing (``LoadImageToLocal``).

    dst (int8 or float16, the config's dtype) receives ``(top + rows + bot) x (left + horiz_size + right)``
    pixels of C0 channels each.
    """
