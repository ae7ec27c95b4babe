"""Quantisation of the high-level API (``asc.adv.quant``; Ascend C ``AscendQuant``, per-tensor).

``dst[i] = saturate_int8(round(half(half(src[i]) * half(scale)) + half(offset)))``:
the library converts ``src``, ``scale`` and ``offset`` to float16, multiplies
and adds in float16 (each rounded), and converts to int8 rounding half to
even ("四舍六入五成双") and saturating at -128 and 127.
"""
from __future__ import annotations

from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32
from .params import ParamStruct

__all__ = ["quant", "QuantConfig"]


class QuantConfig(ParamStruct):
    """Compile-time options of ``quant`` (pyasc ``QuantConfig``; Ascend C ``AscendQuantConfig``).

    The per-tensor form ``quant`` emulates computes the same whatever they hold;
    they are accepted for compatibility.
    """

    _fields_ = (("calc_count", 0, "u32"), ("offset_count", 0, "u32"), ("scale_count", 0, "u32"),
                ("work_local_size", 0, "u32"))
    _units_ = {"calc_count": "elements (0: the call's count)", "offset_count": "offset elements (per-channel)",
               "scale_count": "scale elements (per-channel)", "work_local_size": "scratch bytes (0: the call's)"}


@builtin
def quant(dst: LocalTensor, src: LocalTensor, scale: float, offset: float, count: int | None = None,
          temp_buffer: LocalTensor | None = None, reuse_source: bool = False,
          config: QuantConfig | None = None) -> None:
    """Per-tensor quantisation of ``src`` (float16/float32) to int8 ``dst`` (``AscendC::AscendQuant``)."""


DTYPES = {quant: (float16, float32)}
document_dtypes(DTYPES, note="; the source's, dst is int8")
QUANT_MIN_TMP = 512
document_temp_buffer(quant, "temp_buffer", "at least 512 bytes (CANN ``GetAscendQuantMaxMinTmpSize``: two 256-byte "
                                           "repeats); 32-byte aligned.")
