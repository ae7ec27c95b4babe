"""RmsNorm of the high-level API (``asc.adv.rmsnorm``; Ascend C ``RmsNorm``).

``src`` is ``[b, s, h]`` in UB (``h`` padded to 32 bytes, the padding zero),
``gamma`` is ``[h]``; for each of the ``b * s`` rows
``dst = src * gamma / sqrt(sum(src ** 2) / original_h + epsilon)``.  The
tiling comes from ``npuemu.host.adv_tiling.get_rms_norm_tiling_info``
(CANN's ``GetRmsNormTilingInfo``), computed for the scratch the kernel
passes.
"""
from __future__ import annotations

from .adv_tiling import RmsNormTiling
from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32

__all__ = ["rmsnorm"]


@builtin
def rmsnorm(dst: LocalTensor, src: LocalTensor, gamma: LocalTensor, epsilon: float | int, tiling: RmsNormTiling,
            temp_buffer: LocalTensor | None = None, basic_block: bool = False) -> None:
    """Root-mean-square normalisation of each row of ``src``, scaled by ``gamma`` (``AscendC::RmsNorm``).

    ``basic_block`` requires ``h % 64 == 0``, ``h < 2048`` and ``b * s % 8 == 0``.
    """


DTYPES = {rmsnorm: (float16, float32)}
document_dtypes(DTYPES)
document_temp_buffer(rmsnorm, "temp_buffer",
                     "``(main_bs_length * h_length * c + round_up(main_bs_length, 8)) * 4`` bytes with ``c`` = 2 "
                     "for float16 and 1 for float32 -- the size the tiling was computed for "
                     "(``get_rms_norm_max_min_tmp_size``: at least ``(h * c + 8) * 4``); 32-byte aligned.")
