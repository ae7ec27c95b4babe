"""SoftMax of the high-level API (``asc.adv.softmax``; Ascend C ``SoftMax``).

``src`` is ``[src_m, src_k]`` row-major in UB (ND; the last axis 32-byte
aligned); for each row ``max = max(row)``, ``e = exp(row - max)``,
``sum = sum(e)``, ``dst = e / sum``.  ``sum`` and ``max`` get each row's
value repeated over one 32-byte block (``tiling.reduce_k`` elements:
8 float32 or 16 float16), so they hold ``src_m * reduce_k`` elements.  The
tiling comes from ``npuemu.host.adv_tiling.softmax_tiling_func`` (CANN's
``SoftMaxTilingFunc``), computed for the scratch the kernel passes.
"""
from __future__ import annotations

from .adv_tiling import SoftmaxTiling
from .builtin import builtin, document_dtypes, document_temp_buffer
from .core import LocalTensor
from .dtype import float16, float32

__all__ = ["softmax"]


@builtin
def softmax(dst: LocalTensor, sum: LocalTensor, max: LocalTensor, src: LocalTensor, tiling: SoftmaxTiling,
            temp_buffer: LocalTensor | None = None, reuse_source: bool = False, basic_block: bool = False,
            data_format_nz: bool = False) -> None:
    """Row-wise softmax of ``src`` into ``dst``, with each row's sum and maximum (``AscendC::SoftMax``).

    ``sum`` and ``max`` have ``src``'s dtype, or float32 for float16 ``src``.
    ``reuse_source`` is reserved (no effect), as in Ascend C; ``basic_block``
    requires ``src_k % 64 == 0`` and ``split_m % 8 == 0``; ``data_format_nz``
    (NZ input) is not emulated and is refused at compile time.
    """


DTYPES = {softmax: (float16, float32)}
document_dtypes(DTYPES)
document_temp_buffer(softmax, "temp_buffer",
                     "``tiling.split_m * (tiling.reduce_k + tiling.src_k + 64) * 4`` bytes -- the size the tiling "
                     "was computed for (``get_softmax_min_tmp_size``: one row, "
                     "``(32 / dtype_size + src_k + 64) * 4``); 32-byte aligned.")
